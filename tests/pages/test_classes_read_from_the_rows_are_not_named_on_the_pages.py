"""A label whose classes the data's owner did not declare has the classes its rows hold: values of the records (a
class only a rare record holds points to that person). The pages then name them "class 1", "class 2", ... where
they show classes (the Train page's confusion matrix, the Attack page's exposed records, PATE's votes, the
federated clients' class counts); declared, the classes are the owner's words and are shown as declared."""
from __future__ import annotations

import numpy as np

from tests.pages.conftest import page

CLASSES = ("discharged_home", "icu_transfer")


def _csv() -> bytes:
    rng = np.random.default_rng(3)
    y = (rng.random(400) < 0.2).astype(int)
    x = rng.normal(size=(400, 2)) + 1.5 * y[:, None]
    return ("a,b,outcome\n" + "".join(f"{p:.3f},{q:.3f},{CLASSES[t]}\n" for (p, q), t in zip(x, y))).encode()


def _everything_shown(at) -> str:
    """Every string the page's elements carry (values, labels, helps, the charts' and tables' protos)."""
    out: list[str] = []

    def walk(node):
        for attr in ("value", "label", "help", "placeholder"):
            v = getattr(node, attr, None)
            if isinstance(v, str):
                out.append(v)
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(out)


def _trained(categories: str):
    at = page("pages/2_Train_a_network.py", timeout=600).run()
    at.selectbox(key="train.dataset").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("stays.csv", _csv(), "text/csv")).run()
    at.text_area(key="train.dataset.bounds.your_file").set_value("*=-5:7").run()
    at.text_area(key="train.dataset.categories.stays.csv").set_value(categories).run()
    at.button(key="train.run").click().run()
    assert not at.exception, at.exception
    return at


def test_the_train_pages_confusion_matrix_names_no_class_read_from_the_rows():
    at = _trained("")
    out = next(iter(at.session_state["train.results"].values()))
    assert list(out["confusion"].index) == ["class 1", "class 2"] == list(out["confusion"].columns)
    shown = _everything_shown(at)
    assert not [c for c in CLASSES if c in shown]


def test_declared_classes_are_named_as_declared():
    at = _trained("outcome=" + "|".join(CLASSES))
    out = next(iter(at.session_state["train.results"].values()))
    assert list(out["confusion"].index) == list(CLASSES)
