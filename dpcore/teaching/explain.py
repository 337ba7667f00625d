"""The "what epsilon means" explainer behind the home page: two neighbouring databases and a count query.

Two databases D and D' differ in one person's record; a count query answered
through Laplace or Gaussian noise has output densities p_D and p_D' whose ratio
(the privacy loss) stays within e^epsilon (Laplace), or exceeds it on a set S
where Pr_D[S] - e^epsilon Pr_D'[S] <= delta (Gaussian).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..defaults import DELTA
from ..exceptions import DPValueError
from ..mechanisms import Gaussian, Laplace
from ..rng import as_generator
from ..validation import check_delta, check_epsilon, check_positive

_PEOPLE = ["Ross", "Monica", "Joey", "Phoebe", "Chandler"]


def neighbouring_databases() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Five friends; D and D' differ only in Chandler's diabetes status."""
    d = pd.DataFrame({"Name": _PEOPLE, "Has diabetes": [1, 1, 0, 0, 1]})
    d2 = d.copy()
    d2.loc[d2.Name == "Chandler", "Has diabetes"] = 0
    return d, d2


def _mechanism(mechanism: str, *, epsilon: float, delta: float, sensitivity: float):
    if mechanism == "laplace":
        return Laplace(epsilon=epsilon, sensitivity=sensitivity)
    if mechanism == "gaussian":
        return Gaussian(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    raise DPValueError(f"mechanism must be 'laplace' or 'gaussian', got {mechanism!r}")


def count_query_densities(
    *, mechanism: str, epsilon: float, delta: float = DELTA, sensitivity: float = 1.0,
    count_d: float = 3.0, count_d2: float = 2.0, points: int = 801,
) -> tuple[pd.DataFrame, dict]:
    """Densities of the noisy count on D and D', and the privacy-loss ratio between them.

    Returns a DataFrame (``x, density_D, density_D2, log_ratio``) and a summary
    dict: ``noise_scale`` (Laplace b or Gaussian sigma), ``max_abs_log_ratio``
    on the plotted range, ``e_epsilon``, ``mass_above`` = Pr_D[S] for the set S of
    outputs where the loss exceeds epsilon (0 for Laplace), and ``delta_actual`` =
    Pr_D[S] - e^epsilon Pr_D'[S], the hockey-stick divergence, which is what
    (epsilon, delta)-DP bounds by delta (Balle & Wang 2018).
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive(sensitivity, "sensitivity")
    if mechanism == "gaussian":
        delta = check_delta(delta, allow_zero=False)
    if abs(count_d - count_d2) > sensitivity + 1e-12:
        raise DPValueError(
            f"the two counts differ by {abs(count_d - count_d2)}, more than the sensitivity {sensitivity}: "
            "the guarantee only covers neighbours within the sensitivity"
        )
    mech = _mechanism(mechanism, epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    scale = mech.scale if mechanism == "laplace" else mech.sigma
    lo, hi = min(count_d, count_d2) - 6 * scale, max(count_d, count_d2) + 6 * scale
    x = np.linspace(lo, hi, points)
    p1, p2 = mech.density(x, count_d), mech.density(x, count_d2)
    if mechanism == "laplace":
        log_ratio = (np.abs(x - count_d2) - np.abs(x - count_d)) / scale
        mass_above = delta_actual = 0.0
    else:
        log_ratio = ((x - count_d2) ** 2 - (x - count_d) ** 2) / (2 * scale**2)
        # loss > eps  <=>  x beyond a threshold on the side of count_d
        diff = count_d - count_d2
        if diff == 0:
            mass_above = delta_actual = 0.0
        else:
            from scipy.stats import norm

            # log ratio is linear in x: (diff/s^2)(x - mid); solve for x where it equals epsilon
            mid = (count_d + count_d2) / 2
            t = mid + epsilon * scale**2 / diff
            if diff > 0:
                mass_above, mass_above_2 = float(norm.sf(t, count_d, scale)), float(norm.sf(t, count_d2, scale))
            else:
                mass_above, mass_above_2 = float(norm.cdf(t, count_d, scale)), float(norm.cdf(t, count_d2, scale))
            delta_actual = max(0.0, mass_above - math.exp(epsilon) * mass_above_2)
    df = pd.DataFrame({"x": x, "density_D": p1, "density_D2": p2, "log_ratio": log_ratio})
    summary = {
        "noise_scale": float(scale),
        "max_abs_log_ratio": float(np.max(np.abs(log_ratio))),
        "epsilon": epsilon,
        "e_epsilon": math.exp(epsilon),
        "mass_above": mass_above,
        "delta_actual": delta_actual,
    }
    return df, summary


def noisy_count(*, mechanism: str, epsilon: float, delta: float = DELTA, sensitivity: float = 1.0,
                true_count: float, seed=None) -> float:
    """One noisy answer to the count query (seeded for demonstration)."""
    mech = _mechanism(mechanism, epsilon=check_epsilon(epsilon), delta=delta, sensitivity=sensitivity)
    return float(mech.randomise(true_count, rng=as_generator(seed)))


def repeated_answers(*, mechanism: str, epsilon: float, delta: float = DELTA, sensitivity: float = 1.0,
                     true_count: float, asks: int, budget: float | None = None, seed=None) -> pd.DataFrame:
    """Ask the same count ``asks`` times: each noisy answer, their running mean, and the epsilon spent so far.

    Averaging k answers shrinks the noise by sqrt(k), so the mean closes in on the exact
    count; that is why every answer is charged. The epsilon column comes from a
    :class:`~dpcore.accounting.PrivacyLedger` composing the answers' dp_accounting events
    (basic composition k * epsilon for Laplace, the RDP accountant at ``delta`` for the
    Gaussian: Dwork & Roth 2014, section 3.5). With a ``budget`` the ledger refuses the
    answer that would pass it, and that answer and all later ones are not released
    (``released`` False, no value).

    Examples
    --------
    >>> t = repeated_answers(mechanism="laplace", epsilon=0.5, true_count=3, asks=4, budget=1.0, seed=0)
    >>> t["epsilon"].tolist(), t["released"].tolist()
    ([0.5, 1.0, 1.0, 1.0], [True, True, False, False])
    """
    from ..accounting import PrivacyLedger
    from ..exceptions import BudgetExceededError
    from ..validation import check_int

    epsilon = check_epsilon(epsilon)
    asks = check_int(asks, "asks", minimum=1, maximum=100_000)
    mech = _mechanism(mechanism, epsilon=epsilon, delta=delta, sensitivity=check_positive(sensitivity, "sensitivity"))
    ledger = PrivacyLedger(delta=0.0 if mechanism == "laplace" else check_delta(delta, allow_zero=False),
                           budget=budget)
    draws = np.asarray(mech.randomise(np.full(asks, float(true_count)), rng=as_generator(seed)), dtype=float)
    rows, total, released = [], 0.0, 0
    for i, value in enumerate(draws, start=1):
        try:
            spent = ledger.spend(mech.dp_event)
        except BudgetExceededError:
            spent, value = ledger.epsilon, math.nan
        ok = not math.isnan(value)
        if ok:
            total, released = total + value, released + 1
        rows.append({"ask": i, "answer": value, "released": ok,
                     "running_mean": total / released if released else math.nan, "epsilon": spent})
    return pd.DataFrame(rows)


def averaging_text(answers: pd.DataFrame, *, mechanism: str, epsilon: float, delta: float = DELTA,
                   sensitivity: float = 1.0, true_count: float, budget: float | None = None) -> str:
    """What the home page says under :func:`repeated_answers`' charts (markdown): how close the mean of the released
    answers came to ``true_count``, and why every answer is charged.

    The mean of k answers misses the count by about the noise's standard deviation over sqrt(k). Where that is a
    person or more (a small ε, or a budget that let few answers through), the text says the answers were too few to
    close in, with that typical miss, instead of claiming it beside a mean far from the count: at ε 0.05 and a
    budget of 0.1 it read "the mean of many answers closes in on the exact count (-11.84 after 2 answers, against 3)".

    >>> t = repeated_answers(mechanism="laplace", epsilon=0.05, true_count=3, asks=10, budget=0.1, seed=0)
    >>> "too few to close in" in averaging_text(t, mechanism="laplace", epsilon=0.05, true_count=3, budget=0.1)
    True
    """
    released = answers[answers.released]
    refused = int((~answers.released).sum())
    if released.empty:  # a budget below one ask's ε: nothing released, nothing to average
        return (f"**No answer released:** the first alone would spend more than the budget of {budget:g}, so all "
                f"{refused} asks were refused. Raise the budget, or lower ε (what each ask costs), to see the answers "
                "average out.")
    k = len(released)
    mean = float(released.running_mean.iloc[-1])
    spread = math.sqrt(_mechanism(mechanism, epsilon=epsilon, delta=delta, sensitivity=sensitivity).variance())
    miss = spread / math.sqrt(k)
    said = f"{mean:.2f} after {k} answer{'s' if k > 1 else ''}, against {true_count:g}"
    if miss >= 1.0:
        text = (f"Each answer is noisy, and the mean of k answers typically misses the exact count by the noise's "
                f"spread over √k: here **{k} answer{'s were' if k > 1 else ' was'} too few to close in** ({said}; "
                f"a typical miss of {miss:.2g} people). With many answers the mean does close in, which is why every "
                "answer is charged")
    else:
        text = (f"Each answer is noisy, but **the mean of many answers closes in on the exact count** ({said}). That "
                "is why every answer is charged")
    return (text + ": the accountant's ε grows with every ask"
            + (" (k·ε for Laplace)" if mechanism == "laplace" else " (for the Gaussian, the RDP accountant's bound: a "
               "little above ε for one ask, as its conversion to (ε, δ) is not exact, then growing more slowly than "
               "k·ε)") + "."
            + (f" **{refused} answer(s) refused**: they would have passed the budget of {budget:g}." if refused
               else ""))


def posterior_bound(prior, *, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """The range an attacker's belief can reach after one epsilon-DP release, from a prior ``prior``.

    Whatever the output, the likelihood ratio between "Chandler has diabetes" and "he does
    not" is within [e^-epsilon, e^epsilon], so Bayes' rule bounds the posterior by
    e^epsilon p / (e^epsilon p + 1 - p) above and p / (p + e^epsilon (1 - p)) below
    (Kasiviswanathan & Smith 2014, "On the 'semantics' of differential privacy").

    >>> low, high = posterior_bound(0.5, epsilon=math.log(3))
    >>> round(float(low), 12), round(float(high), 12)
    (0.25, 0.75)
    """
    epsilon = check_epsilon(epsilon)
    p = np.asarray(prior, dtype=float)
    if np.any((p < 0) | (p > 1)):
        raise DPValueError("prior must be a probability in [0, 1]")
    e = math.exp(min(epsilon, 700.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        high = np.where(p > 0, e * p / (e * p + 1 - p), 0.0)
        low = np.where(p < 1, p / (p + e * (1 - p)), 1.0)
    return low, high
