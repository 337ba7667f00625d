"""Shared test set-up: small thread pools so the suite behaves on a 2-core machine."""
from __future__ import annotations

import os
import pathlib
import tempfile

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
# finished runs and sweeps are cached on disk: the suite gets a fresh cache of its own, never the project's
os.environ.setdefault("DPCORE_CACHE_DIR", tempfile.mkdtemp(prefix="dpcore-test-cache-"))

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, scope="session")
def _torch_threads():
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover
        pass
    yield


@pytest.fixture
def root() -> pathlib.Path:
    return ROOT


@pytest.fixture
def cli(capsys):
    """``cli("train", "--json", ...)`` runs ``python -m dpcore ...``'s ``main`` in this process and returns a
    ``CompletedProcess`` (exit code, stdout, stderr): the same command as from a shell without the seconds spent
    importing torch again. tests/test_cli.py checks the shell's own process."""
    import subprocess

    from dpcore.cli import main

    def run(*args: str) -> subprocess.CompletedProcess:
        try:
            code = main([str(a) for a in args])
        except SystemExit as stop:  # argparse's own errors
            code = stop.code
        captured = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code or 0, captured.out, captured.err)

    return run


@pytest.fixture(autouse=True)
def _restore_main_module():
    """AppTest runs page scripts as ``__main__``; restore it so process-spawning tests
    (Dask nannies, multiprocessing) do not re-run a page script in their children."""
    import sys

    main = sys.modules.get("__main__")
    main_file = getattr(main, "__file__", None)
    yield
    sys.modules["__main__"] = main
    if main is not None and main_file is not None and getattr(main, "__file__", None) != main_file:
        main.__file__ = main_file


@pytest.fixture(autouse=True)
def _restore_work_budget():
    """Pages switch the process to the shared server's work budget; each test starts from the library's."""
    from dpcore.workload import COMMAND_LINE, set_default_budget

    yield
    set_default_budget(COMMAND_LINE)


@pytest.fixture(autouse=True)
def _fresh_shared_runs():
    """Results the server shares between visitors are per test: a test sees its own runs computed."""
    from dpcore.serving import shared_runs

    shared_runs().clear()
    yield
