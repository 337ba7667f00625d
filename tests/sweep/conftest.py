"""Fixtures of the sweep tests: fake learners registered for one test, a private cache, a call log."""
from __future__ import annotations

import pathlib

import pytest

import sweep_fake_learners


@pytest.fixture
def fakes():
    sweep_fake_learners.register_learners()
    yield sweep_fake_learners
    sweep_fake_learners.unregister_learners()


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
