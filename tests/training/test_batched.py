"""Runs trained together (dpcore.training.batched): run k equals the run trained alone, per-run white-box bounds,
per-run accounting against dp_accounting, and the refusals."""
from __future__ import annotations

import math
import time
import warnings

import dp_accounting
import numpy as np
import pytest
import torch

from dpcore.exceptions import DPCoreWarning, DPValueError
from dpcore.training import TrainConfig, train
from dpcore.training.batched import TogetherRun, train_together, why_not_together


def _data(n=240, d=10, k=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = ((X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 1)).astype(int)
    return X, y


def _alone_and_together(runs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        alone = [train(r.X, r.y, r.config, X_test=r.X_test, y_test=r.y_test, n_outputs=r.n_outputs) for r in runs]
        together = train_together(runs)
    return alone, together


def _assert_same_run(a, b):
    assert (a.steps, a.stopped_early, a.sample_rate, a.noise_multiplier) == \
        (b.steps, b.stopped_early, b.sample_rate, b.noise_multiplier)
    assert a.epsilon == b.epsilon and a.accountant == b.accountant
    assert a.warnings == b.warnings and a.model_kwargs == b.model_kwargs
    assert a.state.keys() == b.state.keys()
    for key in a.state:
        np.testing.assert_allclose(b.state[key], a.state[key], rtol=1e-4, atol=1e-5, err_msg=key)
    assert list(a.history.columns) == list(b.history.columns)
    assert a.history[["epoch", "step"]].equals(b.history[["epoch", "step"]])
    np.testing.assert_allclose(b.history.drop(columns=["epoch", "step"]).to_numpy(),
                               a.history.drop(columns=["epoch", "step"]).to_numpy(), rtol=1e-4, atol=1e-5)


# settings that differ in everything a sweep varies, and in what each run's schedule does
_VARIED = [
    dict(noise_multiplier=0.8, seed=0, learning_rate=0.5, ema=0.9),
    dict(target_epsilon=2.0, seed=1, clip_norm=0.3, learning_rate=1.0),
    dict(noise_multiplier=2.0, seed=2, clip_norm=3.0, momentum=0.5, weight_decay=0.01, epochs=3),
    dict(noise_multiplier=0.9, seed=3, max_epsilon=6.0, epochs=8, ema=0.5),  # stops early on its budget
    dict(noise_multiplier=1.0, seed=4, sampling="shuffle", epochs=2),
    dict(noise_multiplier=1.3, seed=0, batch_size=17, accountant="pld"),  # another seed-0 run: own draws
]


@pytest.mark.parametrize("model", ["linear", "mlp"])
def test_run_k_of_a_batch_equals_the_run_trained_alone(model):
    X, y = _data()
    Xt, yt = _data(n=90, seed=5)
    runs = [TogetherRun(X, y, TrainConfig(**{"model": model, "hidden": 16, "epochs": 4, "batch_size": 40, **kw}),
                        Xt, yt, 3) for kw in _VARIED]
    alone, together = _alone_and_together(runs)
    assert any(r.stopped_early for r in alone) and len({r.steps for r in alone}) > 2
    for a, b in zip(alone, together):
        _assert_same_run(a, b)


# the non-private baseline's settings (NONPRIVATE_DEFAULTS: Adam, shuffled batches), and others a sweep may give
_NONPRIVATE = [
    dict(optimizer="adam", sampling="shuffle", learning_rate=0.01, seed=0),
    dict(optimizer="adam", sampling="shuffle", learning_rate=0.003, ema=0.9, seed=1),
    dict(optimizer="adam", sampling="shuffle", learning_rate=0.02, weight_decay=0.01, batch_size=17, seed=2, epochs=2),
    dict(optimizer="adam", sampling="poisson", learning_rate=0.01, batch_size=3, seed=3),  # empty batches skipped
    dict(optimizer="adam", sampling="shuffle", learning_rate=0.01, seed=0),  # another seed-0 run: own draws
]
_NONPRIVATE_SGD = [
    dict(learning_rate=0.05, momentum=0.5, sampling="poisson", batch_size=3, seed=0),  # empty batches skipped
    dict(learning_rate=0.05, momentum=0.9, weight_decay=0.01, ema=0.5, sampling="poisson", batch_size=3, seed=1),
    dict(learning_rate=0.1, sampling="shuffle", seed=2),
]
_PRIVATE_ADAM = [
    dict(noise_multiplier=0.8, learning_rate=0.01, seed=0, ema=0.9),
    dict(target_epsilon=2.0, learning_rate=0.003, clip_norm=0.3, weight_decay=0.01, seed=1),
    dict(noise_multiplier=0.9, learning_rate=0.02, max_epsilon=6.0, epochs=8, seed=3),  # stops early on its budget
    dict(noise_multiplier=1.0, learning_rate=0.01, sampling="shuffle", batch_size=17, epochs=2, seed=4),
]


@pytest.mark.parametrize("model", ["linear", "mlp"])
@pytest.mark.parametrize("varied, common", [
    (_NONPRIVATE, dict(private=False)),
    (_NONPRIVATE_SGD, dict(private=False)),
    (_PRIVATE_ADAM, dict(optimizer="adam")),
], ids=["non-private adam", "non-private sgd", "dp-sgd adam"])
def test_run_k_of_a_non_private_or_adam_batch_equals_the_run_trained_alone(model, varied, common):
    """Non-private runs (the mean loss of the batch, no clipping, no noise, epsilon inf; an empty Poisson batch
    skipped: no update, no Adam step counted, no average) and Adam runs (each with its own learning rate, weight
    decay and step count) train together as each trains alone."""
    X, y = _data()
    Xt, yt = _data(n=90, seed=5)
    runs = [TogetherRun(X, y, TrainConfig(**{"model": model, "hidden": 16, "epochs": 4, "batch_size": 40, **common,
                                             **kw}), Xt, yt, 3) for kw in varied]
    alone, together = _alone_and_together(runs)
    for a, b in zip(alone, together):
        _assert_same_run(a, b)
    if common.get("private") is False:
        assert all(r.epsilon == math.inf and r.dp_event is None and r.delta == 0.0 for r in together)
    else:
        assert any(r.stopped_early for r in together)


def test_runs_on_different_splits_and_sizes_train_together_and_stay_their_own():
    """A sweep's seeds have their own splits, and train_fraction gives them other sizes."""
    (X1, y1), (X2, y2) = _data(seed=1), _data(n=150, seed=2)
    Xt, yt = _data(n=60, seed=3)
    cfg = TrainConfig(model="mlp", hidden=8, depth=2, activation="relu", epochs=3, batch_size=30, target_epsilon=1.0)
    runs = [TogetherRun(X1, y1, cfg.replace(seed=0), Xt, yt, 3), TogetherRun(X2, y2, cfg.replace(seed=0), Xt, yt, 3),
            TogetherRun(X1, y1, cfg.replace(seed=7, clip_norm=0.5), None, None, 3)]
    alone, together = _alone_and_together(runs)
    for a, b in zip(alone, together):
        _assert_same_run(a, b)


def test_regression_and_soft_labels_train_together_as_alone():
    X, y = _data()
    target = (X[:, :1] * 0.5).astype(np.float32)
    soft = np.eye(3, dtype=np.float32)[y] * 0.8 + 0.2 / 3
    reg = [TogetherRun(X, target, TrainConfig(model="linear", task="regression", epochs=3, batch_size=50,
                                               noise_multiplier=s, seed=i)) for i, s in enumerate((0.7, 1.5))]
    cls = [TogetherRun(X, soft, TrainConfig(model="linear", epochs=3, batch_size=50, noise_multiplier=s, seed=i))
           for i, s in enumerate((0.7, 1.5))]
    for runs in (reg, cls):
        alone, together = _alone_and_together(runs)
        for a, b in zip(alone, together):
            _assert_same_run(a, b)


def _one_step_sums(runs):
    """Each run's noisy summed gradient at its first step (before the division by L), by run position."""
    sums = {}

    def seen(step, which, noisy):
        if step == 0:
            for j, k in enumerate(which):
                sums[k] = noisy[j].double().clone()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        train_together(runs, on_step=seen)
    return [sums[k] for k in range(len(runs))]


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_each_run_of_a_batch_passes_its_own_white_box_check(optimizer):
    """One record's clipped contribution to run k's sum is at most C_k (and, its gradient being huge, equal to
    it); the noise added to run k's sum has standard deviation sigma_k C_k. Measured per run, in one batch:
    neighbouring data sets D and D + {r} with every record sampled (q = 1) and the same seeds, each with
    sigma_k and with sigma = 0."""
    rng = np.random.default_rng(4)
    d, k = 150, 10  # 1510 coordinates per run
    X = rng.normal(size=(40, d)).astype(np.float32)
    y = rng.integers(0, k, size=40)
    r = (50.0 * rng.normal(size=(1, d))).astype(np.float32)  # one record with a gradient far above every C_k
    X_r, y_r = np.vstack([X, r]), np.append(y, 3)
    settings = [(0.3, 0.5, 11), (1.0, 1.0, 12), (2.5, 2.0, 13)]  # (C_k, sigma_k, seed)
    runs = []
    for C, sigma, seed in settings:
        for data in ((X, y), (X_r, y_r)):
            for s in (0.0, sigma):
                cfg = TrainConfig(model="linear", epochs=1, batch_size=len(data[0]), clip_norm=C, noise_multiplier=s,
                                  seed=seed, optimizer=optimizer)
                runs.append(TogetherRun(data[0], data[1], cfg, n_outputs=k))
    sums = _one_step_sums(runs)
    for i, (C, sigma, _) in enumerate(settings):
        clean_D, noisy_D, clean_Dr, noisy_Dr = sums[4 * i:4 * i + 4]
        contribution = float((clean_Dr - clean_D).norm())
        assert contribution <= C * (1 + 1e-5)
        assert contribution == pytest.approx(C, rel=1e-3)  # clipped: its raw gradient norm is far larger
        assert float(clean_D.norm()) <= 40 * C * (1 + 1e-5)
        for noisy, clean in ((noisy_D, clean_D), (noisy_Dr, clean_Dr)):
            noise = (noisy - clean).numpy()
            # sample std of 1510 normals: relative standard error 1/sqrt(2n) ~ 1.8%; 5 standard errors
            assert abs(noise.std() / (sigma * C) - 1) < 5 / math.sqrt(2 * noise.size)
            assert abs(noise.mean()) < 5 * sigma * C / math.sqrt(noise.size)


def test_every_run_of_a_batch_is_accounted_as_alone_and_by_dp_accounting():
    """Each run's epsilon equals the run alone's and an independent dp_accounting computation of its own
    (q_k, sigma_k, steps_k); runs sharing an odometer (same sigma and schedule) get the same numbers."""
    X, y = _data()
    cfgs = [TrainConfig(model="linear", epochs=e, batch_size=b, noise_multiplier=s, seed=i)
            for i, (e, b, s) in enumerate([(3, 40, 0.9), (3, 40, 0.9), (5, 60, 1.7), (2, 24, 1.1)])]
    cfgs.append(TrainConfig(model="linear", epochs=3, batch_size=40, target_epsilon=1.5, seed=9))
    runs = [TogetherRun(X, y, c, n_outputs=3) for c in cfgs]
    alone, together = _alone_and_together(runs)
    for a, b in zip(alone, together):
        assert b.epsilon == a.epsilon and b.history.epsilon.tolist() == a.history.epsilon.tolist()
        # its own event: steps_k Poisson-sampled Gaussians of rate q_k = L_k / n and noise sigma_k
        q, steps = b.config.batch_size / len(X), b.steps
        assert b.dp_event == dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(b.noise_multiplier)), steps)
        ref = dp_accounting.rdp.RdpAccountant()
        ref.compose(b.dp_event)
        assert ref.get_epsilon(b.config.delta) == pytest.approx(b.epsilon, rel=1e-9)
    assert together[4].epsilon <= 1.5 * (1 + 1e-9)


def test_on_epoch_reports_each_run_as_train_does():
    X, y = _data()
    cfgs = [TrainConfig(model="linear", epochs=e, batch_size=40, noise_multiplier=1.0, seed=i)
            for i, e in enumerate((2, 3))]
    seen = []
    res = train_together([TogetherRun(X, y, c, n_outputs=3) for c in cfgs], on_epoch=lambda k, info: seen.append(
        (k, info["epoch"], info["epochs"], info["epsilon"])))
    assert sorted(seen) == sorted([(k, e, c.epochs, res[k].history.epsilon[e - 1])
                                   for k, c in enumerate(cfgs) for e in range(1, c.epochs + 1)])


def test_runs_that_cannot_train_together_are_refused_by_position_with_the_reason():
    X, y = _data()
    good = TrainConfig(model="linear", epochs=1, batch_size=40, noise_multiplier=1.0)
    bad = good.replace(model="cnn")
    assert why_not_together(good) is None and "model='cnn'" in why_not_together(bad)
    with pytest.raises(DPValueError, match=r"runs\[1\] cannot train in a batch: .*model='cnn'"):
        train_together([TogetherRun(X, y, good, n_outputs=3), TogetherRun(X, y, bad, n_outputs=3)])


@pytest.mark.parametrize("change", [dict(private=False, noise_multiplier=None), dict(optimizer="adam")])
def test_runs_that_train_another_way_are_not_mixed_in_one_batch(change):
    """Private and non-private runs, or SGD and Adam runs, each train in a batch, but not in the same one."""
    X, y = _data()
    a = TrainConfig(model="linear", epochs=1, batch_size=40, noise_multiplier=1.0)
    b = a.replace(**change)
    assert why_not_together(a) is None and why_not_together(b) is None
    with pytest.raises(DPValueError, match=r"runs\[1\] does not share runs\[0\]'s network.*private or not"):
        train_together([TogetherRun(X, y, a, n_outputs=3), TogetherRun(X, y, b, n_outputs=3)])


def test_a_step_observer_needs_private_runs():
    X, y = _data()
    cfg = TrainConfig(model="linear", epochs=1, batch_size=40, private=False)
    with pytest.raises(DPValueError, match=r"on_step needs private runs \(runs\[0\] has private=False\)"):
        train_together([TogetherRun(X, y, cfg, n_outputs=3)], on_step=lambda *a: None)


def test_runs_of_different_networks_are_refused():
    X, y = _data()
    a = TrainConfig(model="linear", epochs=1, batch_size=40, noise_multiplier=1.0)
    with pytest.raises(DPValueError, match=r"runs\[1\] does not share runs\[0\]'s network"):
        train_together([TogetherRun(X, y, a, n_outputs=3), TogetherRun(X, y, a.replace(model="mlp"), n_outputs=3)])


def test_cnn_and_secure_mode_train_alone():
    from dpcore.rng import secure_noise

    assert "model='cnn'" in why_not_together(TrainConfig(model="cnn", noise_multiplier=1.0))
    with secure_noise():
        assert "secure mode" in why_not_together(TrainConfig(model="linear", noise_multiplier=1.0))


def test_small_blocks_change_nothing():
    """Runs processed in blocks (a large sweep on a large table) give the same numbers as one block."""
    X, y = _data()
    runs = [TogetherRun(X, y, TrainConfig(model="mlp", hidden=12, epochs=2, batch_size=40, noise_multiplier=s,
                                          seed=i), n_outputs=3) for i, s in enumerate((0.6, 1.0, 1.4, 2.0, 3.0))]
    whole = train_together(runs)
    blocks = train_together(runs, block_floats=1)
    for a, b in zip(whole, blocks):
        for key in a.state:
            np.testing.assert_allclose(b.state[key], a.state[key], rtol=1e-5, atol=1e-6)
    assert torch.get_default_dtype() == torch.float32


@pytest.fixture
def lanes_for_any_work(monkeypatch):
    """Lanes for these small runs (a real sweep needs LANE_FLOATS input floats a step per lane)."""
    import dpcore.training.batched as batched

    monkeypatch.setattr(batched, "LANE_FLOATS", 1)


@pytest.mark.parametrize("varied, common", [(_VARIED, {}), (_NONPRIVATE, dict(private=False))],
                         ids=["dp-sgd", "non-private adam"])
def test_runs_trained_in_two_lanes_equal_the_runs_trained_alone(lanes_for_any_work, varied, common):
    X, y = _data()
    Xt, yt = _data(n=90, seed=5)
    runs = [TogetherRun(X, y, TrainConfig(**{"model": "mlp", "hidden": 16, "epochs": 4, "batch_size": 40, **common,
                                             **kw}), Xt, yt, 3) for kw in varied]
    alone, _ = _alone_and_together(runs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        in_lanes = train_together(runs, lanes=2)
    for a, b in zip(alone, in_lanes):
        _assert_same_run(a, b)


def test_runs_that_read_one_odometer_share_a_lane_and_lanes_get_equal_work(lanes_for_any_work):
    from dpcore.training.batched import _lane_groups, _Member, _share_odometers
    from dpcore.training.engine import _training_data

    X, y = _data()
    data = _training_data(X, y, "classification", 3, None, None)
    cfgs = [TrainConfig(model="linear", epochs=2, batch_size=40, noise_multiplier=s, seed=seed)
            for s in (0.8, 1.0, 1.5) for seed in range(3)]
    members = [_Member(i, TogetherRun(X, y, c, n_outputs=3), data, 0, 0.0) for i, c in enumerate(cfgs)]
    _share_odometers(members)
    lanes = _lane_groups(members, 2)
    assert len(lanes) == 2 and sorted(m.index for lane in lanes for m in lane) == list(range(9))
    for lane in lanes:  # a sigma's three seeds read one odometer: never split between lanes
        for m in lane:
            assert all(o in lane for o in members if o.budget is m.budget)
    assert sorted(len(lane) for lane in lanes) == [3, 6]  # three groups of equal work on two lanes


def test_small_runs_stay_in_one_lane():
    """Below LANE_FLOATS a step is mostly Python, which one thread runs at a time: two lanes would be slower."""
    from dpcore.training.batched import _lane_groups, _Member
    from dpcore.training.engine import _training_data

    X, y = _data()
    data = _training_data(X, y, "classification", 3, None, None)
    members = [_Member(i, TogetherRun(X, y, TrainConfig(model="linear", epochs=1, batch_size=40,
                                                        noise_multiplier=1.0 + i, seed=i), n_outputs=3), data, 0, 0.0)
               for i in range(4)]
    assert len(_lane_groups(members, 2)) == 1


def test_a_warning_raised_in_a_lane_reaches_the_caller(lanes_for_any_work):
    X, y = _data()
    cfgs = [TrainConfig(model="linear", epochs=8, batch_size=40, noise_multiplier=s, max_epsilon=6.0, seed=i)
            for i, s in enumerate((0.9, 1.0))]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        res = train_together([TogetherRun(X, y, c, n_outputs=3) for c in cfgs], lanes=2)
    assert all(r.stopped_early for r in res)
    said = [str(w.message) for w in seen if issubclass(w.category, DPCoreWarning)]
    assert sum("max_epsilon=6" in m for m in said) == 2


def test_an_error_in_one_lane_stops_the_others_and_is_raised_to_the_caller(lanes_for_any_work, monkeypatch):
    import dpcore.training.batched as batched

    X, y = _data()
    cfgs = [TrainConfig(model="linear", epochs=50, batch_size=40, noise_multiplier=1.0 + i, seed=i) for i in range(2)]
    calls = []
    real = batched._block_step

    def failing(stack, *args):
        calls.append(stack.members[0].index)
        if stack.members[0].index == 1 and calls.count(1) > 3:
            raise RuntimeError("a lane failed")
        if stack.members[0].index == 0:
            time.sleep(0.002)  # the other lane gets its turns
        return real(stack, *args)

    monkeypatch.setattr(batched, "_block_step", failing)
    with pytest.raises(RuntimeError, match="a lane failed"):
        train_together([TogetherRun(X, y, c, n_outputs=3) for c in cfgs], lanes=2)
    planned = 50 * math.ceil(X.shape[0] / 40)
    assert calls.count(0) < planned  # the other lane stopped before its end


def test_a_step_observer_needs_one_lane():
    X, y = _data()
    run = TogetherRun(X, y, TrainConfig(model="linear", epochs=1, batch_size=40, noise_multiplier=1.0), n_outputs=3)
    with pytest.raises(DPValueError, match="lanes=1"):
        train_together([run], on_step=lambda *a: None, lanes=2)
    with pytest.raises(DPValueError, match="lanes"):
        train_together([run], lanes=0)


def test_on_epoch_from_two_lanes_is_called_one_at_a_time_and_what_it_raises_stops_the_runs(monkeypatch):
    import threading

    from dpcore.training import batched

    monkeypatch.setattr(batched, "LANE_FLOATS", 1)  # lanes for these small runs
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] > 0).astype(int)
    runs = [batched.TogetherRun(X, y, TrainConfig(model="linear", epochs=3, batch_size=30, noise_multiplier=0.5 + s,
                                                  seed=s)) for s in range(4)]
    inside, most, threads = [0], [0], set()

    def count(k, info):
        inside[0] += 1
        most[0] = max(most[0], inside[0])
        threads.add(threading.current_thread().name)
        inside[0] -= 1

    batched.train_together(runs, lanes=2, on_epoch=count)
    assert len(threads) == 2 and most[0] == 1

    class Stop(Exception):
        pass

    def stop(k, info):
        raise Stop("nobody waits any more")

    with pytest.raises(Stop, match="nobody waits"):
        batched.train_together(runs, lanes=2, on_epoch=stop)
    assert not [t for t in threading.enumerate() if t.name.startswith("dpcore-lane")]


def test_a_record_whose_gradient_overflows_leaves_the_model_finite_alone_and_together():
    # one record of 1e30 (a finite float32) at learning rate 1e10: its per-example gradient overflows after the first
    # step, its clip factor times inf is nan, and the model released was nan with the record and finite without it
    # (alone and in a batch of runs), whatever the noise, while the run reported its finite epsilon
    X, y = _data()
    X[0] = 1e30
    cfg = TrainConfig(model="linear", noise_multiplier=1.0, epochs=2, seed=0, batch_size=60, learning_rate=1e10)
    run = TogetherRun(X=X, y=y, config=cfg, X_test=X[1:], y_test=y[1:], n_outputs=3)
    alone, together = _alone_and_together([run])
    for r in (alone[0], together[0]):
        assert all(np.isfinite(v).all() for v in r.state.values())
    _assert_same_run(alone[0], together[0])


# a sweep's epsilon values at one seed: twins (the same seed, rows and rate), with schedules that part ways
_TWINS = [
    dict(noise_multiplier=0.8, learning_rate=0.5),
    dict(target_epsilon=2.0, clip_norm=0.3, learning_rate=1.0, ema=0.9),
    dict(noise_multiplier=2.0, clip_norm=3.0, momentum=0.5, epochs=2),  # leaves the twins after 2 epochs
    dict(noise_multiplier=0.9, max_epsilon=6.0, epochs=8),  # stops early on its budget
    dict(noise_multiplier=1.1, epochs=6),  # draws on after the others left
    dict(noise_multiplier=1.3, seed=1),  # another seed, between twins: its own draws
    dict(noise_multiplier=1.5, batch_size=17),  # another rate: its own draws
]


@pytest.mark.parametrize("model", ["linear", "mlp"])
@pytest.mark.parametrize("lanes, block_floats", [(1, None), (2, None), (1, 1)], ids=["one lane", "two lanes",
                                                                                    "blocks of one run"])
def test_twin_runs_draw_their_batches_once_and_each_equals_the_run_trained_alone(model, lanes, block_floats,
                                                                                 monkeypatch):
    """Runs of one seed on the same rows and rate would draw the same Poisson batches: the batch draws them once,
    gathers their rows once, and every run still equals the run trained alone (its batches, noise, weights,
    accounting), whatever its schedule, its lane or its block."""
    import dpcore.training.batched as batched
    from dpcore.training.sampling import PoissonSampler

    monkeypatch.setattr(batched, "LANE_FLOATS", 1)
    X, y = _data()
    Xt, yt = _data(n=90, seed=5)
    runs = [TogetherRun(X, y, TrainConfig(**{"model": model, "hidden": 16, "epochs": 4, "batch_size": 40, "seed": 0,
                                             **kw}), Xt, yt, 3) for kw in _TWINS]
    alone, _ = _alone_and_together(runs)
    assert alone[3].stopped_early and len({r.steps for r in alone}) > 3
    draws = []
    real = PoissonSampler.draw
    monkeypatch.setattr(PoissonSampler, "draw", lambda self: draws.append(self) or real(self))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)
        together = train_together(runs, lanes=lanes, **({} if block_floats is None else
                                                        {"block_floats": block_floats}))
    for a, b in zip(alone, together):
        _assert_same_run(a, b)
    # the twins' draws: at most once per step and lane for the longest of them; the two others draw their own
    twins = max(r.steps for r in alone[:5])
    assert len(draws) <= lanes * twins + alone[5].steps + alone[6].steps < sum(r.steps for r in alone)
