"""An upload whose label is a count with at most 20 values is guessed to be classes; the picker says so beside its
Task box, and stops saying it once a task is chosen."""
from __future__ import annotations

import pathlib

import numpy as np
from streamlit.testing.v1 import AppTest

PAGE = str(pathlib.Path(__file__).resolve().parents[2] / "pages" / "5_Tradeoff_explorer.py")


def _csv() -> bytes:
    rng = np.random.default_rng(11)
    x = rng.normal(size=(300, 2))
    visits = rng.poisson(4 + np.exp(x[:, 0]))
    return ("x1,x2,visits\n" + "".join(f"{a:.3f},{b:.3f},{v}\n" for (a, b), v in zip(x, visits))).encode()


def _said(at) -> list[str]:
    return [c.value for c in at.caption if "different whole numbers, so it is read as" in c.value]


def test_a_count_label_guessed_to_be_classes_is_said_beside_the_task_until_a_task_is_chosen(tmp_path, monkeypatch):
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    at.selectbox(key="sweep.dataset").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("shop.csv", _csv(), "text/csv")).run()
    assert not at.exception and at.selectbox(key="sweep.dataset.label").value == "visits"
    said = _said(at)
    assert len(said) == 1 and said[0].startswith("The label 'visits' holds ")
    assert said[0].endswith("it is a quantity to predict: choose Task: regression.")
    at.selectbox(key="sweep.dataset.task").set_value("regression").run()
    assert not at.exception and _said(at) == []
