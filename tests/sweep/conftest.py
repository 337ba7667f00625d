"""Fixtures of the sweep tests: fake learners registered for one test, a private cache, a call log."""
from __future__ import annotations

import pathlib
import sys

import pytest

# The fake learners must be importable by module name here and in worker processes (loky and Dask
# workers start with this process's sys.path), whatever pytest's import mode.
_HERE = str(pathlib.Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import sweep_fake_learners  # noqa: E402


@pytest.fixture
def fakes(monkeypatch):
    # learners without their own baseline fall back to the fake non-private one, never to a real (slow) one
    monkeypatch.setattr("dpcore.sweep.config.FALLBACK_BASELINES",
                        {"classification": ("no-such-learner", "fake-np"), "regression": ("fake-np",)})
    sweep_fake_learners.register_learners()
    yield sweep_fake_learners
    sweep_fake_learners.unregister_learners()


@pytest.fixture
def to_workers(monkeypatch):
    """Runs go to the worker processes however small their work (by default work below a worker's start-up cost
    trains in the calling process)."""
    from dpcore.sweep import engine

    monkeypatch.setattr(engine, "IN_PROCESS_SECONDS", -1.0)
    monkeypatch.setattr(engine, "IN_PROCESS_SECONDS_WARM", -1.0)


@pytest.fixture
def cache_dir(tmp_path) -> pathlib.Path:
    return tmp_path / "cache"


@pytest.fixture
def call_log(tmp_path):
    path = tmp_path / "calls.log"
    path.touch()

    def count() -> int:
        return len(path.read_text().splitlines())

    count.path = str(path)
    return count
