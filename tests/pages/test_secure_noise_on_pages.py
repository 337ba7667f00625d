"""An uploaded CSV trains in secure mode by default, with the seeded demo one click away; registry data stays seeded."""
from __future__ import annotations

import io

from sklearn.datasets import load_breast_cancer

from .test_train_page import _app


def _csv() -> bytes:
    frame = load_breast_cancer(as_frame=True).frame.iloc[:, [0, 1, 2, 3, -1]]
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    return buf.getvalue().encode()


def _upload(at):
    at.selectbox(key="train.dataset").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("mine.csv", _csv(), "text/csv")).run()
    return at


def _captions(at) -> str:
    return " ".join(c.value for c in at.sidebar.caption)


def test_an_upload_switches_to_secure_noise_and_hides_the_seed():
    at = _upload(_app())
    assert not at.exception
    toggle = at.toggle(key="train.seed.secure_upload")
    assert toggle.value is True
    assert not [n for n in at.sidebar.number_input if n.key == "train.seed"]  # no seed in secure mode
    assert "Secure noise" in _captions(at) and "cryptographic source" in _captions(at)
    at.button(key="train.run").click().run()
    assert not at.exception
    results = list(at.session_state["train.results"].values())
    assert results and results[-1]["secure"] is True


def test_the_seeded_demo_is_one_click_away_and_labelled():
    at = _upload(_app())
    at.toggle(key="train.seed.secure_upload").set_value(False).run()
    assert not at.exception
    assert at.number_input(key="train.seed").value == 0
    assert "Seeded demo mode" in _captions(at) and "not for a real release" in _captions(at)
    at.button(key="train.run").click().run()
    results = list(at.session_state["train.results"].values())
    assert results[-1]["secure"] is False


def test_a_registry_dataset_stays_seeded_by_default():
    at = _app()
    assert at.toggle(key="train.seed.secure_demo").value is False
    assert at.number_input(key="train.seed").value == 0
