"""The budgets and sensitivities a learner calibrates its noise to, read where it builds its mechanism: a spy
subclass put in place of the mechanism class in the learner's module records what it is made with."""
from __future__ import annotations

from dataclasses import dataclass, field


def _spy(monkeypatch, module, name: str, record) -> list:
    """Replace ``module.<name>`` (a mechanism class taking ``epsilon`` and ``sensitivity``) with a subclass that
    appends ``record(epsilon, sensitivity)`` to the list returned each time it is made (filled as the learner runs)."""
    made: list = []
    base = getattr(module, name)

    class Spy(base):
        def __init__(self, *, epsilon, sensitivity):
            made.append(record(epsilon, sensitivity))
            super().__init__(epsilon=epsilon, sensitivity=sensitivity)

    monkeypatch.setattr(module, name, Spy)
    return made


def sensitivities_made(monkeypatch, module, name: str) -> list:
    """Every ``sensitivity`` ``module.<name>`` is made with while the learner runs."""
    return _spy(monkeypatch, module, name, lambda epsilon, sensitivity: sensitivity)


def mechanisms_made(monkeypatch, module, name: str) -> list:
    """Every ``(epsilon, sensitivity)`` ``module.<name>`` is made with while the learner runs."""
    return _spy(monkeypatch, module, name, lambda epsilon, sensitivity: (epsilon, sensitivity))


@dataclass
class Drawn:
    """What a run drew, in order, as :func:`draws_made` records it.

    ``additive``: every Laplace or Gaussian release of :func:`dpcore.mechanisms.additive.add_noise`, ``(kind, scale,
    sensitivity, shape)``; ``sums``: every noisy sum of :class:`~dpcore.mechanisms.gaussian_sum.GaussianSum` (DP-SGD's
    steps, DP-FedAvg's rounds), ``(std, sensitivity, shape)``; ``rr``: every randomized response, ``(P(another
    answer), k, answers)``; ``poisson``: every Poisson batch, ``(records drawn from, the rate each joined at)``;
    ``shuffled``: every shuffled epoch begun, ``(records, batch size, batches taken)``; ``schedules``: every federated
    participation schedule, ``(rounds x clients, the rate each client joined at)``."""

    additive: list = field(default_factory=list)
    sums: list = field(default_factory=list)
    rr: list = field(default_factory=list)
    poisson: list = field(default_factory=list)
    shuffled: list = field(default_factory=list)
    schedules: list = field(default_factory=list)


def draws_made(monkeypatch) -> Drawn:
    """Record, while the test runs, every noise draw, randomized response, Poisson batch, shuffled epoch and federated
    schedule (see :class:`Drawn`), where they are drawn: the rates are those the draws compare with
    (:func:`dpcore.rng.bernoulli_threshold` of the rate asked for)."""
    import numpy as np

    import dpcore.federated.fedavg as fedavg
    import dpcore.mechanisms.additive as additive
    import dpcore.mechanisms.gaussian as gaussian
    import dpcore.mechanisms.gaussian_multiplier as gaussian_multiplier
    import dpcore.mechanisms.laplace as laplace
    from dpcore.mechanisms.gaussian_sum import GaussianSum
    from dpcore.mechanisms.randomized_response import RandomizedResponse
    from dpcore.rng import bernoulli_threshold
    from dpcore.training.sampling import PoissonSampler, ShuffleSampler

    drawn = Drawn()
    add_noise = additive.add_noise

    def noise(values, *, kind, scale, sensitivity, **kw):
        drawn.additive.append((kind, float(scale), float(sensitivity), tuple(np.shape(values))))
        return add_noise(values, kind=kind, scale=scale, sensitivity=sensitivity, **kw)

    for module in (laplace, gaussian, gaussian_multiplier):
        monkeypatch.setattr(module, "add_noise", noise)
    release, start = GaussianSum.release, GaussianSum.start

    def released(self, values):
        drawn.sums.append((float(self.std), float(self.sensitivity), tuple(values.shape)))
        return release(self, values)

    def started(self, buffer):
        if not self.secure:  # seeded, the noise is drawn here; secure, finish() releases the sum (release())
            drawn.sums.append((float(self.std), float(self.sensitivity), tuple(buffer.shape)))
        return start(self, buffer)

    monkeypatch.setattr(GaussianSum, "release", released)
    monkeypatch.setattr(GaussianSum, "start", started)
    randomise = RandomizedResponse.randomise

    def responded(self, values, **kw):
        drawn.rr.append((self.p_change, self.k, int(np.size(values))))
        return randomise(self, values, **kw)

    monkeypatch.setattr(RandomizedResponse, "randomise", responded)
    draw = PoissonSampler.draw

    def batch(self):
        drawn.poisson.append((self.n, bernoulli_threshold(self.sample_rate)))
        return draw(self)

    monkeypatch.setattr(PoissonSampler, "draw", batch)
    batches = ShuffleSampler.batches

    def epoch(self, steps):
        drawn.shuffled.append((self.n, self.batch_size, int(steps)))
        return batches(self, steps)

    monkeypatch.setattr(ShuffleSampler, "batches", epoch)
    fixed_schedule = fedavg._fixed_schedule

    def schedule(cfg, rng):
        out = fixed_schedule(cfg, rng)
        drawn.schedules.append((out.copy(), bernoulli_threshold(cfg.client_fraction)))
        return out

    monkeypatch.setattr(fedavg, "_fixed_schedule", schedule)
    return drawn
