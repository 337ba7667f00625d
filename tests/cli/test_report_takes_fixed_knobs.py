"""The report command fixes a knob for every learner that takes it, as the Trade-off page's Fixed knobs and sweep's
--set do: the advice its warnings give (--set preprocess=bounds) can be followed on the command line."""
from __future__ import annotations

import pytest

from dpcore.cli import main


class _Stop(Exception):
    pass


def test_report_hands_its_set_knobs_to_the_advisor(monkeypatch):
    import dpcore.decision.advisor as advisor

    seen = {}

    def advise(*args, **kwargs):
        seen.update(kwargs)
        raise _Stop

    monkeypatch.setattr(advisor, "advise", advise)
    with pytest.raises(_Stop):
        main(["report", "--dataset", "breast_cancer", "--json", "--set", "preprocess=bounds", "--set", "epochs=3"])
    assert seen["params"] == {"preprocess": "bounds", "epochs": 3}


def test_a_set_without_a_value_is_refused_by_its_flag(capsys):
    assert main(["report", "--dataset", "breast_cancer", "--json", "--set", "epochs"]) != 0
    assert "--set expects KEY=VALUE" in capsys.readouterr().err
