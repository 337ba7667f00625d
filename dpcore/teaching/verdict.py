"""How to judge an ε: a plain verdict band, what the guarantee bounds, and published deployments to compare with.

ε-DP bounds how much any one output can change an observer's odds about any one person: by a factor of at most
e^ε (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014, §2.3). From even odds (a prior of 1/2 that a record
is in the data), an attacker's belief after seeing the output is therefore at most e^ε / (1 + e^ε) (Kasiviswanathan
& Smith 2014), and no membership test can have a true-positive rate above e^ε times its false-positive rate plus δ
(Kairouz, Oh & Viswanath 2015). These bounds give the bands:

======================  =================  ===================================================================
band                    ε                  what the guarantee alone says
======================  =================  ===================================================================
strong                  ε ≤ 1              odds change at most e ≈ 2.7-fold; a belief of 1/2 can reach 73 %
moderate                1 < ε ≤ 4          odds up to ~55-fold; 1/2 can reach 98 %
weak                    4 < ε ≤ 10         odds up to ~22,000-fold; the formal bound is loose, attacks in
                                           practice are often far weaker: audit the model
nominal                 ε > 10             the bound alone promises next to nothing; protection, if any, comes
                                           from what attacks can actually do
not private             ε = ∞              no guarantee at all
======================  =================  ===================================================================

The cut at 1 is the textbook "small constant" (Dwork & Roth 2014); 10 is where e^ε passes 22,000 and published
DP-SGD models stop (Abadi et al. 2016 report ε = 0.5, 2 and 8). The bands describe the bound, not a legal or
policy threshold: the deployments in :data:`DEPLOYMENTS` show the range organisations have published.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal, localcontext

from ..exceptions import DPValueError


@dataclass(frozen=True)
class Band:
    """One verdict band: ε up to ``upper`` (inclusive) is ``name``."""

    name: str
    upper: float
    headline: str
    #: a four-dot strength meter beside the words (plain glyphs: no colour needed, no emoji font either)
    icon: str


BANDS: tuple[Band, ...] = (
    Band("strong", 1.0, "Strong privacy", "●●●●"),
    Band("moderate", 4.0, "Moderate privacy", "●●●○"),
    Band("weak", 10.0, "Weak guarantee", "●●○○"),
    Band("nominal", math.inf, "Nominal guarantee only", "●○○○"),
)
NOT_PRIVATE = Band("not private", math.inf, "Not private", "○○○○")


@dataclass(frozen=True)
class Verdict:
    """What an ε means in words: its band, the odds factor e^ε and the belief an attacker can reach from 1/2."""

    epsilon: float
    band: Band
    odds_factor: float
    max_belief: float

    @property
    def name(self) -> str:
        return self.band.name

    def short(self) -> str:
        """The band alone, e.g. ``●●●● Strong privacy``, for under a number in a narrow column."""
        return f"{self.band.icon} {self.band.headline}"

    def sentence(self, subject: str = "anyone", delta: float = 0.0) -> str:
        """One line for beside the number: ``●●●● **Strong privacy** (ε ≤ 1): ... change at most 2.7×; ...``;
        ``subject``: what the odds are about (a learner that protects labels only: "any one record's label").

        ``delta``: the δ the ε is stated at, where the page knows it. The odds bound is exact for pure ε-DP only; an
        (ε, δ) guarantee bounds every set of outcomes' probability by e^ε times its neighbour's plus δ (Dwork & Roth
        2014, Definition 2.4), which the sentence then says. That is not "ε-DP except with probability δ": the
        outcomes where the ratio passes e^ε can be far more likely than δ (16 δ for the Gaussian mechanism at ε = 1,
        δ = 1e-5). What δ adds to a guess from even odds is bounded: no membership test is right more often than
        (e^ε + δ) / (1 + e^ε) (Kairouz, Oh & Viswanath 2015, Theorem 2.1: TPR - FPR ≤ (e^ε - 1 + 2δ) / (e^ε + 1)),
        the figure the sentence gives then, in place of the pure-ε posterior e^ε / (1 + e^ε)."""
        b = self.band
        if b is NOT_PRIVATE:
            return f"{b.icon} **{b.headline}**: no guarantee; the output may reveal anyone's record."
        rng = {"strong": "ε ≤ 1", "moderate": "1 < ε ≤ 4", "weak": "4 < ε ≤ 10", "nominal": "ε > 10"}[b.name]
        tail = {"strong": "", "moderate": "",
                "weak": " The bound is loose; real attacks often learn far less: audit the model.",
                "nominal": " The bound alone promises next to nothing; only an audit can say what is protected."}
        if delta > 0:  # (ε, δ): the ratio bound plus an additive δ, and a guess's success rate, not a posterior
            right = belief_text(_accuracy_up(self.epsilon, delta))
            right = ("can be right nearly always (the bound allows over 99.99 % of the time)"
                     if right.startswith("near") else f"is right at most {right} of the time")
            return (f"{b.icon} **{b.headline}** ({rng}): an attacker's odds about {subject} change at most "
                    f"{odds_factor(self.epsilon)}, up to an additive δ = {delta:.0e} in any outcome's probability "
                    f"(not: except with probability δ); a guess from even odds {right}.{tail[b.name]}")
        return (f"{b.icon} **{b.headline}** ({rng}): an attacker's odds about {subject} change at most "
                f"{odds_factor(self.epsilon)}; a 50 % guess can reach "
                f"{belief_text(_belief_up(self.epsilon))}.{tail[b.name]}")


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _ceil(x: "float | Decimal", decimals: int) -> Decimal:
    """``x`` rounded UP at ``decimals`` decimal places (decimal arithmetic on a float's shortest repr, as
    :func:`round_epsilon` does, or on a Decimal as it is)."""
    exact = x if isinstance(x, Decimal) else Decimal(repr(float(x)))
    with localcontext() as ctx:
        ctx.prec = max(ctx.prec, 60)
        return exact.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_CEILING)


#: Digits of the decimal arithmetic that bounds e^ε and the reachable belief (:func:`_exp_up`, :func:`_belief_up`).
_PREC = 50


def _exp_up(epsilon: float) -> Decimal:
    """An upper bound on e^ε, to about 1e-45 relative: decimal ``exp`` of the float's exact value (correctly rounded
    at 50 digits) moved up by a margin above that rounding. ``math.exp`` is not enough for a figure written as a
    bound: e^1e-10 in double precision is 1.0000000001, which rounds up to the "1.00000000010×" below the true
    1.000000000100000000005, and e^1e-20 is 1.0 exactly (the odds were written as not changing at all)."""
    with localcontext() as ctx:
        ctx.prec = _PREC
        return Decimal(float(epsilon)).exp() * (1 + Decimal(10) ** -45)


def _belief_up(epsilon: float) -> Decimal:
    """An upper bound on e^ε / (1 + e^ε), the belief a 50 % guess can reach (Kasiviswanathan & Smith 2014), in the
    decimal arithmetic of :func:`_exp_up`: in double precision it is 0.5 exactly for ε below about 1e-16, which
    :func:`belief_text` would write as a "50.0 %" below the true value."""
    if epsilon >= 700:
        return Decimal(1)
    with localcontext() as ctx:
        ctx.prec = _PREC
        return min(Decimal(1), (1 / (1 + Decimal(-float(epsilon)).exp())) * (1 + Decimal(10) ** -45))


def _accuracy_up(epsilon: float, delta: float) -> Decimal:
    """An upper bound on (e^ε + δ) / (1 + e^ε), the most often a membership guess from even odds can be right against
    an (ε, δ)-DP output (Kairouz, Oh & Viswanath 2015: TPR - FPR ≤ (e^ε - 1 + 2δ) / (e^ε + 1)), in the decimal
    arithmetic of :func:`_belief_up`."""
    if epsilon >= 700:
        return Decimal(1)
    with localcontext() as ctx:
        ctx.prec = _PREC
        e = Decimal(float(epsilon)).exp()
        return min(Decimal(1), (e + Decimal(float(delta))) / (1 + e) * (1 + Decimal(10) ** -45))


def odds_factor(epsilon: float) -> str:
    """e^ε as a readable factor (``10⁴²⁷×`` where it would overflow a float); every page's verdict and warning
    writes it this way. It is written as an upper bound ("odds change at most ..."), so it is rounded UP: e^1 is
    2.72×, not a 2.7× the odds can exceed.

    >>> [odds_factor(e) for e in (0.001, 0.05, 1.0, 3.0, 5.0, 10.5, 14.0)]
    ['1.0011×', '1.0513×', '2.72×', '20.1×', '149×', '36,316×', '10⁷×']
    >>> odds_factor(1e-300)
    '1.000000000000000000000000000001×'
    """
    if epsilon > 13.8:  # 10 with a raised exponent (10⁹×), as printed in a textbook, not a programmer's 10^9
        with localcontext() as ctx:  # the exponent n with 10^n >= e^ε, rounded up in decimal (a float quotient can
            ctx.prec = _PREC  # land on a whole number from just above it)
            exponent = (Decimal(float(epsilon)) / Decimal(10).ln() * (1 + Decimal(10) ** -45)).to_integral_value(
                rounding=ROUND_CEILING)
        return "10" + f"{exponent:f}".translate(_SUPERSCRIPT) + "×"
    if epsilon <= 0:
        return "1×"
    x = _exp_up(epsilon)
    if x < Decimal("1.1"):  # a small ε: "1×" would read as no change at all, so enough decimals to show it
        # at most 30 decimals: from ε about 1e-29 the factor reads 1.000…001×, still above e^ε (rounded up); at
        # ε = 1e-300 the 301 decimals asked for overflowed the decimal context (InvalidOperation)
        decimals = min(max(3, math.ceil(-math.log10(epsilon))) + 1, 30)
        return f"{_ceil(x, decimals):.{decimals}f}×"
    if x < 10:
        return f"{_ceil(x, 2):.2f}×"
    if x < 100:
        return f"{_ceil(x, 1):.1f}×"
    return f"{_ceil(x, 0):,.0f}×"


#: Relative tolerance under which an ε is taken to be the figure it is shown as, before :func:`round_epsilon` rounds
#: up: a calibrated run whose ε is 2.0000000000004 (floating noise of a root-finder or an accountant) shows "2", not
#: "2.01". 1e-9 is far below any accountant's own error (dp_accounting's RDP conversion and PLD discretisation are
#: off by far more), so no ε that truly exceeds its shown figure hides under it.
EPSILON_TOLERANCE = 1e-9


def round_epsilon(epsilon: float, digits: int = 3, *, lower_bound: bool = False) -> float:
    """``epsilon`` rounded to ``digits`` significant figures the side that fails closed: UP for an ε spent or
    guaranteed (the project's standard: a privacy number is never shown smaller than computed), DOWN for a
    ``lower_bound`` (an audit's proven ε: rounding it up would overstate what the attack proved). The one place the
    shown ε is rounded: :func:`epsilon_text`, ``dpcore.ui.format_epsilon`` and the tables' ε columns call it.

    Rounding up first takes a value within a relative :data:`EPSILON_TOLERANCE` (1e-9) of its nearest
    ``digits``-figure number as that number (floating noise must not turn an exact 2 into 2.01); a lower bound is
    rounded down with no tolerance (showing 1.99 for a bound of 1.9999999999 fails closed). The arithmetic is decimal,
    on the shortest decimal that reads back as the float (``repr``): the shown figure, read back as a float, is never
    below the computed float (never above it for a lower bound), no binary rounding moves a figure the wrong way, and
    rounding again changes nothing (a table re-rounding 3.34, stored as 3.33999..., keeps 3.34, not 3.339). ∞ stays ∞
    and 0 stays 0; the shown figure, parsed, is the float returned.

    >>> [round_epsilon(e) for e in (1.2341, 1.2349, 0.31601, 2390.4, 999.6, 0.9999995, 2.0000000000004, 8.0)]
    [1.24, 1.24, 0.317, 2400.0, 1000.0, 1.0, 2.0, 8.0]
    >>> [round_epsilon(e, lower_bound=True) for e in (1.2349, 0.31699, 2399.9, 1.9999999999)]
    [1.23, 0.316, 2390.0, 1.99]
    >>> round_epsilon(6.03125, 4), round_epsilon(float("inf")), round_epsilon(3.34, 4, lower_bound=True)
    (6.032, inf, 3.34)
    """
    x = float(epsilon)
    if not math.isfinite(x) or x == 0:
        return x if x else 0.0  # -0.0 (an underflowed bound) reads "0", not "-0"
    exact = Decimal(repr(x))
    quantum = Decimal(1).scaleb(exact.adjusted() - digits + 1)
    if not lower_bound:
        nearest = exact.quantize(quantum, rounding=ROUND_HALF_EVEN)
        if abs(nearest - exact) <= Decimal(EPSILON_TOLERANCE) * abs(exact):
            return float(nearest)
    return float(exact.quantize(quantum, rounding=ROUND_FLOOR if lower_bound else ROUND_CEILING))


def epsilon_text(epsilon: float, *, infinity: str = "∞", digits: int = 3, lower_bound: bool = False) -> str:
    """An ε as text: ``digits`` (3) significant figures rounded UP by :func:`round_epsilon` (down for a
    ``lower_bound``), thousands separated, so that a large ε reads "9,000", not "9e+03" (which a student reads as 9);
    small values as ``:g`` writes them; ``infinity`` for an infinite one. The one wording of an ε for every page, note
    and label (:func:`dpcore.sweep.summary.spent_text` and ``dpcore.ui.format_epsilon`` use it).

    >>> [epsilon_text(e) for e in (9000.0, 2390.4, 1234567.0, 983.2, 4.5, 0.31623, float("inf"))]
    ['9,000', '2,400', '1,240,000', '984', '4.5', '0.317', '∞']
    >>> epsilon_text(2.0000000000004), epsilon_text(0.31699, lower_bound=True), epsilon_text(6.03125, digits=4)
    ('2', '0.316', '6.032')
    >>> epsilon_text(1713.1222, digits=6), epsilon_text(1713.1, digits=6), epsilon_text(1713.1222, digits=4)
    ('1,713.13', '1,713.1', '1,714')
    >>> epsilon_text(float("nan")), epsilon_text(float("nan"), lower_bound=True)  # not known: no guarantee, no proof
    ('∞', '0')
    """
    if math.isnan(epsilon):  # an ε not known: no guarantee (infinity), and proof of nothing for a lower bound
        return "0" if lower_bound else infinity
    if math.isinf(epsilon):
        return infinity if epsilon > 0 else "-" + infinity
    rounded = round_epsilon(epsilon, digits, lower_bound=lower_bound)
    if abs(rounded) < 1000:
        return f"{rounded:.{max(digits, 6)}g}"
    # the figures after the point that ``digits`` keeps: dropped, 1713.13 (six figures of 1713.1222) read "1,713"
    text = f"{rounded:,.{max(0, digits - len(str(int(abs(rounded)))))}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def confidence_text(confidence: float) -> str:
    """A confidence level (an audit's, a prediction bound's) as a percentage rounded DOWN, with the decimals it holds
    (up to six): ``:.0%`` wrote 0.999 as "100%", a certainty no bound has, and 0.975 as "98%", more than was asked.

    A difference of floating point noise from a short decimal is that decimal (``2 * 0.95 - 1`` is 0.8999999999999999:
    "90%"), never 100 % for a level below it.

    >>> [confidence_text(c) for c in (0.95, 0.9, 0.975, 0.999, 0.999999999, 0.5, 2 * 0.95 - 1, 1 - 1e-13)]
    ['95%', '90%', '97.5%', '99.9%', '99.999999%', '50%', '90%', '99.999999%']
    """
    c = float(confidence)
    tidy = round(c, 12)
    percent = Decimal(repr(c if tidy >= 1 > c else tidy)) * 100
    decimals = min(max(-percent.normalize().as_tuple().exponent, 0), 6)
    shown = percent.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_FLOOR)
    return f"{shown:f}%"


def belief_text(p: "float | Decimal") -> str:
    """The belief a 50 % guess can reach, as a percentage rounded UP (it is a bound: "can reach 73.2 %", never a
    73 % the belief can pass), with one decimal, two above 99.5 %, more when ε is so small that the belief is
    within a tenth of a point of 50 %. ``p`` a float, or a Decimal bound (:func:`_belief_up`), read exactly.

    >>> belief_text(_belief_up(1.0)), belief_text(_belief_up(1e-16)), belief_text(0.5)
    ('73.2 %', '50.0001 %', '50.0 %')
    >>> belief_text(_belief_up(1e-300))  # above one half, however little: never the "50.0 %" of no change
    '50.0001 %'
    """
    exact = p if isinstance(p, Decimal) else Decimal(float(p))
    if exact >= 1 - Decimal("1e-4"):
        return "near-certainty (over 99.99 %)"
    with localcontext() as ctx:  # exactly: in the default 28 digits, 0.5 + 5e-46 (ε = 1e-300) read as 50 %, below it
        ctx.prec = _PREC + 10
        percent = 100 * exact
    if exact >= Decimal("0.995"):
        return f"{_ceil(percent, 2):.2f} %"
    digits = 1  # a small ε moves a 50 % guess a little: 50.03 %, not a "50 %" that reads as no change at all
    while percent.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_EVEN) <= 50 < percent and digits < 4:
        digits += 1
    return f"{_ceil(percent, digits):.{digits}f} %"


def verdict(epsilon: float) -> Verdict:
    """The band of ``epsilon`` and what it bounds. ``inf`` is "not private"; a negative or NaN ε is refused.

    >>> [verdict(e).name for e in (0.1, 1, 8, 983, float("inf"))]
    ['strong', 'strong', 'weak', 'nominal', 'not private']
    """
    try:
        eps = float(epsilon)
    except (TypeError, ValueError):
        raise DPValueError(f"epsilon must be a number, got {epsilon!r}") from None
    if math.isnan(eps) or eps < 0:
        raise DPValueError(f"epsilon must be ≥ 0 (or inf for a non-private result), got {epsilon!r}")
    if math.isinf(eps):
        return Verdict(eps, NOT_PRIVATE, math.inf, 1.0)
    # banded as shown (round_epsilon): an accountant's 1.0000000000000002 for a mechanism calibrated to exactly 1 (a
    # randomized response event's noise rounded down to a double) reads "ε = 1", and "Moderate (1 < ε ≤ 4)" beside it
    band = next(b for b in BANDS if eps <= b.upper * (1 + EPSILON_TOLERANCE))
    odds = math.exp(eps) if eps < 700 else math.inf
    belief = 1.0 / (1.0 + math.exp(-eps)) if eps < 700 else 1.0
    return Verdict(eps, band, odds, belief)


@dataclass(frozen=True)
class Deployment:
    """A published use of differential privacy with its stated ε and where it is stated."""

    who: str
    what: str
    epsilon: float
    unit: str
    source: str
    #: a few words for the one-line comparison under an ε
    short: str


#: Published deployments and results, smallest ε first. Each ε is as its source states it, for the unit named:
#: a per-day ε composes over days, a whole-release ε does not, so read the unit before comparing.
DEPLOYMENTS: tuple[Deployment, ...] = (
    Deployment("Abadi et al.", "DP-SGD on MNIST, 90 % test accuracy", 0.5, "per training example, δ = 10⁻⁵",
               "Abadi et al. 2016, Deep learning with differential privacy (MNIST results)",
               "Abadi 2016's DP-SGD on MNIST at 90 % accuracy"),
    Deployment("Google", "COVID-19 symptom search trends", 1.68, "per user per day",
               "Bavadekar et al. 2020, arXiv:2009.01265", "Google's symptom search trends, per user-day"),
    Deployment("Abadi et al.", "DP-SGD on MNIST, 95 % test accuracy", 2.0, "per training example, δ = 10⁻⁵",
               "Abadi et al. 2016 (MNIST results)", "Abadi 2016's DP-SGD on MNIST at 95 % accuracy"),
    Deployment("Google", "COVID-19 vaccination search insights", 2.19, "per user per day, δ = 10⁻⁵",
               "Bavadekar et al. 2021, arXiv:2107.01179", "Google's vaccination search insights, per user-day"),
    Deployment("US Census Bureau", "2020 Census redistricting data, housing units", 2.47, "whole release, δ = 10⁻¹⁰",
               "US Census Bureau 2021, privacy-loss budget of the 2020 redistricting data (zCDP ρ = 0.07)",
               "US Census 2020 housing-unit data"),
    Deployment("Apple", "emoji suggestions (local DP)", 4.0, "per submission from a device",
               "Apple Differential Privacy Team 2017, Differential Privacy Overview", "Apple's emoji statistics"),
    Deployment("Abadi et al.", "DP-SGD on MNIST, 97 % test accuracy", 8.0, "per training example, δ = 10⁻⁵",
               "Abadi et al. 2016 (MNIST results)", "Abadi 2016's DP-SGD on MNIST at 97 % accuracy"),
    Deployment("Apple", "QuickType keyboard words (local DP)", 8.0, "per submission from a device",
               "Apple Differential Privacy Team 2017, Differential Privacy Overview", "Apple's QuickType words"),
    Deployment("US Census Bureau", "OnTheMap commuting data", 8.6, "whole release, δ = 10⁻⁵",
               "Machanavajjhala et al. 2008, Privacy: theory meets practice on the map", "US Census OnTheMap"),
    Deployment("US Census Bureau", "2020 Census redistricting data, persons", 17.14, "whole release, δ = 10⁻¹⁰",
               "US Census Bureau 2021, privacy-loss budget of the 2020 redistricting data (zCDP ρ = 2.63)",
               "US Census 2020 persons data"),
)


def neighbours(epsilon: float, k: int = 1) -> tuple[list[Deployment], list[Deployment]]:
    """Up to ``k`` deployments at or just below ``epsilon`` and ``k`` just above it, nearest first."""
    below = [d for d in DEPLOYMENTS if d.epsilon <= epsilon]
    above = [d for d in DEPLOYMENTS if d.epsilon > epsilon]
    return below[::-1][:k], above[:k]


#: Why each accountant's ε can be exactly 0 for finite noise: the Rényi conversion's, and the privacy loss
#: distribution's smallest ε whose hockey-stick divergence is at most δ (dp_accounting's get_epsilon_for_delta),
#: which is 0 once the divergence at ε = 0, the total variation distance between the two outputs, is.
_ZERO_BECAUSE = {"rdp": "the Rényi conversion gives exactly 0 once the Rényi divergence falls below δ²",
                 "pld": "the privacy loss distribution gives exactly 0 once the total variation distance between the "
                        "outputs, its δ at ε = 0, is at most δ"}


def zero_epsilon_note(accountant: str | None = None) -> str:
    """Why an ε of exactly 0 for finite noise is a (0, δ) guarantee, with the reason of ``accountant`` ("rdp" or
    "pld"; None: where the accountant is not known here, both)."""
    because = _ZERO_BECAUSE.get(accountant) or "; ".join(_ZERO_BECAUSE.values())
    return ("ε = 0 here is a (0, δ) guarantee, not perfect privacy: the noise is so large that the outputs with and "
            f"without any one record differ by at most δ in probability ({because}).")


#: Why an accountant's ε can be exactly 0 for finite noise (pages and the command line say it in these words).
ZERO_EPSILON = zero_epsilon_note()


def comparison(epsilon: float) -> str:
    """One line placing ``epsilon`` between the nearest published deployments (their units differ: see the list), in
    words rather than a chain of inequalities.

    >>> comparison(3.0)
    "For scale: ε = 3 lies between two published deployments, US Census 2020 housing-unit data (ε 2.47) and Apple's \
emoji statistics (ε 4)."
    """
    if math.isinf(epsilon):
        return "Every published deployment states a finite ε; a non-private result has none."
    # placed by the value as shown: a calibrated 3.9999999 reads "at or above ... (ε 4)", never "below ... (ε 4)"
    shown = epsilon_text(epsilon)
    below, above = neighbours(round_epsilon(epsilon))
    if not below:
        return (f"For scale: ε = {shown} is below every published deployment listed (the smallest: "
                f"{above[0].short}, ε {above[0].epsilon:g}).")
    if not above:
        return (f"For scale: ε = {shown} is above every published deployment listed (the largest: "
                f"{below[0].short}, ε {below[0].epsilon:g}).")
    if below[0].epsilon == round_epsilon(epsilon):
        return (f"For scale: ε = {shown} is the ε of a published deployment, {below[0].short}; the next one above is "
                f"{above[0].short} (ε {above[0].epsilon:g}).")
    return (f"For scale: ε = {shown} lies between two published deployments, {below[0].short} "
            f"(ε {below[0].epsilon:g}) and {above[0].short} (ε {above[0].epsilon:g}).")
