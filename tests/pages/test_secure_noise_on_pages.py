"""An uploaded CSV trains in secure mode by default, with the seeded demo one click away; registry data stays seeded."""
from __future__ import annotations

import io
import pathlib

import pytest
from sklearn.datasets import load_breast_cancer
from streamlit.testing.v1 import AppTest

from .test_train_page import _app

ROOT = pathlib.Path(__file__).resolve().parents[2]


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
    assert any("Not yet a guarantee" in w.value and "Declared bounds" in w.value for w in at.warning)


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


PAGES_WITH_THE_SWITCH = {  # page -> (seed key, the form's submit button when the switch is in a form)
    "3_Clustering.py": ("cluster.seed", None),
    "4_Classical_models.py": ("classical.seed", None),
    "6_Noisy_images.py": ("images.seed", None),
    "7_PATE.py": ("pate.seed", "Run PATE"),
    "8_Federated_learning.py": ("fed.seed", "Train"),
    "9_Attack_the_model.py": ("audit.seed", "Train and attack"),  # submitted in the Attack page's own tests
}


@pytest.mark.parametrize("page,key,submit", [(p, k, s) for p, (k, s) in PAGES_WITH_THE_SWITCH.items()])
def test_every_page_that_releases_noise_offers_secure_noise_and_labels_the_seeded_demo(page, key, submit):
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=180)
    if page == "8_Federated_learning.py":
        at.session_state["fed.rounds"] = 5  # a short federation: the switch is under test, not the training
    at.run()
    assert not at.exception
    toggle = at.toggle(key=f"{key}.secure_demo")
    assert toggle.value is False  # registry data: the seeded demo, the same picture for the whole class
    assert "Seeded demo mode" in " ".join(c.value for c in at.caption)
    toggle.set_value(True).run()
    assert not at.exception
    if submit is None:
        assert not [n for n in at.number_input if n.key == key]  # no seed box in secure mode
    else:  # in a form the change shows when it is submitted; the seed box stays, marked as the demo's
        assert at.number_input(key=key).label == "Seed (seeded demo mode only)"
        if page == "9_Attack_the_model.py":
            return  # training and attacking twice takes a minute; the library test covers secure audits
        at.toggle(key=f"{key}.secure_demo").set_value(True)  # a form sends its values with the submit
        next(b for b in at.button if b.label == submit).click()
        at.run()
        assert not at.exception and not at.error
    assert "Secure noise" in " ".join(c.value for c in at.caption)


def test_the_clustering_page_in_secure_mode_draws_fresh_noise_but_shows_one_release_per_input():
    from dpcore.ui.models import cluster_demo

    cluster_demo.clear()
    first = cluster_demo("iris", 3, 0.3, None, None)
    assert cluster_demo("iris", 3, 0.3, None, None)["centres"].equals(first["centres"])  # the same release again
    cluster_demo.clear()
    again = cluster_demo("iris", 3, 0.3, None, None)
    assert not again["centres"].equals(first["centres"])  # a new release draws new noise
    seeded = cluster_demo("iris", 3, 0.3, None, 0)
    cluster_demo.clear()
    assert cluster_demo("iris", 3, 0.3, None, 0)["centres"].equals(seeded["centres"])  # seeded: reproducible


def test_declared_bounds_on_an_upload_silence_the_leak_warning_and_a_bad_one_is_named_not_raised():
    at = _upload(_app())
    texts = lambda els: " ".join(e.value for e in els)  # noqa: E731
    assert "'mean radius'" in texts(at.warning) and "leaks privacy" in texts(at.warning)
    at.text_area(key="train.dataset.bounds.your_file").set_value("mean radius=0:40").run()
    assert not at.exception  # the other three columns are still named, the declared one no more
    assert "'mean texture'" in texts(at.warning) and "'mean radius'" not in texts(at.warning)
    at.text_area(key="train.dataset.bounds.your_file").set_value("*=0:3000").run()
    assert not at.exception and "the bounds of" not in texts(at.warning)
    assert "the classes of the label 'target' were read" in texts(at.warning)  # the label's classes: still read
    at.text_area(key="train.dataset.categories.mine.csv").set_value("target=0|1").run()
    assert not at.exception and "leaks privacy" not in texts(at.warning)
    assert "Bounds declared for all 4 feature column(s): none is read from the rows" in texts(at.sidebar.caption)
    at.button(key="train.run").click().run()
    assert not at.exception and at.session_state["train.results"]
    assert "covers the training only" not in texts(at.warning)  # every bound declared: no leak left to warn of
    at.text_area(key="train.dataset.bounds.your_file").set_value("radius=0:40").run()
    assert not at.exception and "'radius' that the file does not have" in texts(at.error)
    assert "The declared bounds cannot be used" in texts(at.main.error)  # not blamed on the file, which is fine
    at.get("file_uploader")[0].set_value(("other.csv", _csv(), "text/csv")).run()
    assert not at.exception and not at.error  # another file starts without the first one's bounds
    assert at.text_area(key="train.dataset.bounds.your_file").value == ""
