"""The secure mechanisms' integer noise is accounted as what it is: a PLD ledger composes the discrete Gaussian's and
the discrete Laplace's own privacy loss distributions, checked against their exact composition computed here by
convolving the privacy loss on its lattice; the continuous ones understate their delta on a coarse grid."""
from __future__ import annotations

import math
import warnings

import dp_accounting
import numpy as np
import pytest

from dpcore.accounting import epsilon_of_event
from dpcore.accounting.events import DiscreteGaussianDpEvent, event_from_json, event_to_json
from dpcore.exceptions import DPCoreWarning, DPValueError
from dpcore.mechanisms import SecureGaussian, SecureLaplace


def _delta_of_loss(losses: np.ndarray, probs: np.ndarray, epsilon: float) -> float:
    """delta(epsilon) = E[(1 - e^(epsilon - L))_+] for the privacy loss L with values ``losses`` and probabilities
    ``probs`` (Balle et al. 2018's hockey-stick divergence written through the privacy loss)."""
    return float(np.sum(probs * np.clip(-np.expm1(epsilon - losses), 0.0, None)))


def _discrete_gaussian_delta(sigma: float, sensitivity: int, uses: int, epsilon: float) -> float:
    """Exact delta of ``uses`` discrete Gaussians N_Z(0, sigma^2) on answers 0 and ``sensitivity``: with y ~ N_Z(0,
    sigma^2), the loss log P(y)/Q(y) = (D^2 - 2 D y) / (2 sigma^2) is linear in y, so the composed loss is that of
    the sum of the draws, whose law is the ``uses``-fold convolution of the noise's."""
    reach = int(math.ceil(40 * sigma)) + 1
    z = np.arange(-reach, reach + 1)
    p = np.exp(-z.astype(float) ** 2 / (2 * sigma**2))
    p /= p.sum()
    total = np.array([1.0])
    for _ in range(uses):
        total = np.convolve(total, p)
    s = np.arange(-reach * uses, reach * uses + 1)
    return _delta_of_loss((uses * sensitivity**2 - 2.0 * sensitivity * s) / (2 * sigma**2), total, epsilon)


def _discrete_laplace_delta(a: float, sensitivity: int, uses: int, epsilon: float) -> float:
    """Exact delta of ``uses`` discrete Laplaces (P[z] ∝ exp(-a |z|)) on answers 0 and ``sensitivity``: the loss
    a (|y - D| - |y|) is a times an integer in [-D, D], so the composed loss lives on that lattice, convolved."""
    reach = int(math.ceil(80 / a)) + sensitivity
    y = np.arange(-reach, reach + 1)
    p = np.exp(-a * np.abs(y).astype(float))
    p /= p.sum()
    steps = np.abs(y - sensitivity) - np.abs(y)  # integers from -D to D
    one = np.zeros(2 * sensitivity + 1)
    np.add.at(one, steps + sensitivity, p)
    total = np.array([1.0])
    for _ in range(uses):
        total = np.convolve(total, one)
    values = a * np.arange(-sensitivity * uses, sensitivity * uses + 1)
    return _delta_of_loss(values, total, epsilon)


@pytest.mark.parametrize("epsilon,granularity,uses", [(8.0, 1.0, 1), (8.0, 1.0, 10), (4.0, 0.5, 1)])
def test_a_pld_ledger_never_states_less_than_the_discrete_gaussians_exact_epsilon(epsilon, granularity, uses):
    m = SecureGaussian(epsilon=epsilon, delta=1e-5, sensitivity=1.0, granularity=granularity)
    sigma, d = float(m.sigma_steps), m.grid_sensitivity
    target = epsilon * uses**0.5 * 1.1  # an epsilon near what the composition spends
    delta = _discrete_gaussian_delta(sigma, d, uses, target)
    assert 1e-9 < delta < 0.5
    event = dp_accounting.SelfComposedDpEvent(m.dp_event, uses) if uses > 1 else m.dp_event
    stated = epsilon_of_event(event, delta=delta, accountant="pld")
    # the continuous Gaussian of the same sigma read 7.885 for 8 (one use on a grid of 1): below the truth
    assert stated >= target * (1 - 1e-9)
    assert stated <= target + 0.02  # and as tight as PLD is: not a far looser bound in disguise
    if uses == 1:
        assert m.delta_exact <= 1e-5 and epsilon_of_event(event, delta=m.delta_exact, accountant="pld") >= epsilon


def test_a_pld_ledger_never_states_less_than_the_discrete_laplaces_exact_epsilon():
    m = SecureLaplace(epsilon=2.0, sensitivity=1.0, granularity=1.0)  # two grid steps apart, a = 1
    a, d = 1 / float(m.grid_scale), m.grid_sensitivity
    for uses, target in ((20, 39.5), (5, 9.0)):
        delta = _discrete_laplace_delta(a, d, uses, target)
        assert 1e-9 < delta < 0.5
        stated = epsilon_of_event(dp_accounting.SelfComposedDpEvent(m.dp_event, uses), delta=delta,
                                  accountant="pld")
        assert target * (1 - 1e-9) <= stated <= target + 0.02, uses  # the continuous Laplace read 39.1 at 1e-5
    # at delta 0 every accountant states the pure epsilon, summed: never below 20 x 2
    for accountant in ("rdp", "pld"):
        assert epsilon_of_event(dp_accounting.SelfComposedDpEvent(m.dp_event, 20), delta=0.0,
                                accountant=accountant) >= 40.0


def test_the_rdp_accountant_reads_the_discrete_gaussian_by_the_continuous_curve_that_bounds_it():
    e = DiscreteGaussianDpEvent.of(sigma=3.0, sensitivity=2)
    assert e.noise_multiplier == 1.5
    for uses in (1, 50):
        ours = epsilon_of_event(dp_accounting.SelfComposedDpEvent(e, uses), delta=1e-6, accountant="rdp")
        continuous = epsilon_of_event(dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(1.5), uses),
                                      delta=1e-6, accountant="rdp")
        assert ours == continuous
    # the discrete Laplace has no RDP curve in dp_accounting: an RDP ledger composes it by its pure epsilon
    lap = SecureLaplace(epsilon=0.5, sensitivity=1.0, granularity=0.25)
    assert epsilon_of_event(dp_accounting.SelfComposedDpEvent(lap.dp_event, 8), delta=1e-5, accountant="rdp") >= 4.0


def test_what_the_pld_accountant_cannot_build_for_a_discrete_gaussian_goes_to_rdp_and_says_so():
    sampled = dp_accounting.PoissonSampledDpEvent(0.1, DiscreteGaussianDpEvent.of(sigma=1.5, sensitivity=1))
    with pytest.warns(DPCoreWarning, match="sampled discrete Gaussian"):
        got = epsilon_of_event(sampled, delta=1e-5, accountant="pld")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert got == epsilon_of_event(sampled, delta=1e-5, accountant="rdp")
    wide = SecureGaussian(epsilon=0.01, delta=1e-5, sensitivity=1.0)  # sigma of about 250,000 grid steps
    with pytest.warns(DPCoreWarning, match="discrete Gaussian's distribution integer by integer"):
        got = epsilon_of_event(wide.dp_event, delta=1e-5, accountant="pld")
    assert got >= 0.01


def test_a_discrete_gaussian_event_is_stored_and_read_back_and_refuses_a_noise_it_does_not_have():
    e = SecureGaussian(epsilon=1.0, delta=1e-5, granularity=0.5).dp_event
    assert isinstance(e, DiscreteGaussianDpEvent)
    assert event_from_json(event_to_json(e)) == e
    assert float(e.noise_multiplier) <= e.sigma / e.sensitivity
    with pytest.raises(DPValueError, match="at most sigma / sensitivity"):
        DiscreteGaussianDpEvent(noise_multiplier=2.0, sigma=3.0, sensitivity=2)
    with pytest.raises(DPValueError, match="integer sensitivity"):
        DiscreteGaussianDpEvent.of(sigma=3.0, sensitivity=0)
    with pytest.raises(DPValueError, match="noise_parameter"):
        epsilon_of_event(dp_accounting.dp_event.DiscreteLaplaceDpEvent(noise_parameter=float("nan"), sensitivity=1),
                         delta=0.0)


def test_a_discrete_laplace_too_wide_or_too_often_for_a_pld_is_composed_by_its_pure_epsilon_and_says_so():
    # its PLD spans every integer loss up to the composed epsilon: 10^7 uses at parameter 0.5 asked numpy for 298 GB
    for a, uses in ((0.5, 10**7), (1e300, 10**9), (1e-300, 10**9)):
        event = dp_accounting.SelfComposedDpEvent(
            dp_accounting.dp_event.DiscreteLaplaceDpEvent(noise_parameter=a, sensitivity=3), uses)
        with pytest.warns(DPCoreWarning, match="basic composition, a valid upper bound"):
            got = epsilon_of_event(event, delta=1e-5, accountant="pld")
        assert got >= uses * 3 * a  # never below the pure epsilons added up (inf past the largest double)
    small = dp_accounting.SelfComposedDpEvent(
        dp_accounting.dp_event.DiscreteLaplaceDpEvent(noise_parameter=0.5, sensitivity=3), 100)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DPCoreWarning)
        assert epsilon_of_event(small, delta=1e-5, accountant="pld") < 150  # its own PLD, tighter than 100 x 1.5


def test_pure_epsilons_past_the_largest_double_add_up_to_infinity_not_an_error():
    from dpcore.accounting.composition import naive_composition
    from dpcore.accounting.events import added_up, atom_pure_epsilon

    assert added_up(1e308, 10, 1e308) == math.inf
    assert naive_composition(epsilon=1e308, delta=0.5, k=10) == (math.inf, 1.0)
    assert atom_pure_epsilon(dp_accounting.LaplaceDpEvent(1e-320)) == math.inf
    assert atom_pure_epsilon(dp_accounting.dp_event.DiscreteLaplaceDpEvent(noise_parameter=1e308, sensitivity=10)) \
        == math.inf
