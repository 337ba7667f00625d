"""Privacy-leak warnings survive the table and the cache, attributed per learner; knob types are checked early."""
from __future__ import annotations

import warnings

import pytest

from dpcore.exceptions import DPValueError, PrivacyLeakWarning
from dpcore.sweep import SweepConfig, cached_result, run_sweep, summarize, table_warnings
from dpcore.sweep.config import check_knob_type


def _leaky_erm(cache_dir):
    cfg = SweepConfig(dataset="breast_cancer", learners=["erm-objective"], values=[0.1], seeds=1,
                      params={"preprocess": "standardize"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = run_sweep(cfg, n_jobs=1, cache_dir=cache_dir)
    return cfg, res, caught


def test_standardize_on_erm_objective_flags_the_rows_and_names_both_learners(cache_dir):
    cfg, res, caught = _leaky_erm(cache_dir)
    t = res.table.set_index("learner")
    assert t.loc["erm-objective", "leaks_privacy"] and t.loc["logreg", "leaks_privacy"]
    assert not t.loc["majority", "leaks_privacy"] and t.loc["majority", "warnings"] == ""
    assert "standard deviation of the private training rows" in t.loc["erm-objective", "warnings"]
    # de-duplicated by (learner, message): the private learner's copy is not dropped for the baseline's
    leaks = [str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    assert any(m.startswith("erm-objective: preprocess='standardize'") for m in leaks)
    assert any(m.startswith("logreg: preprocess='standardize'") for m in leaks)
    found = table_warnings(res.table)
    assert len(found) == 1 and found[0]["leak"] and found[0]["private"]
    assert found[0]["learners"] == ["erm-objective", "logreg"]
    assert summarize(res.table, "accuracy").set_index("learner").loc["erm-objective", "leaks_privacy"]

    # read back whole from the cache: the flag and the text are still there
    again = cached_result(cfg, cache_dir=cache_dir)
    assert again is not None and again.table.cached.all()
    assert list(again.table.leaks_privacy) == list(res.table.leaks_privacy)
    assert list(again.table.warnings) == list(res.table.warnings)


def test_bounds_preprocessing_does_not_flag(cache_dir):
    cfg = SweepConfig(dataset="breast_cancer", learners=["erm-objective"], values=[1.0], seeds=1,
                      params={"preprocess": "bounds"}, include_baselines=False)
    res = run_sweep(cfg, n_jobs=1, cache_dir=cache_dir)
    assert not res.table.leaks_privacy.any()
    assert not any(w["leak"] for w in table_warnings(res.table))


def test_non_leak_warnings_are_kept_but_not_flagged(fakes, cache_dir):
    import pandas as pd

    t = pd.DataFrame({"learner": ["fake-dp"], "role": ["swept"], "leaks_privacy": [False],
                      "warnings": ["did not converge | lr is large"]})
    assert [(w["message"], w["leak"]) for w in table_warnings(t)] == [("did not converge", False),
                                                                      ("lr is large", False)]


def test_a_warning_raised_by_some_runs_says_at_which_axis_values_and_how_many_runs():
    import pandas as pd

    from dpcore.ui.sweep import _where_raised

    t = pd.DataFrame({"learner": ["dp"] * 4 + ["base"], "role": ["swept"] * 4 + ["baseline"], "axis": "epsilon",
                      "value": [0.1, 0.1, 1.0, 1.0, float("nan")], "seed": [0, 1, 0, 1, 0],
                      "leaks_privacy": False, "warnings": ["no skill", "no skill", "", "", "no skill"]})
    (w,) = table_warnings(t)
    assert w["learners"] == ["dp", "base"] and w["where"] == {0.1: (2, 2)} and not w["everywhere"]
    assert _where_raised(w, t) == "At ε = 0.1: "
    t.loc[1, "warnings"] = ""
    assert _where_raised(table_warnings(t)[0], t) == "At ε = 0.1 (1 of 2 runs): "
    t["warnings"] = "no skill"  # every run: nothing to name
    assert table_warnings(t)[0]["everywhere"] and _where_raised(table_warnings(t)[0], t) == ""


@pytest.mark.parametrize("params, match", [
    ({"epochs": "abc"}, r"epochs must be a whole number from 1 to 10000, got 'abc'"),
    ({"epochs": 2.5}, "epochs must be a whole number"),
    ({"clip_norm": "big"}, r"clip_norm must be a number from 0 \(excluded\) to 1e\+06"),
    ({"epochs": True}, "epochs must be a whole number"),
    ({"epochs": -1}, "epochs must be a whole number from 1 to 10000, got -1"),
    ({"epochs": 0}, "epochs must be a whole number from 1 to 10000, got 0"),
    ({"clip_norm": 1e308}, r"clip_norm must be a number from 0 \(excluded\) to 1e\+06"),
])
def test_knob_types_are_checked_when_the_config_is_built(fakes, params, match):
    with pytest.raises(DPValueError, match=match):
        SweepConfig(dataset="iris", learners=["fake-dp"], values=[1.0], params=params,
                    providers=("sweep_fake_learners",))


def test_knob_types_accept_the_right_values(fakes):
    cfg = SweepConfig(dataset="iris", learners=["fake-dp"], values=[1.0], params={"epochs": 3.0, "clip_norm": 2},
                      providers=("sweep_fake_learners",))
    assert cfg.params == {"epochs": 3, "clip_norm": 2}
    assert isinstance(cfg.params["epochs"], int)
    assert check_knob_type("fit_intercept", False) is False
    assert check_knob_type("fit_intercept", "yes") is True
    with pytest.raises(DPValueError, match="fit_intercept must be true or false, got 'maybe'"):
        check_knob_type("fit_intercept", "maybe")
    assert check_knob_type("model", "mlp") == "mlp"  # some learner (the networks) takes it


def test_regularization_knob_takes_a_number_or_auto():
    assert check_knob_type("regularization", "auto") == "auto"
    assert check_knob_type("regularization", 0.1) == 0.1
    with pytest.raises(DPValueError, match="regularization"):
        check_knob_type("regularization", "tune")


def test_the_axis_values_in_a_warning_are_rounded_as_on_the_chart():
    import numpy as np
    import pandas as pd

    from dpcore.sweep import value_range
    from dpcore.ui.sweep import _where_raised

    values = value_range("epsilon", 0.1, 10, 5)  # 0.316, 3.16 ...
    t = pd.DataFrame({"learner": "dp", "role": "swept", "axis": "epsilon", "value": np.repeat(values, 2),
                      "seed": [0, 1] * 5, "leaks_privacy": False, "warnings": ["no skill", ""] * 5})
    assert _where_raised(table_warnings(t)[0], t) == ("At ε = 0.1 (1 of 2 runs), 0.316 (1 of 2 runs), 1 (1 of 2 runs), "
                                                      "3.16 (1 of 2 runs), 10 (1 of 2 runs): ")


def test_an_upload_whose_bounds_were_read_from_its_rows_flags_every_private_row_of_the_exported_table(cache_dir):
    from dpcore.datasets import load_csv

    rng = __import__("numpy").random.default_rng(0)
    rows = "\n".join(f"{a:.2f},{b:.2f},{int(a + b > 1)}" for a, b in rng.random((120, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inferred = load_csv("a,b,y\n" + rows, label_column="y")  # no bounds declared: min and max of the rows
        declared = load_csv("a,b,y\n" + rows, label_column="y", bounds="*=0:1", categories="y=0|1")
        cfg = SweepConfig(dataset=inferred, learners=["erm-objective"], values=[1.0], seeds=1,
                          params={"preprocess": "bounds"})
        t = run_sweep(cfg, n_jobs=1, cache_dir=cache_dir).table.set_index("learner")
        clean = run_sweep(SweepConfig(dataset=declared, learners=["erm-objective"], values=[1.0], seeds=1,
                                      params={"preprocess": "bounds"}), n_jobs=1, cache_dir=cache_dir).table
    assert t.loc["erm-objective", "leaks_privacy"]  # its ε is not a guarantee: the CSV a data owner downloads says so
    assert "bounds of 'a', 'b' were read from the uploaded rows" in t.loc["erm-objective", "warnings"]
    assert not t.loc["majority", "leaks_privacy"] and not t.loc["logreg", "leaks_privacy"]  # no ε to qualify
    assert not clean.leaks_privacy.any()
    # on a leaking row, only the leak is called one: a utility warning of the same run stays a utility warning
    row = t.loc[["erm-objective"]].reset_index().assign(warnings=lambda d: d.warnings + " | no better than chance")
    said = {w["message"]: w["leak"] for w in table_warnings(row)}
    assert said["no better than chance"] is False and any(leak for m, leak in said.items() if "bounds of" in m)


def test_a_wide_uploads_leak_warning_names_five_columns_and_counts_the_rest_as_the_upload_does(cache_dir):
    from dpcore.datasets import load_csv

    rng = __import__("numpy").random.default_rng(1)
    header = ",".join(f"x{j:02d}" for j in range(45)) + ",y"
    rows = "\n".join(",".join(f"{v:.2f}" for v in r) + f",{int(r[0] > 0.5)}" for r in rng.random((120, 45)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # no bounds declared: min and max of the rows
        ds = load_csv(header + "\n" + rows, label_column="y", categories="y=0|1")
        t = run_sweep(SweepConfig(dataset=ds, learners=["erm-objective"], values=[1.0], seeds=1), n_jobs=1,
                      cache_dir=cache_dir).table.set_index("learner")
    said = t.loc["erm-objective", "warnings"]
    assert "bounds of 'x00', 'x01', 'x02', 'x03', 'x04' and 40 more were read from the uploaded rows" in said
    assert "'x05'" not in said
    upload = next(str(w.message) for w in caught if "read from the data itself" in str(w.message))
    assert upload.startswith("the bounds of 'x00', 'x01', 'x02', 'x03', 'x04' and 40 more were read")


def test_learners_protecting_different_units_are_told_apart_not_just_by_their_neighbours():
    import pandas as pd

    from dpcore.sweep.summary import neighbouring_note

    def table(*pairs):
        return pd.DataFrame({"learner": [n for n, _ in pairs], "role": "swept",
                             "neighbouring": [r for _, r in pairs]})

    label = neighbouring_note(table(("erm-objective", "replace-one"), ("label-dp-rr", "replace-one")))
    assert "Different guarantees" in label and "each record's label only" in label  # same relation, not same unit
    fed = neighbouring_note(table(("dpsgd", "add-remove"), ("dp-fedavg", "add-remove")))
    assert "each client's whole data" in fed and "factor 2" not in fed
    two = neighbouring_note(table(("dpsgd", "add-remove"), ("erm-objective", "replace-one")))
    assert "Two meanings" in two and "factor 2" in two and "'s protects" not in two
    assert neighbouring_note(table(("dpsgd", "add-remove"), ("ssp", "add-remove"))) is None


def test_every_row_of_a_sweep_with_no_usable_noise_says_why_its_epsilon_is_infinite_and_the_caller_hears_it_once(
        cache_dir):
    """Said per run, not once per process: each row keeps the reason (its table, its cache); the sweep's caller is
    told once for the learner."""
    cfg = SweepConfig(dataset="iris", learners=["dpsgd"], values=[1.0, 2.0], seeds=2,
                      params={"noise_multiplier": 1e-160, "epochs": 5}, include_baselines=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = run_sweep(cfg, n_jobs=1, cache_dir=cache_dir)
    assert len(res.table) == 4 and (res.table.epsilon == float("inf")).all()
    assert res.table.warnings.str.contains("reported as infinity").all()
    assert sum("reported as infinity" in str(w.message) for w in caught) == 1
