"""Every run the command line starts is bounded, and every value given is used or refused.

Each reproducer used to run for minutes or take gigabytes; it is now refused by the work budget before anything
is allocated, with a message naming the parameter(s) and a value that fits. The tests make the engine's first
allocation fail the test, so a refusal that came after the work started would fail here.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from dpcore.cli import main


def _refused(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, err
    return errors[0]


def _never(what: str):
    def fail(*args, **kwargs):
        pytest.fail(f"{what} ran before the work was checked")
    return fail


def test_federated_rounds_and_local_epochs_beyond_the_budget_are_refused_before_any_client_exists(capsys,
                                                                                                 monkeypatch):
    monkeypatch.setattr("dpcore.federated.fedavg.partition_clients", _never("the client split"))
    msg = _refused(capsys, ["train", "--dataset", "adult", "--algorithm", "dp-fedavg", "--rounds", "10000",
                            "--local-epochs", "100"])
    assert re.search(r"rounds=10000 and local_epochs=100 ask for about [\d.e+]+ seconds of work; at most 120 are "
                     r"allowed per run; use at most rounds=\d+ or local_epochs=\d+", msg), msg
    assert "DPCORE_MAX_RUN_SECONDS" in msg


def test_dplloyd_with_1000_clusters_and_1000_rounds_is_refused_before_any_centre_is_drawn(capsys, monkeypatch):
    monkeypatch.setattr("dpcore.models.kmeans.su_count_fraction", _never("DPLloyd"))
    msg = _refused(capsys, ["cluster", "--dataset", "adult", "--algorithm", "dplloyd", "--k", "1000",
                            "--iterations", "1000"])
    assert re.search(r"k=1000 and iterations=1000 ask for .*use at most k=\d+ or iterations=\d+", msg), msg


@pytest.fixture(scope="module")
def wide_csv(tmp_path_factory):
    """100 rows of 3,000 and of 10,000 feature columns, and a two-class label."""
    rng = np.random.default_rng(0)
    paths = {}
    for columns in (3_000, 10_000):
        frame = pd.DataFrame(rng.normal(size=(100, columns)).round(2), columns=[f"f{i}" for i in range(columns)])
        frame["label"] = rng.integers(0, 2, 100)
        paths[columns] = tmp_path_factory.mktemp("wide") / f"wide{columns}.csv"
        frame.to_csv(paths[columns], index=False)
    return paths


@pytest.mark.parametrize("columns", [3_000, 10_000])
def test_random_features_of_a_wide_upload_are_refused_by_memory_before_they_are_drawn(capsys, monkeypatch,
                                                                                       wide_csv, columns):
    # 3,000 columns took 3.0 GB; 10,000 tried to allocate 7.45 GiB: the d x D projection was not counted
    import dpcore.models.erm as erm

    monkeypatch.setattr(erm, "RandomFourierFeatures", _never("the random features"))
    asked = []
    real = erm.erm_work
    monkeypatch.setattr(erm, "erm_work", lambda *a: asked.append(a) or real(*a))
    msg = _refused(capsys, ["train", "--data", str(wide_csv[columns]), "--label", "label", "--seed", "0",
                            "--algorithm", "erm-objective", "--kernel", "rff", "--n-components", "100000"])
    m = re.search(r"n_components=100000 asks for ([\d.e+]+) bytes of memory; at most 2e\+09 are allowed per run; "
                  r"use at most n_components=(\d+)", msg)
    assert m, msg
    assert float(m.group(1)) > 8.0 * columns * 100_000  # the projection alone
    n, d, _, models = asked[0]
    largest = int(m.group(2))
    assert d == columns
    assert real(n, d, largest, models).memory_bytes <= 2e9 < real(n, d, largest + 1, models).memory_bytes


def test_a_sweep_range_of_a_billion_points_is_refused_before_the_values_exist(capsys, monkeypatch):
    monkeypatch.setattr("numpy.geomspace", _never("the range"))
    msg = _refused(capsys, ["sweep", "--dataset", "iris", "--range", "0.1,10,1000000000", "--no-cache"])
    assert "--range N=1000000000 asks for 1e+09 runs; at most 2e+03 are allowed in one sweep; use at most " \
           "--range N=2000" in msg, msg


@pytest.mark.parametrize("jobs", ["1000", "1000000000"])
def test_more_sweep_jobs_than_cores_are_capped_at_the_cores_with_a_note(capsys, monkeypatch, jobs):
    import os

    import dpcore.sweep.engine as engine

    started = []
    monkeypatch.setattr(engine, "_run_loky", lambda missing, n_jobs, *a, **k: started.append(n_jobs) or [
        engine.execute_run(run) for run in ()])
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(engine, "IN_PROCESS_SECONDS", -1.0)  # this tiny run goes to the workers all the same
    monkeypatch.setattr(engine, "IN_PROCESS_SECONDS_WARM", -1.0)
    code = main(["sweep", "--dataset", "iris", "--algorithms", "erm-objective", "--values", "1", "--seeds", "1",
                 "--jobs", jobs, "--no-cache", "--no-baselines"])
    err = capsys.readouterr().err
    assert f"warning: n_jobs={jobs} (--jobs) is more worker processes than this machine's 2 cores: using 2" in err
    assert started == [2], (code, err)


def test_the_library_caps_jobs_at_the_cores_too(monkeypatch):
    import os

    from dpcore.sweep.engine import _check_jobs

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    with pytest.warns(UserWarning, match="n_jobs=43 .* using 2"):
        assert _check_jobs(43) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _check_jobs(2) == 2 and _check_jobs(-1) == -1
        assert _check_jobs(43, local=False) == 43  # a cluster's workers are not this machine's cores


@pytest.mark.parametrize("flags, named", [
    (["--algorithm", "erm-output", "--n-components", "10"], "--n-components 10 is used only when --kernel is rff"),
    (["--algorithm", "erm-objective", "--gamma", "2"], "--gamma 2 is used only when --kernel is rff"),
    (["--algorithm", "erm-output", "--huber-h", "0.1"], "--huber-h 0.1 is used only when --model is svm"),
    (["--algorithm", "erm-objective", "--fit-intercept", "false", "--intercept-scale", "0.5"],
     "--intercept-scale 0.5 is used only when --fit-intercept is true"),
    (["--algorithm", "dpsgd", "--model", "linear", "--depth", "3"], "--depth 3 is used only when --model is mlp"),
])
def test_a_knob_the_run_would_not_use_is_refused_naming_its_flag_and_what_it_needs(capsys, monkeypatch, flags,
                                                                                    named):
    monkeypatch.setattr("dpcore.cli.train.run_learner", _never("the learner"))
    msg = _refused(capsys, ["train", "--dataset", "iris", *flags])
    assert named in msg and "leave it out" in msg, msg


def test_a_knob_whose_condition_holds_is_used(capsys):
    assert main(["train", "--dataset", "iris", "--algorithm", "erm-output", "--kernel", "rbf",
                 "--n-components", "10", "--json"]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("argv, named", [
    (["reproduce", "--all", "--list"], "--all"),
    (["reproduce", "--list", "abadi2016-accountant"], "the name 'abadi2016-accountant'"),
    (["train", "--list", "--dataset", "iris"], "--dataset"),
])
def test_options_beside_list_are_refused_not_silently_dropped(capsys, argv, named):
    msg = _refused(capsys, argv)
    assert f"--list only lists, and runs nothing, so {named} would not be used" in msg, msg


def test_list_with_json_still_lists(capsys):
    assert main(["reproduce", "--list", "--json"]) == 0
    assert capsys.readouterr().out.startswith("[{")
