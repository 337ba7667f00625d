"""The sweep engine: table shape, determinism, the disk cache, resuming, streaming, bad input."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dpcore.datasets import load_csv, load_dataset
from dpcore.exceptions import DPCoreError, DPValueError, PrivacyLeakWarning
from dpcore.sweep import (
    SweepCache,
    SweepConfig,
    SweepRunError,
    cached_result,
    dataset_fingerprint,
    default_cache_dir,
    run_sweep,
    summarize,
    value_range,
)

PROVIDERS = ("sweep_fake_learners",)
VOLATILE = ["seconds", "cached"]
#: the tests that start worker processes (joblib's loky executor, kept by each test process for its next sweep) run
#: in one test worker with the batched sweep's: its workers, once started, serve them all, where each test worker
#: started its own (seconds of importing torch and scikit-learn in each)
pytestmark = pytest.mark.xdist_group("sweep-worker-processes")


def _cfg(call_log=None, **kw):
    params = dict(kw.pop("params", {}))
    if call_log is not None:
        params["call_log"] = call_log.path
    base = dict(dataset="iris", learners=["fake-dp"], values=[0.5, 1.0, 4.0], seeds=2, providers=PROVIDERS,
                params=params)
    base.update(kw)
    return SweepConfig(**base)


def test_one_row_per_learner_value_seed_with_spent_epsilon(fakes, cache_dir):
    cfg = _cfg(learners=["fake-dp", "fake-fixed"])
    res = run_sweep(cfg, n_jobs=1, cache_dir=cache_dir)
    t = res.table
    swept = t[t.role == "swept"]
    assert len(swept) == 2 * 3 * 2
    assert swept.groupby(["learner", "value", "seed"]).size().eq(1).all()
    assert set(swept.value) == {0.5, 1.0, 4.0} and set(swept.seed) == {0, 1}
    # the epsilon column is what each run reported spending, not the target
    dp = swept[swept.learner == "fake-dp"]
    np.testing.assert_allclose(dp.epsilon, fakes.SPENT_SHARE * dp.value)
    np.testing.assert_allclose(dp.epsilon_target, dp.value)
    fixed = swept[swept.learner == "fake-fixed"]
    np.testing.assert_allclose(fixed.epsilon, fixed.value)
    # baselines: fake-dp's own counterpart and the majority line, once per seed, value NaN, epsilon inf
    base = t[t.role != "swept"]
    assert sorted(zip(base.learner, base.seed)) == [("fake-np", 0), ("fake-np", 1), ("majority", 0), ("majority", 1)]
    assert base.value.isna().all() and np.isinf(base.epsilon).all()
    assert (t[t.learner == "majority"].role == "trivial").all()
    assert {"accuracy", "epsilon", "delta", "seconds", "cached"} <= set(t.columns)
    # fake-fixed names no baseline: it gets the first registered fallback (fake-np, after an unknown name)
    assert cfg.baseline_for("fake-fixed") == "fake-np" and cfg.baseline_for("fake-dp") == "fake-np"
    assert res.n_computed == len(t) and res.n_cached == 0
    # accuracy rises with epsilon for the fake learner (sanity of the table's contents)
    means = res.summary().query("learner == 'fake-dp'").set_index("value")["mean"]
    assert means[0.5] < means[4.0]


def test_same_seeds_same_table_sequential_and_parallel(fakes, tmp_path, to_workers):
    cfg = _cfg()
    a = run_sweep(cfg, n_jobs=1, cache_dir=tmp_path / "a").table
    b = run_sweep(cfg, n_jobs=2, cache_dir=tmp_path / "b").table  # loky processes
    pd.testing.assert_frame_equal(a.drop(columns=VOLATILE), b.drop(columns=VOLATILE))
    c = run_sweep(_cfg(base_seed=5), n_jobs=1, cache_dir=tmp_path / "c").table
    assert set(c.seed) == {5, 6}


def test_cached_runs_are_not_recomputed(fakes, cache_dir, call_log):
    cfg = _cfg(call_log)
    first = run_sweep(cfg, n_jobs=1, cache_dir=cache_dir)
    n = call_log()
    assert n == len(first.table) - 2  # every run but the two majority ones goes through a fake
    again = run_sweep(cfg, n_jobs=2, cache_dir=cache_dir)
    assert call_log() == n
    assert again.n_cached == len(first.table) and again.n_computed == 0 and again.table.cached.all()
    pd.testing.assert_frame_equal(first.table.drop(columns="cached"), again.table.drop(columns="cached"))
    # cached_result reads the same table without computing; it is None when a run is missing
    pd.testing.assert_frame_equal(cached_result(cfg, cache_dir=cache_dir).table, again.table)
    wider = _cfg(call_log, values=[0.5, 1.0, 4.0, 8.0])
    assert cached_result(wider, cache_dir=cache_dir) is None
    res = run_sweep(wider, n_jobs=1, cache_dir=cache_dir)
    assert call_log() == n + 2  # only the new value, once per seed; baselines are shared
    assert res.n_computed == 2 and not res.table[res.table.value == 8.0].cached.any()
    # use_cache=False computes everything again
    run_sweep(cfg, n_jobs=1, cache_dir=cache_dir, use_cache=False)
    assert call_log() == 2 * n + 2


class _Stop(Exception):
    pass


def test_interrupted_sweep_resumes(fakes, cache_dir, call_log):
    cfg = _cfg(call_log)
    seen = []

    def stop_after_five(progress):
        seen.append(progress)
        if progress.done == 5:
            raise _Stop

    with pytest.raises(_Stop):
        run_sweep(cfg, n_jobs=1, cache_dir=cache_dir, on_result=stop_after_five)
    done_before = call_log()
    assert len(seen) == 5 and done_before <= 5
    resumed = run_sweep(cfg, n_jobs=1, cache_dir=cache_dir)
    assert resumed.n_cached == 5
    full = run_sweep(cfg, n_jobs=1, use_cache=False)
    n_fake_runs = len(full.table) - 2
    assert call_log() == done_before + (n_fake_runs - done_before) + n_fake_runs
    pd.testing.assert_frame_equal(resumed.table.drop(columns=VOLATILE), full.table.drop(columns=VOLATILE))


def test_progress_streams_every_run(fakes, cache_dir):
    cfg = _cfg(values=[1.0, 2.0], seeds=1)
    events = []
    res = run_sweep(cfg, n_jobs=2, cache_dir=cache_dir, on_result=events.append)
    assert [e.done for e in events] == list(range(1, len(res.table) + 1))
    assert all(e.total == len(res.table) and not e.cached for e in events)
    assert events[-1].fraction == 1.0
    events.clear()
    run_sweep(cfg, n_jobs=2, cache_dir=cache_dir, on_result=events.append)
    assert all(e.cached for e in events) and len(events) == len(res.table)


def test_other_axes_pass_the_value_as_the_learners_parameter(fakes, cache_dir, call_log):
    res = run_sweep(_cfg(call_log, axis="clip_norm", values=[0.1, 2.0], seeds=1, epsilon=0.5,
                         params={"epochs": 3}), n_jobs=1, cache_dir=cache_dir)
    lines = [line.split(",") for line in open(call_log.path).read().splitlines()]
    dp_lines = sorted((float(c), int(e), float(eps)) for name, eps, seed, c, e in lines if name == "fake-dp")
    assert dp_lines == [(0.1, 3, 0.5), (2.0, 3, 0.5)]
    # the baseline gets epochs (declared shared) but not clip_norm (which it does not take)
    np_lines = [line for line in lines if line[0] == "fake-np"]
    assert np_lines and all(line[3] == "None" and line[4] == "3" for line in np_lines)
    swept = res.table[res.table.role == "swept"]
    assert list(swept.axis.unique()) == ["clip_norm"] and (swept.epsilon_target == 0.5).all()

    frac = run_sweep(_cfg(axis="train_fraction", values=[0.2, 1.0], seeds=1), n_jobs=1, cache_dir=cache_dir)
    assert sorted(frac.table.query("role == 'swept'").value) == [0.2, 1.0]
    # a generic integer knob: epochs
    ep = run_sweep(_cfg(call_log, axis="epochs", values=[1, 4], seeds=1), n_jobs=1, cache_dir=cache_dir)
    assert sorted(ep.table.query("role == 'swept'").value) == [1.0, 4.0]


def test_a_cached_baseline_is_listed_under_the_axis_of_the_sweep_that_reads_it(fakes, cache_dir):
    # the cache key leaves out the axis (a baseline's run is the same along any axis), and the row read back kept
    # the axis of the sweep that computed it: a sweep along epsilon listed its baselines under clip_norm
    along_clip = _cfg(axis="clip_norm", values=[0.1, 2.0], seeds=1, epsilon=0.5)
    run_sweep(along_clip, n_jobs=1, cache_dir=cache_dir)
    along_eps = _cfg(values=[0.5], seeds=1)
    res = run_sweep(along_eps, n_jobs=1, cache_dir=cache_dir)
    base = res.table[res.table.role != "swept"]
    assert base.cached.all() and len(base) == 2  # read from the first sweep's runs, not trained again
    assert set(res.table.axis) == {"epsilon"}
    assert set(cached_result(along_eps, cache_dir=cache_dir).table.axis) == {"epsilon"}

def test_a_baseline_gets_only_the_knobs_the_swept_learner_shares_with_it(fakes):
    cfg = _cfg(params={"epochs": 3, "learning_rate": 0.3})
    runs = {r.role: dict(r.params) for r in cfg.runs()}
    assert runs["swept"] == {"epochs": 3, "learning_rate": 0.3}
    # fake-np takes a learning rate too, but the fake DP learner's is tuned for its noise: not shared
    assert runs["baseline"] == {"epochs": 3}


def test_a_points_epsilon_spent_is_the_most_any_of_its_runs_spent_not_their_mean():
    """Runs of one point are releases of their own: should they spend different epsilons, the point's epsilon spent is
    the largest, where the mean (2) was below what one run spent (3); a run whose epsilon is unknown makes the
    point's unknown, where the mean skipped it."""
    t = pd.DataFrame({"learner": ["a"] * 4, "role": ["swept"] * 4, "value": [1.0, 1.0, 2.0, 2.0],
                      "seed": [0, 1, 0, 1], "accuracy": [0.5, 0.7, 0.6, 0.8], "epsilon": [1.0, 3.0, 2.0, np.nan]})
    spent = summarize(t, "accuracy").set_index("value")["epsilon_spent"]
    assert spent[1.0] == 3.0
    assert math.isnan(spent[2.0])


def test_regression_metrics_and_mean_baseline(fakes, cache_dir):
    res = run_sweep(_cfg(dataset="diabetes", values=[0.5, 5.0], seeds=1), n_jobs=1, cache_dir=cache_dir)
    t = res.table
    assert {"mse", "r2"} <= set(t.columns) and "accuracy" not in t.columns
    assert res.metric == "mse"
    assert set(t[t.role == "trivial"].learner) == {"mean"}
    assert summarize(t, "mse").shape[0] == 2 + 2  # two values + fake-np + mean


def test_uploaded_dataset_is_keyed_by_its_contents(fakes, cache_dir, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    csv = "a,b,c,label\n" + "\n".join(f"{r[0]},{r[1]},{r[2]},{lab}" for r, lab in zip(X, y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = load_csv(csv.encode(), label_column="label", task="classification", name="mine.csv")
        ds2 = load_csv((csv + "\n0.1,0.2,0.3,1").encode(), label_column="label", task="classification",
                       name="mine.csv")
    assert dataset_fingerprint(ds).startswith("sha256:")
    assert dataset_fingerprint(ds) != dataset_fingerprint(ds2)
    assert dataset_fingerprint(load_dataset("iris")) == dataset_fingerprint("iris") == "registry:iris"
    # an upload is cached only when the caller asks (the command line's own file); by default it stays off the disk
    res = run_sweep(_cfg(dataset=ds, seeds=1), n_jobs=2, cache_dir=cache_dir, use_cache=True)
    assert len(res.table) == 3 + 2 and (res.table.dataset == "mine.csv").all()
    assert run_sweep(_cfg(dataset=ds, seeds=1), n_jobs=1, cache_dir=cache_dir, use_cache=True).n_computed == 0
    assert run_sweep(_cfg(dataset=ds2, seeds=1), n_jobs=1, cache_dir=cache_dir, use_cache=True).n_cached == 0


def test_cache_keys_cover_the_configuration(fakes):
    base = {r.learner + str(r.value) + str(r.seed): r.key for r in _cfg().runs()}
    for change in ({"delta": 1e-6}, {"params": {"epochs": 2}}, {"test_size": 0.3}, {"train_fraction": 0.5}):
        other = {r.learner + str(r.value) + str(r.seed): r.key for r in _cfg(**change).runs()}
        changed = {k for k in base if base[k] != other[k]}
        assert any(k.startswith("fake-dp") for k in changed), change
    # delta does not change non-private baselines' keys, so they are shared across sweeps
    other = {r.learner + str(r.value) + str(r.seed): r.key for r in _cfg(delta=1e-6).runs()}
    assert all(base[k] == other[k] for k in base if k.startswith(("fake-np", "majority")))
    assert len(set(base.values())) == len(base)


def test_cache_dir_env_var_and_corrupt_entries(fakes, tmp_path, monkeypatch):
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path / "root"))
    assert default_cache_dir() == tmp_path / "root" / "sweeps"
    cfg = _cfg(values=[1.0], seeds=1)
    run_sweep(cfg, n_jobs=1)
    entries = list((tmp_path / "root" / "sweeps").glob("*/*.json"))
    assert len(entries) == 3
    entries[0].write_text("{not json")  # a damaged entry is recomputed, not trusted
    assert run_sweep(cfg, n_jobs=1).n_computed == 1
    assert SweepCache(tmp_path / "root" / "sweeps").clear() == 3


def test_learner_failures_and_warnings_name_the_run(fakes, cache_dir):
    with pytest.raises(SweepRunError, match=r"'fake-dp' \(epsilon=0.5, seed=0\) failed: ValueError: asked to fail"):
        run_sweep(_cfg(params={"fail": True}, seeds=1), n_jobs=1, cache_dir=cache_dir)
    with pytest.raises(SweepRunError, match="asked to fail"):
        run_sweep(_cfg(params={"fail": True}, seeds=1), n_jobs=2, cache_dir=cache_dir)
    # a user-facing DPCoreError is shown as its message, without the exception's class name
    with pytest.raises(SweepRunError, match=r"seed=0\) failed: asked to fail politely; pick another value$"):
        run_sweep(_cfg(params={"fail": "user"}, seeds=1), n_jobs=1, cache_dir=cache_dir)
    with pytest.warns(PrivacyLeakWarning, match="fake-dp: bounds were inferred"):
        run_sweep(_cfg(params={"warn": True}, seeds=1, values=[1.0]), n_jobs=2, cache_dir=cache_dir)
    with pytest.warns(PrivacyLeakWarning):  # still warned when read back from the cache
        run_sweep(_cfg(params={"warn": True}, seeds=1, values=[1.0]), n_jobs=1, cache_dir=cache_dir)


@pytest.mark.parametrize(
    "change, match",
    [
        ({"values": []}, "range is empty"),
        ({"values": [0.5, -1.0]}, r"epsilon value must be > 0, got -1.0"),
        ({"values": [0.0]}, "epsilon value must be > 0"),
        ({"learners": ["fake-dp", "no-such-learner"]}, "unknown learner 'no-such-learner'"),
        ({"learners": []}, "learners is empty"),
        ({"axis": "clip_norm", "learners": ["fake-dp", "fake-fixed"], "values": [1.0]},
         "learner 'fake-fixed' does not take 'clip_norm'"),
        ({"axis": "clip_norm", "values": [0.0]}, "clip_norm value must be > 0"),
        ({"axis": "train_fraction", "values": [1.5]}, r"train_fraction value must be in \(0, 1\]"),
        ({"seeds": 0}, "seeds must be at least 1"),
        ({"learners": ["fake-np"]}, "'fake-np' is not private"),
        ({"params": {"epoch": 3}}, r"no learner in this sweep takes parameter\(s\) \['epoch'\]"),
        ({"params": {"epsilon": 3}}, "not through params"),
        ({"dataset": "no-such-data"}, "unknown dataset"),
        ({"learners": ["majority"], "axis": "train_fraction", "dataset": "diabetes", "values": [1.0]},
         "'majority' handles classification"),
        ({"delta": 1.5}, "delta must satisfy"),
        ({"epsilon": -2}, "epsilon must be > 0"),
        ({"providers": ("no_such_provider_module",)}, "could not import learner provider"),
    ],
)
def test_bad_inputs_give_clear_errors(fakes, change, match):
    with pytest.raises(DPCoreError, match=match):
        _cfg(**change)


def test_bad_run_options(fakes, monkeypatch):
    monkeypatch.setattr("dpcore.sweep.engine.DASK_CONNECT_TIMEOUT", 1.0)
    cfg = _cfg(seeds=1)
    with pytest.raises(DPValueError, match="n_jobs must be >= 1"):
        run_sweep(cfg, n_jobs=0)
    with pytest.raises(DPValueError, match="nothing answers at the Dask scheduler address 'tcp://127.0.0.1:1'"):
        run_sweep(cfg, scheduler="tcp://127.0.0.1:1", use_cache=False)
    for malformed in ("garbage", "localhost", "tcp://host:notaport"):  # said at once, without a Client's 20 s
        with pytest.raises(DPValueError, match="is not tcp://host:port"):
            run_sweep(cfg, scheduler=malformed, use_cache=False)
    with pytest.raises(TypeError, match="SweepConfig"):
        run_sweep({"dataset": "iris"})


def test_value_range():
    assert value_range("epsilon", 0.1, 10, 5) == (0.1, 0.316, 1.0, 3.16, 10.0)  # as shown: the values the runs use
    assert value_range("train_fraction", 0.25, 1, 4) == (0.25, 0.5, 0.75, 1.0)
    assert value_range("epsilon", 1, 1, 3) == (1.0,)
    with pytest.raises(DPValueError, match="range is empty"):
        value_range("epsilon", 2, 1, 3)
    with pytest.raises(DPValueError, match="epsilon minimum must be > 0"):
        value_range("epsilon", -1, 1, 3)
    assert not math.isnan(value_range("noise_multiplier", 0.5, 2, 4)[0])


def test_config_is_frozen_and_pickles(fakes):
    import dataclasses
    import pickle

    cfg = _cfg(params={"epochs": 2})
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.axis = "clip_norm"
    with pytest.raises(TypeError, match="read-only"):
        cfg.params["epochs"] = 3
    assert hash(cfg.params) == hash(_cfg(params={"epochs": 2}).params)
    again = pickle.loads(pickle.dumps(cfg))
    assert again.params == {"epochs": 2} and again.fingerprint() == cfg.fingerprint()
    assert cfg.values == (0.5, 1.0, 4.0) and _cfg(values=[4, 0.5, 1, 1.0]).values == (0.5, 1.0, 4.0)


def test_editing_a_learners_source_invalidates_its_cache(tmp_path, monkeypatch):
    from dpcore.learners import _LEARNERS
    from dpcore.sweep import source_digest

    mod = tmp_path / "sweep_tmp_provider.py"
    body = (
        "from dpcore.learners import LearnerSpec, RunResult, register\n"
        "from dpcore.learners.metrics import score\n"
        "def run(split, *, epsilon, delta, seed, params, on_epoch=None):\n"
        "    return RunResult('tmp-dp', split.dataset.name, split.task, score(split, split.y_test), epsilon, delta)\n"
        "def register_learners():\n"
        "    register(LearnerSpec('tmp-dp', 'tmp', ('classification',), True, run))\n"
    )
    mod.write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        cfg = SweepConfig(dataset="iris", learners=["tmp-dp"], values=[1.0], seeds=1, include_baselines=False,
                          providers=("sweep_tmp_provider",))
        key = cfg.runs()[0].key
        assert SweepConfig(dataset="iris", learners=["tmp-dp"], values=[1.0], seeds=1, include_baselines=False,
                           providers=("sweep_tmp_provider",)).runs()[0].key == key
        before = source_digest("sweep_tmp_provider")
        mod.write_text(body + "# a change\n")
        assert source_digest("sweep_tmp_provider") != before
        cfg2 = SweepConfig(dataset="iris", learners=["tmp-dp"], values=[1.0], seeds=1, include_baselines=False,
                           providers=("sweep_tmp_provider",))
        assert cfg2.runs()[0].key != key
        # a learner inside dpcore is keyed by its whole package, e.g. dpcore.learners.trivial
        assert source_digest("dpcore.learners.trivial") == source_digest("dpcore.learners")
    finally:
        _LEARNERS.pop("tmp-dp", None)


def test_concurrent_sweeps_from_threads_both_finish(fakes, tmp_path):
    """A dashboard runs visitors' sweeps in threads; they share one process pool and must not break it."""
    import threading

    results = {}

    def go(name, jobs):
        results[name] = run_sweep(_cfg(values=[1.0, 2.0], seeds=2), n_jobs=jobs, cache_dir=tmp_path / name).table

    threads = [threading.Thread(target=go, args=(n, j)) for n, j in (("a", 2), ("b", 1), ("c", 2))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert set(results) == {"a", "b", "c"}
    pd.testing.assert_frame_equal(results["a"].drop(columns=VOLATILE), results["b"].drop(columns=VOLATILE))
    pd.testing.assert_frame_equal(results["a"].drop(columns=VOLATILE), results["c"].drop(columns=VOLATILE))


def test_a_run_that_finishes_while_its_work_is_estimated_is_not_computed_again(fakes, call_log, monkeypatch):
    """A learner that never declares its work (check_work) runs to its end when the sweep estimates whether runs
    are worth the worker processes: its row is kept, so every run is computed once, whether the runs then train in
    this process or (when the estimates add up past the start-up cost) the rest go to the workers."""
    from dpcore.sweep import engine

    cfg = _cfg(call_log, seeds=2)
    n_runs = sum(r.learner.startswith("fake") for r in cfg.runs())  # the fake learners log every call
    res = run_sweep(cfg, n_jobs=2, use_cache=False)
    assert call_log() == n_runs and len(res.table) == len(cfg.runs())
    monkeypatch.setattr(engine, "IN_PROCESS_SECONDS", 0.0)  # past the cost after the first run: the rest to workers
    monkeypatch.setattr(engine, "IN_PROCESS_SECONDS_WARM", 0.0)
    again = run_sweep(cfg, n_jobs=2, use_cache=False)
    assert call_log() == 2 * n_runs
    pd.testing.assert_frame_equal(res.table.drop(columns=VOLATILE), again.table.drop(columns=VOLATILE))
    assert any("worker process" in n for n in again.notes)


def test_a_network_learner_that_never_reaches_dpcores_trainer_is_trained_once_not_twice(fakes, call_log,
                                                                                          monkeypatch):
    """A sweep looks for each network run's training problem by running its learner up to dpcore's trainer. A
    learner registered as a network that trains its own way runs to its end there: that row is kept (every run
    computed once, with the row the run gives alone), and the notes say so."""
    import dataclasses

    from dpcore.learners import _LEARNERS

    monkeypatch.setitem(_LEARNERS, "fake-dp", dataclasses.replace(_LEARNERS["fake-dp"], family="network"))
    cfg = _cfg(call_log, seeds=2, include_baselines=False, providers=())  # no re-registering: the change stays
    res = run_sweep(cfg, n_jobs=1, use_cache=False)
    assert call_log() == len(cfg.runs()) == len(res.table)
    alone = run_sweep(cfg, n_jobs=1, use_cache=False, batch=False)
    pd.testing.assert_frame_equal(res.table.drop(columns=VOLATILE), alone.table.drop(columns=VOLATILE))
    assert any("trained once, while the sweep looked for its problem" in n for n in res.notes)


# Last in the module, and so in its test worker's group (after test_sweep_batched.py): a dead worker breaks the pool
# of worker processes, and every sweep after it starts new ones (seconds of imports each)
def test_a_dead_worker_is_a_clear_error_and_the_sweep_resumes(fakes, cache_dir, to_workers):
    import os

    cfg = _cfg(params={"crash_unless_pid": os.getpid()}, seeds=1)
    with pytest.raises(SweepRunError, match=r"local worker processes.*run the sweep again to resume"):
        run_sweep(cfg, n_jobs=2, cache_dir=cache_dir)
    # the baselines finished before the crash stay cached; in this process nothing crashes
    res = run_sweep(cfg, n_jobs=1, cache_dir=cache_dir)
    assert len(res.table) == 5 and res.n_computed + res.n_cached == 5
