"""Whatever a user types, the answer is a result or one clear error line, never a traceback.

Property-based: hypothesis draws numbers from the whole double range (0, subnormals, 1e308, inf,
nan, negatives), words and empty strings for the command line's accounting commands and for every
knob of every registered learner. A value a knob refuses is refused by the command line too, naming
the knob, before any work starts.
"""
from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import math
import warnings

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dpcore.accounting import dpsgd_epsilon
from dpcore.cli import main
from dpcore.exceptions import DPValueError
from dpcore.learners import learners
from dpcore.learners.knobs import parse_value
from tests.accounting.lower_bounds import dpsgd_lower_bound

FUZZ = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.sampled_from([0, 1e-300, 5e-324, 1e308, -1e308, 1e12, 1e13, 0.5, 1.0, 2.0]),
)
texts = st.one_of(st.sampled_from(["", " ", "abc", "1,2", "--", "nan", "inf", "-inf", "1e", "0x10", "true", "1e-5x"]),
                  st.text(alphabet="0123456789.e-+abcxyz ,", max_size=8))
anything = st.one_of(numbers.map(repr), numbers.map(str), texts)


def _run(argv: list[str]) -> tuple[int, str]:
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own refusals
            code = exc.code
    return code, err.getvalue()


def _assert_answered(code, stderr: str) -> None:
    assert "Traceback" not in stderr
    assert code in (0, 2), (code, stderr)
    if code == 2:
        errors = [line for line in stderr.splitlines() if line.startswith("error:") or ": error:" in line]
        assert len(errors) == 1, stderr


def _run_out(argv: list[str]) -> tuple[int, str, str]:
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def _strict(name):
    raise AssertionError(f"--json printed {name}, which is not JSON")


@FUZZ
@given(sigma=anything, q=anything, steps=anything, delta=anything, accountant=st.sampled_from(["rdp", "pld"]))
def test_epsilon_command_answers_any_values(sigma, q, steps, delta, accountant):
    code, out, err = _run_out(["epsilon", f"--noise-multiplier={sigma}", f"--sample-rate={q}", f"--steps={steps}",
                               f"--delta={delta}", f"--accountant={accountant}", "--json"])
    _assert_answered(code, err)
    assert len(err.splitlines()) < 20, err[:1000]  # no flood of numpy warnings
    if code == 0:  # strict JSON, and an epsilon never below an independent lower bound
        doc = json.loads(out.strip().splitlines()[-1], parse_constant=_strict)
        eps = math.inf if doc["epsilon"] == "inf" else doc["epsilon"]
        if doc["steps"] > 0 and doc["delta"] > 0:
            bound = dpsgd_lower_bound(sigma=doc["noise_multiplier"], q=doc["sample_rate"], steps=doc["steps"],
                                      delta=doc["delta"])
            assert eps >= bound, (doc, bound)


#: Extreme but valid accounting inputs: noise 1e-308 .. 1e6 (log-uniform), rates 1e-12 .. 1, 1 .. 1e7 steps.
extreme_sigma = st.floats(min_value=-308, max_value=6).map(lambda e: 10.0**e)
extreme_rate = st.one_of(st.just(1.0), st.floats(min_value=-12, max_value=0).map(lambda e: 10.0**e))


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(sigma=extreme_sigma, q=extreme_rate, steps=st.integers(min_value=1, max_value=10**7),
       accountant=st.sampled_from(["rdp", "pld"]))
def test_no_epsilon_of_extreme_inputs_is_below_an_independent_lower_bound(sigma, q, steps, accountant):
    if accountant == "pld":
        steps = min(steps, 10**4)  # PLD composes 1e7 steps in seconds to minutes; RDP covers them
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eps = dpsgd_epsilon(noise_multiplier=sigma, sample_rate=q, steps=steps, delta=1e-5, accountant=accountant,
                            pld_discretization=1e-2)
    assert not math.isnan(eps)
    assert eps >= dpsgd_lower_bound(sigma=sigma, q=q, steps=steps, delta=1e-5), (sigma, q, steps, eps)


@FUZZ
@given(eps=anything, q=anything, steps=anything, delta=anything, accountant=st.sampled_from(["rdp", "pld"]))
def test_noise_command_answers_any_values(eps, q, steps, delta, accountant):
    code, err = _run(["noise", f"--epsilon={eps}", f"--sample-rate={q}", f"--steps={steps}", f"--delta={delta}",
                      f"--accountant={accountant}"])
    _assert_answered(code, err)


KNOBS = [(name, knob) for name, spec in sorted(learners().items()) for knob in spec.knobs]
#: Each distinct knob once, with the learners that declare it: ``Knob.check`` reads only the knob's own fields (a
#: frozen dataclass), and the draws are derandomized, so a knob shared by five learners (hog_cell, activation, ...)
#: tried five times ran the same check on the same 25 values five times (198 cases, 94 distinct knobs).
DISTINCT_KNOBS: dict = {}
for _name, _knob in KNOBS:
    DISTINCT_KNOBS.setdefault(_knob, []).append(_name)


@pytest.mark.parametrize("knob", list(DISTINCT_KNOBS),
                         ids=[f"{k.name}@{'/'.join(names)}" for k, names in DISTINCT_KNOBS.items()])
@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(value=st.one_of(numbers, texts, st.booleans(), st.none()))
def test_every_knob_keeps_a_value_or_refuses_it_by_name(knob, value):
    for given_value in (value, parse_value(value) if isinstance(value, str) else value):
        try:
            kept = knob.check(given_value)
        except DPValueError as exc:
            assert str(exc).startswith(f"{knob.name} must be "), str(exc)
            continue
        assert knob.check(kept) == kept  # a kept value is clean: checking it again changes nothing
        if isinstance(kept, float):
            assert math.isfinite(kept)
            assert knob.high is None or kept <= knob.high
            assert knob.low is None or kept >= knob.low


def _refused(knob, text: str) -> bool:
    try:
        knob.check(text)
    except DPValueError:
        return True
    return False


TRAIN = [(n, k) for n, k in KNOBS if not learners()[n].images_only and k.kind in ("int", "float")]


@pytest.mark.parametrize("learner,knob", TRAIN, ids=[f"{n}-{k.name}" for n, k in TRAIN])
@settings(max_examples=6, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(value=anything)
def test_the_command_line_refuses_what_the_knob_refuses_before_any_work(learner, knob, value):
    assume(value.strip() and not value.strip().startswith("-") and "=" not in value)
    assume(_refused(knob, value))
    dataset = "iris" if "classification" in learners()[learner].tasks else "diabetes"
    code, err = _run(["train", "--dataset", dataset, "--algorithm", learner, "--set", f"{knob.name}={value}"])
    _assert_answered(code, err)
    assert code == 2 and knob.name in err, err


@FUZZ
@given(k=anything, eps=anything, iterations=anything, algorithm=st.sampled_from(["dplloyd", "input-perturbation"]))
def test_cluster_command_answers_any_values(k, eps, iterations, algorithm):
    code, err = _run(["cluster", "--dataset", "iris", "--algorithm", algorithm, f"--k={k}", f"--epsilon={eps}",
                      f"--iterations={iterations}"])
    _assert_answered(code, err)


#: Values no count, size or probability can take.
nonsense = st.one_of(st.sampled_from(["0", "-1", "-0.5", "nan", "inf", "-inf", "1e308", "1e20", "2.5e9", "abc", ""]),
                     st.text(alphabet="xyz,;-", min_size=1, max_size=4))


@settings(max_examples=20, deadline=None, derandomize=True, database=None)
@given(flag=st.sampled_from(["--shadows", "--canaries", "--pool-size", "--confidence", "--epsilon", "--delta"]),
       value=nonsense, attack=st.sampled_from(["loss", "lira", "one-run"]))
def test_audit_command_refuses_nonsense_before_training(flag, value, attack):
    code, err = _run(["audit", "--dataset", "iris", "--algorithm", "dpsgd", "--attack", attack, f"{flag}={value}"])
    _assert_answered(code, err)
    assert code == 2


@settings(max_examples=20, deadline=None, derandomize=True, database=None)
@given(values=st.lists(nonsense, min_size=1, max_size=3).map(",".join), axis=st.sampled_from(["epsilon", "epochs"]))
def test_sweep_command_refuses_nonsense_axis_values_before_any_run(values, axis):
    code, err = _run(["sweep", "--dataset", "iris", "--algorithm", "dpsgd", "--axis", axis, f"--values={values}",
                      "--no-cache"])
    _assert_answered(code, err)
    assert code == 2


#: Sizes from tiny to absurd, for the inputs that drive a run's time and memory.
sizes = st.one_of(st.integers(min_value=1, max_value=10**12),
                  st.sampled_from([1, 2, 100, 1000, 10**4, 10**5, 10**6, 10**9, 10**12]))


@settings(max_examples=12, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=st.sampled_from([
    ("train", "--algorithm", "dp-fedavg", "--rounds", "{a}", "--local-epochs", "{b}"),
    ("cluster", "--algorithm", "dplloyd", "--k", "{a}", "--iterations", "{b}"),
    ("train", "--algorithm", "erm-objective", "--kernel", "rff", "--n-components", "{a}", "--gamma", "{b}"),
    ("train", "--algorithm", "dpsgd", "--model", "mlp", "--hidden", "{a}", "--epochs", "{b}"),
    ("sweep", "--algorithms", "erm-objective", "--range", "0.1,10,{a}", "--seeds", "{b}", "--no-cache"),
    ("sweep", "--algorithms", "erm-objective", "--values", "1", "--seeds", "1", "--jobs", "{a}", "--no-cache"),
]), a=sizes, b=sizes)
def test_sizes_from_tiny_to_absurd_are_run_within_the_budget_or_refused_at_once(case, a, b):
    """Runaway runs, widened: any size either fits the budget (a small one here, so that what runs is
    short) or is refused with one error line before any work starts, and more --jobs than cores are capped with a
    warning."""
    import os

    argv = [case[0], "--dataset", "iris", *(x.format(a=a, b=b) for x in case[1:])]
    small = {"DPCORE_MAX_RUN_SECONDS": "3", "DPCORE_WORK_BUDGET": "run,runs=12"}
    before = {k: os.environ.get(k) for k in small}
    os.environ.update(small)
    try:
        code, err = _run(argv)
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    _assert_answered(code, err)
    if "--jobs" in case and code == 0 and a > (os.cpu_count() or 1):
        assert f"warning: n_jobs={a} (--jobs)" in err


def _library_calls():
    """(id, call, what the refusal must name): the public entry points given values they cannot use."""
    import numpy as np
    import pandas as pd

    import dpcore
    from dpcore.audit import audit
    from dpcore.mechanisms import Gaussian, Laplace, RandomizedResponse, SecureGaussian, SecureLaplace

    df = pd.DataFrame({"a": np.arange(40.0) % 7, "b": np.arange(40.0) % 5, "y": np.arange(40) % 2})
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    return [
        ("laplace-word", lambda: Laplace(epsilon=1.0).randomise("abc"), "values"),
        ("gaussian-empty-text", lambda: Gaussian(epsilon=1.0, delta=1e-5).randomise(""), "values"),
        ("secure-laplace-word", lambda: SecureLaplace(epsilon=1.0).randomise("abc"), "values"),
        ("randomized-response-none", lambda: RandomizedResponse(epsilon=1.0, k=3).randomise(None), "values"),
        ("randomized-response-word", lambda: RandomizedResponse(epsilon=1.0, k=3).randomise("abc"), "values"),
        ("randomized-response-ragged", lambda: RandomizedResponse(epsilon=1.0, k=3).randomise([1, [2]]), "values"),
        ("gaussian-sensitivity-1e308", lambda: Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1e308), "sensitivity"),
        ("gaussian-subnormal-sensitivity", lambda: Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1e-320),
         "sensitivity"),
        ("classic-gaussian-noise-beyond-1e100",
         lambda: Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1e200, calibration="classic"), "sensitivity"),
        ("secure-gaussian-noise-beyond-1e100", lambda: SecureGaussian(epsilon=0.5, delta=1e-5, sensitivity=1e300),
         "sensitivity"),
        ("secure-laplace-scale-beyond-doubles", lambda: SecureLaplace(epsilon=1e-320, sensitivity=1e-300), "epsilon"),
        ("erm-subnormal-epsilon", lambda: dpcore.PrivateERMClassifier(epsilon=1e-320, random_state=0).fit(X, y),
         "epsilon"),
        ("run-learner-params-not-a-mapping", lambda: dpcore.run_learner("logreg", "iris", params=[1, 1]), "params"),
        ("run-learner-params-a-word", lambda: dpcore.run_learner("logreg", "iris", params="abc"), "params"),
        ("as-dataset-drop-a-number", lambda: dpcore.as_dataset(df, label="y", drop=-1), "drop"),
        ("as-dataset-task-an-array", lambda: dpcore.as_dataset(df, label="y", task=np.array([1.0, 2.0])), "task"),
        ("load-dataset-a-list", lambda: dpcore.load_dataset(["iris"]), "dataset"),
        ("ledger-unit-an-array", lambda: dpcore.PrivacyLedger(delta=1e-5, unit=np.array([1.0, 2.0])), "unit"),
        ("audit-confidence-whose-significance-is-1",
         lambda: audit(None, np.arange(10.0) + 10, np.arange(10.0), confidence=1e-320), "confidence"),
    ]


@pytest.mark.parametrize("case", _library_calls(), ids=lambda case: case[0])
def test_the_library_refuses_values_it_cannot_use_by_name_not_with_an_error_from_inside(case):
    """A value the library's entry points cannot use is refused with a DPCoreError naming the parameter, not a bare
    TypeError, ValueError, OverflowError or ZeroDivisionError from numpy, fractions or math (what to do is said too)."""
    from dpcore.exceptions import DPCoreError

    _name, call, names = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(DPCoreError) as refused:
            call()
    assert names in str(refused.value)


def test_drop_none_leaves_no_column_out():
    """drop=None reads as no column left out, as the default () does, rather than failing to iterate None."""
    import numpy as np
    import pandas as pd

    import dpcore

    df = pd.DataFrame({"a": np.arange(40.0) % 7, "b": np.arange(40.0) % 5, "y": np.arange(40) % 2})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert dpcore.as_dataset(df, label="y", drop=None, bounds="*=0:7").X.shape == (40, 2)


@pytest.mark.parametrize("typed, meant", [("epsilon", "target_epsilon"), ("lr", "learning_rate"),
                                          ("clipnorm", "clip_norm"), ("sigma", "noise_multiplier")])
def test_a_config_given_a_parameter_it_does_not_have_names_the_one_meant(typed, meant):
    # Python's own TypeError named the argument ('unexpected keyword argument epsilon') but not target_epsilon
    from dpcore.federated.config import FedAvgConfig
    from dpcore.training import TrainConfig

    for cls in (TrainConfig, FedAvgConfig):
        if meant not in {f.name for f in dataclasses.fields(cls)}:
            continue
        with pytest.raises(DPValueError, match=rf"{cls.__name__} has no parameter '{typed}' \(did you mean "
                                               rf"'{meant}'\?\)"):
            cls(**{typed: 1.0})
