"""The work budget: a request that asks for more than the machine may give is refused before any work,
with a message naming the parameter and the largest value that fits; a run that still grows is stopped."""
from __future__ import annotations

import re

import numpy as np
import pytest

from dpcore.exceptions import DPValueError
from dpcore.runtime.workload import (
    COMMAND_LINE,
    RUN,
    SERVER,
    MemoryGuard,
    Work,
    WorkBudget,
    WorkBudgetExceeded,
    active_budget,
    check_work,
    parse_budget,
    set_default_budget,
)


def _largest(message: str, name: str) -> int:
    return int(re.search(rf"use at most (?:\w+=\d+ or )*{name}=(\d+)", message).group(1))


def test_refusal_names_the_parameter_what_it_asks_and_the_largest_value_that_fits():
    work = Work(steps=2e9, step_seconds=1e-3, drivers={"steps": ("epochs", 1e9)})
    with pytest.raises(WorkBudgetExceeded) as err:
        check_work(work, RUN)
    msg = str(err.value)
    assert msg.startswith("epochs=1000000000 asks for about 2e+06 seconds of work")
    assert "per run" in msg and "DPCORE_MAX_RUN_SECONDS" in msg
    largest = _largest(msg, "epochs")
    assert largest == RUN.seconds / 2e-3
    check_work(Work(steps=2 * largest, step_seconds=1e-3, drivers={"steps": ("epochs", largest)}), RUN)  # it fits


def test_every_driver_of_the_time_is_named_with_the_largest_value_of_each_that_fits():
    work = Work(steps=1e4 * 100, step_seconds=2e-3, drivers={"seconds": [("rounds", 1e4), ("local_epochs", 100)]})
    with pytest.raises(WorkBudgetExceeded) as err:
        check_work(work, RUN)
    msg = str(err.value)
    assert msg.startswith("rounds=10000 and local_epochs=100 ask for about 2e+03 seconds of work")
    assert _largest(msg, "rounds") == 600 and _largest(msg, "local_epochs") == 6


def test_a_driver_that_grows_as_a_square_gets_the_square_root():
    work = Work(parameters=4e8, drivers={"parameters": ("hidden", 20_000, 2)})
    with pytest.raises(WorkBudgetExceeded) as err:
        check_work(work, SERVER)
    assert _largest(str(err.value), "hidden") == int(20_000 * (SERVER.parameters / 4e8) ** 0.5)


def test_the_pages_and_the_command_line_share_one_budget_of_about_2_gb():
    assert SERVER is COMMAND_LINE is RUN and RUN.memory_bytes == 2e9  # the command line's allowed 8e9 before
    work = Work(steps=1e9, step_seconds=1.0, memory_bytes=3e9, drivers={"memory_bytes": ("n_components", 1e5)})
    with pytest.raises(WorkBudgetExceeded, match=r"n_components=100000 asks for 3e\+09 bytes of memory.*"
                                                 r"use at most n_components=66666 .*DPCORE_MAX_RUN_MEMORY"):
        check_work(work, RUN)  # the memory is checked before the work it causes


def test_the_operator_raises_the_memory_and_the_time_by_environment(monkeypatch):
    monkeypatch.setenv("DPCORE_MAX_RUN_MEMORY", "4GB")
    monkeypatch.setenv("DPCORE_MAX_RUN_SECONDS", "600")
    budget = active_budget()
    assert budget.memory_bytes == 4e9 and budget.seconds == 600
    check_work(Work(memory_bytes=3e9, steps=500, step_seconds=1.0))
    monkeypatch.setenv("DPCORE_MAX_RUN_MEMORY", "3.5GiB")
    assert active_budget().memory_bytes == 3.5 * 2**30
    for bad in ("lots", "-1GB", "nan"):
        monkeypatch.setenv("DPCORE_MAX_RUN_MEMORY", bad)
        with pytest.raises(DPValueError, match="DPCORE_MAX_RUN_MEMORY"):
            active_budget()
    monkeypatch.delenv("DPCORE_MAX_RUN_MEMORY")
    monkeypatch.setenv("DPCORE_MAX_RUN_SECONDS", "0")
    with pytest.raises(DPValueError, match="DPCORE_MAX_RUN_SECONDS"):
        active_budget()


def test_non_finite_work_is_refused():
    with pytest.raises(WorkBudgetExceeded):
        check_work(Work(operations=float("nan")), COMMAND_LINE)


def test_environment_chooses_and_overrides_the_budget(monkeypatch):
    monkeypatch.setenv("DPCORE_WORK_BUDGET", "server,steps=5")
    budget = active_budget()
    assert budget.name == "run" and budget.steps == 5 and budget.memory_bytes == SERVER.memory_bytes
    monkeypatch.setenv("DPCORE_WORK_BUDGET", "command-line")
    assert active_budget() == COMMAND_LINE
    monkeypatch.delenv("DPCORE_WORK_BUDGET")
    set_default_budget(SERVER)
    assert active_budget() == SERVER


@pytest.mark.parametrize("text, word", [("laptop", "unknown budget"), ("server,cores=3", "unknown field"),
                                        ("server,steps=many", "takes a number"), ("server,steps=-1", "> 0")])
def test_a_bad_budget_setting_is_named(text, word):
    with pytest.raises(DPValueError, match=f"DPCORE_WORK_BUDGET.*{word}"):
        parse_budget(text)


def test_memory_guard_stops_a_run_that_grows_past_its_share(monkeypatch):
    import mmap
    import weakref

    # this run alone: a guard another test left open in this process would add its share to the allowance (runs in
    # progress share it), and the 100 MB below would then fit
    monkeypatch.setattr(MemoryGuard, "_active", weakref.WeakSet())
    guard = MemoryGuard(WorkBudget("tiny", memory_bytes=20e6), what="this test run")
    # 100 MB of fresh pages, written so that they are resident: a fresh mapping, because the C library may serve an
    # array from memory an earlier test freed and the allocator kept (the process would then not grow at all)
    block = mmap.mmap(-1, 100_000_000)
    block.write(b"\1" * len(block))
    with pytest.raises(WorkBudgetExceeded, match="this test run was stopped"):
        guard.check()
    block.close()


def test_memory_guard_lets_a_run_inside_its_share_go_on():
    guard = MemoryGuard(WorkBudget("roomy", memory_bytes=5e9))
    guard.check()
    guard.close()


def test_training_is_refused_before_the_model_or_the_accountant_exists(monkeypatch):
    from dpcore.training import TrainConfig, train

    X = np.random.default_rng(0).normal(size=(200, 4)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    monkeypatch.setattr("dpcore.training.engine.resolve_noise_multiplier",
                        lambda *a, **k: pytest.fail("the accountant ran before the work was checked"))
    set_default_budget(WorkBudget("small", steps=100))
    with pytest.raises(WorkBudgetExceeded) as err:
        train(X, y, TrainConfig(model="linear", epochs=1_000_000, batch_size=50, target_epsilon=1.0, delta=1e-5))
    largest = _largest(str(err.value), "epochs")
    assert largest == 25  # 4 steps an epoch on 200 rows in batches of 50


def test_training_within_the_budget_runs():
    from dpcore.training import TrainConfig, train

    X = np.random.default_rng(0).normal(size=(200, 4)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    set_default_budget(WorkBudget("small", steps=100))
    res = train(X, y, TrainConfig(model="linear", epochs=25, batch_size=50, target_epsilon=1.0, delta=1e-5))
    assert len(res.history) == 25


def test_a_huge_hidden_layer_is_refused_by_its_parameter_count():
    from dpcore.training import TrainConfig
    from dpcore.training.engine import training_work

    work = training_work(TrainConfig(model="mlp", hidden=100_000, depth=3, private=False), 5000, 784, 10)
    with pytest.raises(WorkBudgetExceeded, match="hidden=100000 asks for .* model parameters"):
        check_work(work, SERVER)


def test_k_means_with_too_many_clusters_is_refused_naming_k():
    from dpcore.models.kmeans import lloyd

    X = np.random.default_rng(0).uniform(-1, 1, size=(5000, 50))
    set_default_budget(SERVER)
    with pytest.raises(WorkBudgetExceeded, match=r"k=1000 and iterations=100 ask for .*use at most k=\d+ or "
                                                 r"iterations=\d+"):
        lloyd(X, 1000, rng=0)


def test_federated_rounds_beyond_the_budget_are_refused_naming_rounds():
    from dpcore.federated.fedavg import FedAvgConfig, train_fedavg

    X = np.random.default_rng(0).normal(size=(300, 5)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    set_default_budget(WorkBudget("small", steps=1000))
    with pytest.raises(WorkBudgetExceeded, match=r"rounds=100000000 and local_epochs=1 ask for .*use at most "
                                                 r"rounds=\d+"):
        train_fedavg(X, y, FedAvgConfig(mode="none", clients=30, rounds=100_000_000), X_test=X, y_test=y)


def test_a_sweep_with_too_many_runs_starts_none(tmp_path):
    from dpcore.sweep import SweepConfig, run_sweep

    cfg = SweepConfig(dataset="iris", learners=["majority"], axis="train_fraction", values=[0.5, 0.75, 1.0],
                      seeds=4, include_baselines=False)
    started = []
    set_default_budget(WorkBudget("small", runs=5))
    with pytest.raises(WorkBudgetExceeded, match=r"seeds=4 asks for 12 runs.*use at most seeds=1"):
        run_sweep(cfg, n_jobs=1, cache_dir=tmp_path, on_result=started.append)
    assert not started and not any(tmp_path.iterdir())


def test_random_fourier_features_beyond_the_memory_budget_are_refused_naming_n_components():
    from dpcore.models.erm import PrivateERMClassifier

    X = np.random.default_rng(0).uniform(-1, 1, size=(2000, 5))
    y = (X[:, 0] > 0).astype(int)
    set_default_budget(SERVER)
    est = PrivateERMClassifier(kernel="rff", n_components=100_000, epsilon=1.0, data_norm=1.0, random_state=0)
    with pytest.raises(WorkBudgetExceeded, match=r"n_components=100000 asks for .* bytes of memory.*use at most"):
        est.fit(X, y)
    assert not hasattr(est, "rff_")  # refused before the random features were drawn
