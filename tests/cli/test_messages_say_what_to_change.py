"""Refusals on the command line name the flag the user typed and say what to change."""
from __future__ import annotations

import pytest

from dpcore.cli import main


def _error(argv, capsys) -> str:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own refusals exit
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


@pytest.mark.parametrize("command,given", [("epsilon", ["--noise-multiplier", "1"]), ("noise", ["--epsilon", "1"])])
def test_zero_steps_are_refused_by_both_accounting_commands_naming_steps(command, given, capsys):
    err = _error([command, *given, "--sample-rate", "0.01", "--steps", "0"], capsys)
    assert err.startswith("error: --steps must be at least 1") and "got 0" in err
