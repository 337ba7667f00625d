"""Page tests: AppTest paths are resolved from the project root, whatever file calls them."""
from __future__ import annotations

import pathlib

import pytest
from streamlit.testing.v1 import AppTest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def page(path: str, timeout: float = 180) -> AppTest:
    """``AppTest`` for ``path`` relative to the project root (e.g. ``"pages/2_Train_a_network.py"``)."""
    return AppTest.from_file(str(ROOT / path), default_timeout=timeout)


@pytest.fixture
def app_page():
    return page
