"""The Gaussian mechanism's sigma is calibrated once and the mechanism stays a plain value object."""
from __future__ import annotations

import copy
import dataclasses
import pickle
import random

import pytest

from dpcore.exceptions import DPValueError
from dpcore.mechanisms import Gaussian, analytic_gaussian_sigma, classic_gaussian_sigma
from dpcore.mechanisms import gaussian as gaussian_mod


@pytest.mark.parametrize("calibration, solver", [("analytic", "analytic_gaussian_sigma"),
                                                 ("classic", "classic_gaussian_sigma")])
def test_sigma_is_solved_once_per_mechanism(calibration, solver, monkeypatch):
    calls = []
    real = getattr(gaussian_mod, solver)
    monkeypatch.setattr(gaussian_mod, solver, lambda **kw: calls.append(kw) or real(**kw))
    g = Gaussian(epsilon=0.5, delta=1e-5, sensitivity=2.0, calibration=calibration)
    sigmas = {g.sigma for _ in range(5)}
    g.variance()
    g.randomise([1.0, 2.0], rng=0)
    g.density([0.0])
    assert g.dp_event is not None
    assert len(calls) == 1 and len(sigmas) == 1
    assert g.sigma == real(epsilon=0.5, delta=1e-5, sensitivity=2.0)


def test_cached_sigma_matches_the_calibration_functions():
    assert Gaussian(epsilon=2.0, delta=1e-6).sigma == analytic_gaussian_sigma(epsilon=2.0, delta=1e-6)
    assert Gaussian(epsilon=0.3, delta=1e-6, calibration="classic").sigma == \
        classic_gaussian_sigma(epsilon=0.3, delta=1e-6)


def test_equal_hashable_picklable_and_replace_recalibrates():
    a = Gaussian(epsilon=0.5, delta=1e-5)
    b = Gaussian(epsilon=0.5, delta=1e-5)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != Gaussian(epsilon=0.6, delta=1e-5)
    assert "_sigma" not in repr(a)
    assert [f.name for f in dataclasses.fields(a)] == ["epsilon", "delta", "sensitivity", "calibration"]
    for clone in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a)):
        assert clone == a and hash(clone) == hash(a) and clone.sigma == a.sigma
    wider = dataclasses.replace(a, sensitivity=3.0)
    assert wider.sigma == pytest.approx(3.0 * a.sigma, rel=1e-9)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.epsilon = 1.0


def test_a_gaussian_noise_below_what_a_double_holds_is_refused_naming_epsilon():
    """epsilon 1e300 on a query of sensitivity 1e-300 needs a noise of about 1e-600 (Balle & Wang 2018): the search
    for it divided by a noise of 0 (ZeroDivisionError); it is refused, saying what to change."""
    with pytest.raises(DPValueError, match="epsilon=1e\\+300.*sensitivity=1e-300.*smaller epsilon"):
        Gaussian(epsilon=1e300, delta=1e-5, sensitivity=1e-300)
    assert Gaussian(epsilon=1e6, delta=1e-5, sensitivity=1e-300).sigma > 0  # still held: about 7e-304


def test_the_noise_drawn_is_never_below_what_the_event_states():
    """A Gaussian stated by its noise multiplier draws noise of std multiplier * sensitivity, rounded up, so that the
    drawn noise over the sensitivity is never below the event's multiplier. Rounded to nearest, GNMax's
    sigma / sqrt(2) at sensitivity sqrt(2) (Papernot et al. 2018) drew a hair less for about one sigma in fifty."""
    from decimal import Decimal, localcontext

    from dpcore.mechanisms import NoiseMultiplierGaussian
    from dpcore.pate.aggregation import GNMax

    rng = random.Random(0)
    with localcontext() as ctx:
        ctx.prec = 60
        root2 = Decimal(2).sqrt()
        for _ in range(2000):
            gnmax = GNMax(sigma=rng.uniform(1.0, 200.0))
            assert Decimal(gnmax.mechanism.sigma) / root2 >= Decimal(gnmax.dp_event.noise_multiplier)
            g = NoiseMultiplierGaussian(noise_multiplier=rng.uniform(0.1, 10.0), sensitivity=rng.uniform(0.1, 10.0))
            assert Decimal(g.sigma) >= Decimal(g.noise_multiplier) * Decimal(g.sensitivity)


def test_the_gaussian_events_multiplier_is_never_above_the_noise_drawn():
    """The analytic Gaussian's event states sigma / sensitivity rounded down, and a noisy image's L2 sensitivity
    R sqrt(h w C) is rounded up (for the noise calibrated to it and for the whole-image event): rounded to nearest,
    each was a hair on the side of less noise than drawn, or more sensitivity than stated, for some inputs."""
    from decimal import Decimal, localcontext

    from dpcore.images.mechanisms import PixelGaussian

    rng = random.Random(0)
    with localcontext() as ctx:
        ctx.prec = 60
        for _ in range(300):
            g = Gaussian(epsilon=rng.uniform(0.1, 5.0), delta=1e-5, sensitivity=rng.uniform(0.1, 10.0))
            assert Decimal(g.dp_event.noise_multiplier) * Decimal(g.sensitivity) <= Decimal(g.sigma)
        for _ in range(100):
            h, w, c = rng.randint(1, 40), rng.randint(1, 40), rng.choice([1, 3])
            shape = (h, w) if c == 1 else (h, w, 3)
            image = PixelGaussian(epsilon=rng.uniform(0.1, 5.0), delta=1e-5, pixel_range=(0, rng.uniform(0.5, 300.0)),
                                  budget=rng.choice(["pixel", "image"]))
            pixels = c * (1 if image.budget == "pixel" else h * w)
            assert Decimal(image.sensitivity(shape)) >= Decimal(image.width) * Decimal(pixels).sqrt()
            whole = Decimal(image.width) * Decimal(c * h * w).sqrt()
            assert Decimal(image.image_dp_event(shape).noise_multiplier) * whole <= Decimal(image.noise_std(shape))
