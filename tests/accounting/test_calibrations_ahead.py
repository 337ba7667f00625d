"""Noise calibrations worked out ahead in a second process (dpcore.accounting.ahead): the same sigma as computed
here, the same warnings raised by the caller, and whatever the second process cannot do computed here."""
from __future__ import annotations

import sys
import warnings

import pytest

from dpcore.accounting import ahead
from dpcore.accounting.ahead import CalibrationsAhead, calibrated_sigma, calibrating_ahead
from dpcore.accounting.calibration import dpsgd_noise_multiplier
from dpcore.exceptions import DPCoreWarning

_LADDER = [(e, 1e-5, 0.05, 200, "rdp") for e in (0.3, 0.5, 1.0, 2.0, 4.0, 8.0)]


def _taken(helper: CalibrationsAhead, keys) -> dict:
    out = {}
    for k in keys:
        got = helper.take(k)
        out[k] = ("there", got) if got is not None else ("here", None)
    return out


def test_a_calibration_worked_out_ahead_is_the_one_computed_here():
    with CalibrationsAhead(start_at=1) as helper:
        helper.add(_LADDER)
        got = _taken(helper, reversed(_LADDER))  # from the back: the second process's own order
    there = {k: v[1] for k, v in got.items() if v[0] == "there"}
    assert there, "the second process answered nothing"
    for key, (sigma, said, curves) in there.items():
        assert sigma == dpsgd_noise_multiplier(*key) and said == [] and len(curves) == 1


def test_the_caller_takes_from_the_front_what_the_second_process_has_not_started():
    with CalibrationsAhead(start_at=1) as helper:
        helper.add(_LADDER)
        first = helper.take(_LADDER[0])  # at once: the second process started from the back
        assert first is None
        assert helper.take(_LADDER[0]) is None  # claimed here: a second caller computes it too, never waits


def test_a_warning_raised_in_the_second_process_is_carried_with_its_sigma():
    key = (1e8, 1e-5, 0.1, 100, "rdp")  # met even by the least noise searched: said with a DPCoreWarning
    with CalibrationsAhead(start_at=1) as helper:
        helper.add([key])
        got = helper.take(key)
    assert got is not None
    sigma, said, _ = got
    assert sigma == 0.001
    assert [c for c, _ in said] == [DPCoreWarning] and "met even by the least noise searched" in said[0][1]


def test_a_calibration_that_fails_there_is_computed_and_raised_here():
    key = (1.0, 0.0, 0.1, 100, "rdp")  # the Gaussian mechanism at delta 0: no sigma
    with CalibrationsAhead(start_at=1) as helper:
        helper.add([key])
        assert helper.take(key) is None


def test_without_a_second_process_the_caller_computes_everything(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    with CalibrationsAhead(start_at=1) as helper:
        helper.add(_LADDER)
        assert all(helper.take(k) is None for k in _LADDER)


def test_a_second_process_that_dies_leaves_its_calibrations_to_the_caller():
    with CalibrationsAhead(start_at=1) as helper:
        helper.add(_LADDER)
        helper._proc.kill()
        got = _taken(helper, _LADDER)
    for key, (where, value) in got.items():
        assert where == "here" or value[0] == dpsgd_noise_multiplier(*key)


def test_inside_calibrating_ahead_a_run_gets_the_sigma_and_warnings_it_gets_alone(monkeypatch):
    monkeypatch.setattr(ahead, "AHEAD_MIN", 1)
    keys = [(e, 1e-5, 0.07, 150, "rdp") for e in (0.4, 0.9, 1.7, 3.3, 1e8)]
    answered = []
    real_take = CalibrationsAhead.take
    monkeypatch.setattr(CalibrationsAhead, "take", lambda self, k: answered.append(real_take(self, k)) or answered[-1])
    calibrated_sigma.cache_clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with calibrating_ahead() as want:
            for k in keys:
                want(k)
            # the process started with the first key (AHEAD_MIN 1) and took it: the caller waits for it there
            inside = [calibrated_sigma(*k) for k in keys]
        calibrated_sigma.cache_clear()
        alone = [calibrated_sigma(*k) for k in keys]
    assert answered[0] is not None  # the second process's answer
    assert inside == alone
    assert "least noise searched" in inside[-1][1][0][0]


def test_fewer_calibrations_than_worth_a_process_start_none():
    with calibrating_ahead() as want:
        for k in _LADDER[:ahead.AHEAD_MIN - 1]:
            want(k)
        assert ahead._AHEAD.get()._proc is None


@pytest.mark.parametrize("key", [(1.3, 1e-5, 0.03, 300, "rdp"), (10.0, 1e-5, 0.1, 101, "rdp")],
                         ids=["finite at every order", "infinite at the largest orders"])
def test_the_rdp_curve_a_calibration_worked_out_there_is_the_one_the_odometer_here_computes(key):
    """The second process sends the RDP curve of one step at the sigma it found (dp_accounting's, read fail closed;
    at epsilon 10 its largest orders are infinite); the first odometer here takes it instead of computing it, and
    spends the same epsilon to the last bit."""
    from dpcore.accounting import PrivacyLedger, dpsgd_event
    from dpcore.accounting import ledger as L

    calibrated_sigma.cache_clear()
    ahead._CALIBRATED.discard(key)
    L._KNOWN_CURVES.clear()  # curves an earlier sweep of this process was sent and no odometer asked for
    with calibrating_ahead(expected=ahead.AHEAD_MIN) as want:
        want(key)
        L._rdp_curve.cache_clear()
        sigma, _ = calibrated_sigma(*key)
    event = dpsgd_event(noise_multiplier=sigma, sample_rate=key[2], steps=key[3])
    atom = next(iter(L._KNOWN_CURVES))
    assert atom[0] == event.event
    there = PrivacyLedger(delta=1e-5).spend(event)
    assert not L._KNOWN_CURVES  # taken by the odometer
    L._rdp_curve.cache_clear()
    assert PrivacyLedger(delta=1e-5).spend(event) == there <= key[0]


_OTHER_SERVER = """import json, sys
for line in sys.stdin:  # another calibration (an old dpcore, or a program that only looks like this one)
    sys.stdout.write(json.dumps({"key": json.loads(line), "sigma": 0.5, "warnings": [], "curves": None}) + "\\n")
    sys.stdout.flush()
"""


def test_a_second_process_started_beside_another_dpcore_answers_with_this_one(tmp_path, monkeypatch):
    # a dpcore in the working directory (an old copy) would be imported by `python -m dpcore.accounting.ahead`
    (tmp_path / "dpcore" / "accounting").mkdir(parents=True)
    (tmp_path / "dpcore" / "__init__.py").write_text("")
    (tmp_path / "dpcore" / "accounting" / "__init__.py").write_text("")
    (tmp_path / "dpcore" / "accounting" / "ahead.py").write_text(_OTHER_SERVER)
    monkeypatch.chdir(tmp_path)
    with CalibrationsAhead(start_at=1) as helper:
        helper.add(_LADDER)
        there = {k: got for k, got in ((k, helper.take(k)) for k in reversed(_LADDER)) if got is not None}
    assert there, "the second process answered nothing"
    assert all(got[0] == dpsgd_noise_multiplier(*k) for k, got in there.items())


def test_a_second_process_that_does_not_say_it_is_this_module_is_not_listened_to(tmp_path, monkeypatch):
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nexec {sys.executable} {tmp_path / 'server.py'}\n")
    fake.chmod(0o755)
    (tmp_path / "server.py").write_text(_OTHER_SERVER)
    monkeypatch.setattr(sys, "executable", str(fake))
    with CalibrationsAhead(start_at=1) as helper:
        helper.add(_LADDER)
        assert all(helper.take(k) is None for k in reversed(_LADDER))  # every one computed here


def test_a_path_entry_that_is_not_text_does_not_stop_the_second_process(monkeypatch):
    import pathlib

    monkeypatch.setattr(sys, "path", [*sys.path, pathlib.Path("/nonexistent"), b"/nonexistent/too"])
    with CalibrationsAhead(start_at=1) as helper:
        helper.add(_LADDER)
        there = {k: got for k, got in ((k, helper.take(k)) for k in reversed(_LADDER)) if got is not None}
    assert there and all(got[0] == dpsgd_noise_multiplier(*k) for k, got in there.items())


def test_a_second_process_that_never_answers_is_stopped_and_the_caller_computes(monkeypatch):
    import time

    monkeypatch.setattr(ahead, "_CHILD", "import time; time.sleep(600)")  # started, and silent
    monkeypatch.setattr(ahead, "PATIENCE", 1.0)
    with CalibrationsAhead(start_at=1) as helper:
        helper.add(_LADDER)
        t0 = time.monotonic()
        assert helper.take(_LADDER[-1]) is None  # given to it, never answered: the caller computes it
        assert time.monotonic() - t0 < 10
        assert helper._proc.wait(timeout=10) is not None  # stopped


def test_a_handed_over_curve_that_is_not_the_noises_own_is_never_read():
    """A curve of zeros handed over for a noise of 1e-160 would report epsilon 0; halved, a smaller epsilon. Each is
    checked against dp_accounting's value at order 2 and dropped: the odometer computes (and fails closed)."""
    from dpcore.accounting import PrivacyLedger, dpsgd_event
    from dpcore.accounting import ledger as L

    L._KNOWN_CURVES.clear()
    tiny = dpsgd_event(noise_multiplier=1e-160, sample_rate=0.1, steps=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        L._know_rdp_curves(tiny, [[0.0] * len(L._ORDERS)])
        assert not L._KNOWN_CURVES and PrivacyLedger(delta=1e-5).spend(tiny) == float("inf")
    one = dpsgd_event(noise_multiplier=0.9, sample_rate=0.1, steps=1)
    good = L._rdp_curves(one)
    L._know_rdp_curves(one, [[0.5 * v for v in good[0]]])
    assert not L._KNOWN_CURVES
    L._know_rdp_curves(one, good)
    assert len(L._KNOWN_CURVES) == 1
    L._KNOWN_CURVES.clear()
