"""Every registered learner keeps the same contract, whoever wrote it.

Its declared knobs are the single source of its parameters: the defaults pass the learner's own
check, a value outside the declared range or an unknown name is refused with the knob's name,
and the command line, the sweep and the pages' widgets accept every knob it declares. A private
learner spends no more than the target epsilon it was given (read back from its dp_accounting
event), and the same seed gives the same result.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.accounting import epsilon_of_event
from dpcore.cli.train import knob_flags
from dpcore.datasets import train_test_split
from dpcore.exceptions import DPValueError
from dpcore.learners import get_learner, learners, run_learner
from dpcore.sweep.config import check_knob_type
from dpcore.ui.knobs import widget_spec

ALL = sorted(learners())
PRIVATE = [n for n in ALL if learners()[n].private]

#: Parameters that keep one run of each learner to about a second on a small dataset; the contract does
#: not depend on them.
QUICK = {"dpsgd": {"epochs": 2}, "non-private": {"epochs": 2}, "output-perturbation": {"epochs": 2},
         "label-dp-laplace": {"epochs": 2}, "label-dp-rr": {"epochs": 2},
         "dp-fedavg": {"rounds": 3}, "fedavg-local-dp": {"rounds": 3}, "fedavg": {"rounds": 3},
         "pate": {"teachers": 4, "queries": 10}}
#: How each learner reads its epsilon when it is not the whole budget: output perturbation's epsilon is per
#: released answer by default; "total" makes it the budget for all of them.
AS_TOTAL = {"output-perturbation": {"budget": "total"}}


def _dataset_for(spec) -> str:
    if spec.images_only:
        return "digits"
    return "iris" if "classification" in spec.tasks else "diabetes"


def _split(spec):
    return train_test_split(_dataset_for(spec), seed=0)


@pytest.mark.parametrize("name", ALL)
def test_declared_defaults_pass_the_learners_own_check(name):
    spec = get_learner(name)
    defaults = {k: v for k, v in spec.defaults(_split(spec)).items() if v is not None}
    assert spec.check_params(defaults) == {k: spec.knob(k).check(v) for k, v in defaults.items()}
    for knob in spec.knobs:
        if knob.choices:
            assert knob.default is None or knob.default in knob.choices, (name, knob.name)


@pytest.mark.parametrize("name", ALL)
def test_an_unknown_knob_is_refused_by_name(name):
    with pytest.raises(DPValueError, match="no_such_knob"):
        get_learner(name).check_params({"no_such_knob": 1})


def _out_of_range(knob):
    """A value the declaration must refuse, or None when every value of the type is allowed."""
    if knob.kind == "choice":
        return "no-such-choice"
    if knob.kind in ("int", "float"):
        if knob.high is not None and math.isfinite(knob.high):
            return knob.high * 10 + 1
        if knob.low is not None:
            return knob.low - 1
    return None


@pytest.mark.parametrize("name", ALL)
def test_a_value_outside_the_declared_range_is_refused_naming_the_knob(name):
    spec = get_learner(name)
    checked = 0
    for knob in spec.knobs:
        bad = _out_of_range(knob)
        if bad is None:
            continue
        with pytest.raises(DPValueError, match=knob.name):
            spec.check_params({knob.name: bad})
        if knob.kind in ("int", "float"):
            with pytest.raises(DPValueError, match=knob.name):
                spec.check_params({knob.name: float("nan")})
        checked += 1
    assert checked or not spec.knobs, f"{name} declares knobs but none with a range"


@pytest.mark.parametrize("name", ALL)
def test_every_declared_knob_reaches_the_command_line_the_sweep_and_the_pages(name):
    spec = get_learner(name)
    flags = knob_flags()
    split = _split(spec)
    for knob in spec.knobs:
        assert knob.name in flags, f"train has no --{knob.name.replace('_', '-')} for {name}"
        default = knob.default_for(split)
        if default is not None:
            assert check_knob_type(knob.name, default, [spec]) == knob.check(default)
        widget = widget_spec(knob, value=default)
        assert widget["widget"] in ("checkbox", "radio", "selectbox", "number_input", "text_input")
        if widget["widget"] == "number_input" and default is not None:
            lo, hi = widget.get("min_value"), widget.get("max_value")
            assert (lo is None or widget["value"] >= lo) and (hi is None or widget["value"] <= hi), knob.name


def _run(name, seed):
    spec = get_learner(name)
    return run_learner(name, _split(spec), epsilon=spec.default_epsilon if spec.private else None, delta=1e-5,
                       seed=seed, params={**QUICK.get(name, {}), **AS_TOTAL.get(name, {})})


def _certified(res) -> float:
    """The epsilon its dp_accounting event certifies at its delta: the tighter of the RDP and PLD accountants
    (each is an upper bound on the true epsilon of the event)."""
    delta = res.delta if res.delta > 0 else 0.0
    out = math.inf
    for accountant in ("rdp", "pld"):
        try:
            out = min(out, epsilon_of_event(res.event, delta=delta, neighbouring=res.neighbouring,
                                            accountant=accountant))
        except (DPValueError, NotImplementedError, ValueError):
            continue
    return out


@pytest.mark.parametrize("name", PRIVATE)
def test_a_private_learner_spends_no_more_than_its_target_and_its_event_says_so(name):
    spec = get_learner(name)
    res = _run(name, 0)
    assert res.epsilon <= spec.default_epsilon * (1 + 1e-6), (name, res.epsilon)
    assert res.event is not None and res.neighbouring is not None
    assert _certified(res) <= spec.default_epsilon * (1 + 1e-3), (name, _certified(res))


@pytest.mark.parametrize("name", ALL)
def test_the_same_seed_gives_the_same_result(name):
    a, b = _run(name, 3), _run(name, 3)
    assert a.metrics == b.metrics
    if a.test_outputs is not None:
        np.testing.assert_array_equal(a.test_outputs.values, b.test_outputs.values)


@pytest.mark.parametrize("name", sorted(n for n, s in learners().items() if s.private))
def test_without_an_epsilon_the_library_aims_at_the_budget_the_command_line_and_the_pages_start_from(name, monkeypatch):
    spec = get_learner(name)
    seen = []

    def run(split, *, epsilon, **kwargs):
        seen.append(epsilon)
        raise _Stop

    import dataclasses

    import dpcore.learners as learners_module

    monkeypatch.setattr(learners_module, "get_learner", lambda n: dataclasses.replace(spec, run=run))
    with pytest.raises(_Stop):
        run_learner(name, _dataset_for(spec))
    assert seen == [spec.default_epsilon]  # PATE's 5 and federated learning's 4, not the 1 of most learners


class _Stop(Exception):
    pass
