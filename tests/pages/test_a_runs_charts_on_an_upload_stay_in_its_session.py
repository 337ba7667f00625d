"""The Train page's charts of a run on a visitor's file (its history, and its confusion matrix, whose rows and
columns are the label's classes: values of the data) are built in that session, kept by no cache of the server,
which holds its entries for every visitor after the session has ended; a registry dataset's are built once for all."""
from __future__ import annotations

import pathlib

from streamlit.testing.v1 import AppTest

import dpcore.ui.training as training

PAGE = str(pathlib.Path(__file__).resolve().parents[2] / "pages" / "2_Train_a_network.py")


def _page(dataset: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["train.dataset"] = dataset
    return at.run()


def _spy_on_the_shared_charts(monkeypatch) -> list:
    built = []
    history, confusion = training._history_figure_once, training._confusion_figure_once
    monkeypatch.setattr(training, "_history_figure_once",
                        lambda *a, **kw: built.append("history") or history(*a, **kw))
    monkeypatch.setattr(training, "_confusion_figure_once",
                        lambda *a, **kw: built.append("confusion") or confusion(*a, **kw))
    return built


def test_the_charts_of_a_run_on_an_upload_are_kept_by_no_cache_of_the_server(monkeypatch):
    built = _spy_on_the_shared_charts(monkeypatch)
    at = _page("upload")
    rows = b"".join(f"{i},{i % 7},{('healthy', 'Kahler')[i % 2]}\n".encode() for i in range(80))
    at.get("file_uploader")[0].set_value(("ward7.csv", b"a,b,diagnosis\n" + rows, "text/csv")).run()
    at.text_area(key="train.dataset.categories.ward7.csv").set_value("diagnosis=healthy|Kahler").run()
    at.button(key="train.run").click().run()
    assert not at.exception and not at.error
    assert len(at.get("vega_lite_chart")) >= 2  # the history and the confusion matrix, drawn all the same
    assert built == []


def test_the_charts_of_a_run_on_a_registry_dataset_are_built_once_for_the_whole_server(monkeypatch):
    built = _spy_on_the_shared_charts(monkeypatch)
    at = _page("iris")
    at.number_input(key="train.epochs.iris").set_value(3).run()
    at.button(key="train.run").click().run()
    assert not at.exception and not at.error
    assert "history" in built and "confusion" in built
