"""A sweep trains its network runs together (dpcore.sweep.batching: DP-SGD, the non-private baselines, the
networks of label DP and output perturbation) and every other run alone, with the same table, cache rows,
progress and warnings as a sweep that trains every run alone."""
from __future__ import annotations

import json
import logging

import numpy as np
import pandas as pd
import pytest

from dpcore.sweep import SweepConfig, run_sweep
from dpcore.sweep.cache import SweepCache

pytestmark = [pytest.mark.filterwarnings("ignore::dpcore.exceptions.PrivacyLeakWarning"),  # logreg baseline
              # one test worker runs this module's sweeps and the engine's (tests/sweep/test_sweep_engine.py), so
              # the worker processes the first starts serve the rest (each test worker started its own)
              pytest.mark.xdist_group("sweep-worker-processes")]


def _same_tables(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns) and len(a) == len(b)
    for col in a.columns:
        if col in ("seconds", "cached"):
            continue
        if pd.api.types.is_float_dtype(a[col]):
            np.testing.assert_allclose(b[col].to_numpy(), a[col].to_numpy(), rtol=1e-6, atol=1e-9, err_msg=col)
        else:
            assert a[col].tolist() == b[col].tolist(), col


def test_a_mixed_sweep_batches_its_network_runs_and_gives_the_table_of_runs_trained_alone(tmp_path, caplog):
    cfg = SweepConfig(dataset="iris", learners=["dpsgd", "erm-objective"], values=[0.5, 2.0], seeds=2,
                      params={"epochs": 3})
    alone = run_sweep(cfg, n_jobs=1, cache_dir=tmp_path / "alone", batch=False)
    progress = []
    with caplog.at_level(logging.INFO, logger="dpcore.sweep"):
        together = run_sweep(cfg, n_jobs=1, cache_dir=tmp_path / "together", on_result=progress.append)
    _same_tables(alone.table, together.table)
    notes = " / ".join(together.notes)
    assert "4 dpsgd runs train together in 2 batches (the first seed's 2 first" in notes and "2 data splits" in notes
    assert "4 erm-objective runs trained alone: not a network learner" in notes
    assert "2 non-private runs train together in one batch (softmax/linear regression, no privacy, Adam" in notes
    assert "2 majority runs trained alone" in notes
    assert notes == " / ".join(r.getMessage() for r in caplog.records if r.name == "dpcore.sweep")
    assert alone.notes == ()
    # every run reported once, as it finished, and cached under the same key with the same row
    assert [p.done for p in progress] == list(range(1, len(cfg.runs()) + 1))
    assert sorted((p.row["learner"], p.row["seed"], p.row["value"]) for p in progress) == \
        sorted((r.learner, r.seed, r.value) for r in cfg.runs())
    a, b = SweepCache(tmp_path / "alone"), SweepCache(tmp_path / "together")
    for run in cfg.runs():
        ra, rb = a.get(run.key), b.get(run.key)
        assert ra.keys() == rb.keys()
        same = [json.dumps({k: v for k, v in r.items() if k not in ("seconds", "accuracy")}, sort_keys=True)
                for r in (ra, rb)]  # as text: NaN equals NaN there
        assert same[0] == same[1]
        assert rb["accuracy"] == pytest.approx(ra["accuracy"], abs=1e-9)
    assert run_sweep(cfg, n_jobs=1, cache_dir=tmp_path / "together").n_computed == 0


def test_a_batched_runs_warnings_reach_its_row():
    """Warnings the trainer raises (here: shuffled batches' caveat) are in each batched run's row, as alone."""
    cfg = SweepConfig(dataset="iris", learners=["dpsgd"], values=[1.0], seeds=2, include_baselines=False,
                      params={"epochs": 2, "sampling": "shuffle"})
    with pytest.warns(Warning):
        alone = run_sweep(cfg, n_jobs=1, use_cache=False, batch=False)
        together = run_sweep(cfg, n_jobs=1, use_cache=False)
    assert together.notes[0].startswith("2 dpsgd runs train together")
    assert all("no proven amplification" in w for w in together.table.warnings)
    _same_tables(alone.table, together.table)


@pytest.mark.parametrize("first", ["together", "alone"])
def test_every_batched_run_keeps_the_warning_of_its_own_calibration_as_alone(first):
    """At ε = 1e8 the calibration stops at the least noise searched and says so: every run's row carries that
    warning, trained in a batch or alone, whether its σ was calibrated first or read from the calibration's cache
    (the same target, rows and steps: one calibration for every seed, and the second sweep's runs all read it)."""
    cfg = SweepConfig(dataset="iris", learners=["dpsgd"], values=[1e8], seeds=3, include_baselines=False,
                      params={"epochs": 2})
    sweeps = {}
    with pytest.warns(Warning, match="met even by the least noise searched"):
        for how in (first, {"together": "alone", "alone": "together"}[first]):
            sweeps[how] = run_sweep(cfg, n_jobs=1, use_cache=False, batch=how == "together")
    together, alone = sweeps["together"], sweeps["alone"]
    assert together.notes[0].startswith("3 dpsgd runs train together")
    for res in (together, alone):
        assert len(res.table) == 3
        assert all("met even by the least noise searched, noise_multiplier=0.001" in w for w in res.table.warnings)
    _same_tables(alone.table, together.table)


def test_a_cached_calibration_raises_its_warning_for_every_run_that_takes_its_sigma():
    from dpcore.training import TrainConfig, resolve_noise_multiplier

    config = TrainConfig(model="linear", epochs=2, batch_size=120, target_epsilon=3e8, delta=1e-5)
    for _ in range(2):  # the second σ comes from the cache
        said: list[str] = []
        with pytest.warns(Warning, match="met even by the least noise searched") as record:
            assert resolve_noise_multiplier(config, 120, said=said) == pytest.approx(1e-3)
        assert said == [str(w.message) for w in record if "least noise" in str(w.message)] and len(said) == 1


def test_runs_that_cannot_batch_train_alone_and_the_notes_say_why():
    secure = SweepConfig(dataset="iris", learners=["dpsgd"], values=[1.0, 2.0], seeds=1, include_baselines=False,
                         params={"epochs": 1}, secure=True)
    res = run_sweep(secure, n_jobs=1, use_cache=False)
    assert res.notes == ("2 dpsgd runs trained alone: secure mode (runs train together with seeded noise only)",)
    assert len(res.table) == 2


def test_dpsgd_runs_with_adam_train_together_as_alone():
    cfg = SweepConfig(dataset="iris", learners=["dpsgd"], values=[1.0, 2.0], seeds=1, include_baselines=False,
                      params={"epochs": 2, "optimizer": "adam", "learning_rate": 0.01})
    together = run_sweep(cfg, n_jobs=1, use_cache=False)
    assert together.notes == ("2 dpsgd runs train together in one batch (softmax/linear regression, DP-SGD, Adam, "
                              "1 data split)",)
    _same_tables(run_sweep(cfg, n_jobs=1, use_cache=False, batch=False).table, together.table)


def test_non_private_baselines_and_label_dp_and_output_perturbation_runs_train_together_as_alone():
    """The non-private baselines (Adam, batch 64, shuffled batches, >= 600 steps) train in one batch, apart from
    the DP-SGD runs; the label-DP and output-perturbation networks (trained without privacy, their noise on the
    labels before or on the outputs after) join them, output perturbation's epsilons sharing one training per
    seed; the table is the one of runs trained alone."""
    cfg = SweepConfig(dataset="breast_cancer", learners=["dpsgd", "output-perturbation", "label-dp-rr"],
                      values=[1.0, 4.0], seeds=2, params={"epochs": 2})
    together = run_sweep(cfg, n_jobs=1, use_cache=False)
    alone = run_sweep(cfg, n_jobs=1, use_cache=False, batch=False)
    _same_tables(alone.table, together.table)
    notes = " / ".join(together.notes)
    assert ("2 non-private, 4 output-perturbation and 4 label-dp-rr runs train together in 2 batches (the first "
            "seed's 5 first, so that a first curve comes early) (softmax/linear regression, no privacy, Adam, 2 data "
            "splits, 8 distinct trainings: runs that differ only after training share one)") in notes
    assert "4 dpsgd runs train together" in notes and "DP-SGD, SGD" in notes
    base = together.table[together.table.learner == "non-private"]
    assert len(base) == 2 and (base.epsilon == np.inf).all() and (base.accuracy > 0.85).all()


def test_runs_alone_in_worker_processes_while_the_batch_trains_here_give_the_same_table(tmp_path, to_workers):
    """With worker processes the runs trained alone start at once and the batch trains in this process
    meanwhile; every row still reaches on_result (on this thread) and the table is the one-process table."""
    import threading

    cfg = SweepConfig(dataset="iris", learners=["dpsgd", "erm-objective"], values=[1.0, 3.0], seeds=1,
                      params={"epochs": 2})
    here = threading.get_ident()
    threads = set()
    one = run_sweep(cfg, n_jobs=1, use_cache=False)
    two = run_sweep(cfg, n_jobs=2, use_cache=False, on_result=lambda p: threads.add(threading.get_ident()))
    _same_tables(one.table, two.table)
    assert threads == {here}
    where = [note for note in two.notes if "worker process" in note and "trained in" in note]
    assert [note for note in two.notes if note not in where] == list(one.notes)  # the same batches, said the same
    assert where == ["4 runs trained in 2 worker processes", "1 run trained in 1 worker process"]  # and where


def test_runs_too_small_for_a_worker_process_train_in_this_one_and_the_notes_say_so(monkeypatch):
    """Starting a worker process costs seconds (it imports torch and scikit-learn): runs whose estimated work is
    below that train here, with n_jobs=2 as with n_jobs=1, and the table is the same; work estimated above it still
    goes to the workers."""
    from dpcore.sweep import engine

    cfg = SweepConfig(dataset="iris", learners=["dpsgd", "erm-objective"], values=[1.0, 3.0], seeds=1,
                      params={"epochs": 2})
    one = run_sweep(cfg, n_jobs=1, use_cache=False)

    def no_workers(*args, **kwargs):
        raise AssertionError("a worker process was started for runs of a few milliseconds")

    with monkeypatch.context() as m:
        m.setattr(engine, "_run_loky", no_workers)
        two = run_sweep(cfg, n_jobs=2, use_cache=False)
    _same_tables(one.table, two.table)
    assert any("trained in this process" in note for note in two.notes)
    assert not any("trained in this process" in note for note in one.notes)

    started = []
    monkeypatch.setattr(engine, "IN_PROCESS_SECONDS", 0.0)
    monkeypatch.setattr(engine, "IN_PROCESS_SECONDS_WARM", 0.0)
    monkeypatch.setattr(engine, "_run_loky", lambda runs, n_jobs, finish, *a, **k: started.extend(runs) or [
        finish(r, engine.execute_run(r)) for r in runs])
    cfg_big = SweepConfig(dataset="iris", learners=["erm-objective"], values=[1.0, 3.0], seeds=1)
    big = run_sweep(cfg_big, n_jobs=2, use_cache=False)
    assert started  # estimated work above the (zeroed) threshold: handed to the workers, and the notes say so
    assert f"{len(started)} runs trained in 2 worker processes" in big.notes, big.notes
    assert not any("trained in 2 worker" in note for note in two.notes + one.notes)


def test_rows_of_runs_alone_that_all_arrived_between_batched_rows_end_the_wait():
    """The work in the background may finish (and say so) while the batch is still handing over rows: the last
    wait then returns at once instead of waiting for an end already seen; an error in it is raised here."""
    from dpcore.exceptions import DPValueError
    from dpcore.sweep.engine import _Background

    bg = _Background(lambda done: [done(i, {"i": i}) for i in range(3)])
    bg._thread.join(timeout=30)
    got = []
    bg.deliver(lambda run, row: got.append(run))  # between two batched rows: takes the rows and the end
    bg.deliver(lambda run, row: got.append(run), wait=True)  # after the batch: returns at once
    assert got == [0, 1, 2]

    def fails(done):
        done("a", {})
        raise DPValueError("run 'x' failed")

    bad = _Background(fails)
    with pytest.raises(DPValueError, match="run 'x' failed"):
        bad.deliver(lambda run, row: None, wait=True)


def test_a_batch_that_fails_trains_its_runs_alone_and_the_sweeps_notes_say_so(monkeypatch):
    """A batch that raises (a bug, memory) hands its runs to the path of runs trained alone, which gives the same
    table, and the reason is in the result's notes, not only in the log."""
    import dpcore.training.batched as batched

    cfg = SweepConfig(dataset="iris", learners=["dpsgd"], values=[1.0, 3.0], seeds=1, include_baselines=False,
                      params={"epochs": 2})
    alone = run_sweep(cfg, n_jobs=1, use_cache=False, batch=False)

    def broken(runs, **kwargs):
        raise RuntimeError("out of memory in the batch")

    monkeypatch.setattr(batched, "train_together", broken)
    res = run_sweep(cfg, n_jobs=1, use_cache=False)
    _same_tables(alone.table, res.table)
    assert any("could not train in a batch (RuntimeError: out of memory in the batch)" in n for n in res.notes)


def test_a_sweep_on_two_lanes_with_its_calibrations_worked_out_ahead_gives_the_table_of_one_lane(monkeypatch):
    """Two lanes (threads) and a second process calibrating sigma ahead change where the work is done, not what
    any run computes: the table (accuracies, epsilons, sigmas, warnings) equals the one-lane table."""
    import dpcore.accounting.ahead as ahead
    import dpcore.training.batched as batched

    monkeypatch.setattr(batched, "LANE_FLOATS", 1)  # lanes for these small runs
    monkeypatch.setattr(ahead, "AHEAD_MIN", 1)
    started = []
    real_start = ahead.CalibrationsAhead._start
    monkeypatch.setattr(ahead.CalibrationsAhead, "_start", lambda self: started.append(1) or real_start(self))
    cfg = SweepConfig(dataset="iris", learners=["dpsgd"], values=[0.3, 1.0, 3.0, 1e8], seeds=2, params={"epochs": 2})
    with pytest.warns(Warning, match="met even by the least noise searched"):
        one = run_sweep(cfg, n_jobs=1, use_cache=False, lanes=1)
        ahead.calibrated_sigma.cache_clear()
        ahead._CALIBRATED.clear()
        two = run_sweep(cfg, n_jobs=2, use_cache=False, lanes=2)
    assert started, "no calibration was worked out ahead"
    _same_tables(one.table, two.table)
    notes = " / ".join(two.notes)
    assert "shared among 2 threads of this process (lanes)" in notes and "worked out ahead in a second process" in notes
    assert "lanes" not in " / ".join(one.notes)
    assert sum("least noise searched" in w for w in two.table.warnings) == 2


def test_runs_of_more_splits_than_the_features_cache_keeps_each_train_on_their_own_split():
    # the features' cache keeps 16 splits: planning a sweep over more seeds lets go of the first ones' kept arrays,
    # whose identity was then taken by another split's, and runs of seed 16 and on trained on another seed's rows
    from dpcore.sweep.batching import _capture, plan_batches

    config = SweepConfig(dataset="iris", learners=("dpsgd",), values=(1.0, 3.0), seeds=24)
    entries = [e for group in plan_batches(config.runs()).groups for e in group]
    assert len({e.run.seed for e in entries}) == 24
    for e in entries:
        fresh, _, _ = _capture(e.run)
        assert np.array_equal(e.problem.X_train, fresh.problem.X_train), e.run
        assert np.array_equal(e.problem.X_test, fresh.problem.X_test), e.run
    assert len({id(e.problem.X_train) for e in entries if e.problem.config.private}) == 24


@pytest.mark.parametrize("lanes,error", [(0, ValueError), (-1, ValueError), (2.5, TypeError), (True, TypeError),
                                         ("2", TypeError)])
def test_a_sweeps_lanes_that_are_not_a_whole_number_of_threads_are_refused_naming_lanes(lanes, error):
    cfg = SweepConfig(dataset="iris", learners=("dpsgd",), values=(1.0,), seeds=1, include_baselines=False)
    with pytest.raises(error, match=r"lanes must be a whole number >= 1 \(threads for the batched runs\)"):
        run_sweep(cfg, use_cache=False, lanes=lanes)


@pytest.mark.parametrize("secure,batch", [(True, True), (False, False)])
def test_a_sweep_with_no_batch_starts_no_second_process_for_calibrations_it_will_not_hand_over(monkeypatch, secure,
                                                                                                 batch):
    from dpcore.accounting.ahead import CalibrationsAhead

    started = []
    monkeypatch.setattr(CalibrationsAhead, "_start", lambda self: started.append(self))
    cfg = SweepConfig(dataset="iris", learners=("dpsgd",), values=(0.5, 1.0, 2.0, 4.0), seeds=1, secure=secure,
                      include_baselines=False)
    res = run_sweep(cfg, n_jobs=1, use_cache=False, lanes=2, batch=batch)
    assert len(res.table) == 4 and started == []


def test_a_batch_that_outgrows_the_memory_allowed_in_lanes_trains_in_one_lane_not_alone(monkeypatch):
    """Each lane holds its own stack at once: a batch over the memory guard in two lanes (DPCORE_MAX_RUN_MEMORY)
    is trained again in one, where it fits, not run by run (Adult's 25 x 4 sweep at 50 MB went alone)."""
    import dpcore.training.batched as batched
    from dpcore.runtime.workload import WorkBudgetExceeded

    cfg = SweepConfig(dataset="iris", learners=["dpsgd"], values=[1.0, 3.0], seeds=1, include_baselines=False,
                      params={"epochs": 2})
    one = run_sweep(cfg, n_jobs=1, use_cache=False, lanes=1)
    real, lanes_asked = batched.train_together, []

    def guarded(runs, **kwargs):
        lanes_asked.append(kwargs.get("lanes", 1))
        if kwargs.get("lanes", 1) > 1:
            raise WorkBudgetExceeded("this batch of training runs was stopped: memory grew by 6e+07 bytes")
        return real(runs, **kwargs)

    monkeypatch.setattr(batched, "train_together", guarded)
    res = run_sweep(cfg, n_jobs=2, use_cache=False, lanes=2)
    _same_tables(one.table, res.table)
    assert lanes_asked == [2, 1]
    assert any("went over the work allowed in 2 lanes" in n and "memory grew" in n for n in res.notes)
    assert not any("could not train in a batch" in n for n in res.notes)
