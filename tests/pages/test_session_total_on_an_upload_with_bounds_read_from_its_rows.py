"""The session's total on an uploaded file whose bounds were read from its own rows is no guarantee on any page.

Each page says above its results that no ε on it is a guarantee while a bound is read from the rows (an extra leak
that no ε accounts for); the session's total under them must not then compose the runs' ε as if it were one. The
Train, Classical models, Clustering and Trade-off pages' runs carry the leak themselves; a PATE run, a federated run
and the Attack page's attacked model do not, and their pages once showed a finite total (ε = 5, 4 and 1 at their
defaults) under the note saying that no ε there was a guarantee.
"""
from __future__ import annotations

import numpy as np
import pytest

from .conftest import page

NOT_PRIVATE = "ε = ∞ (not private)"


def _csv(n: int = 300) -> bytes:
    rng = np.random.default_rng(11)
    X = rng.uniform(0, 100, size=(n, 3))
    y = (X[:, 0] + rng.normal(0, 20, n) > 50).astype(int)
    return ("a,b,c,outcome\n" + "".join(f"{r[0]:.2f},{r[1]:.2f},{r[2]:.2f},{t}\n" for r, t in zip(X, y))).encode()


def _session_total(at) -> str:
    return next(c.value for c in at.caption if c.value.startswith("**Session total.**"))


#: page, its dataset picker's key, its quickest run's settings, the button that runs it (None: it runs as it opens)
PAGES = [
    ("pages/7_PATE.py", "pate.dataset", {}, "Run PATE"),
    ("pages/8_Federated_learning.py", "fed.dataset", {"fed.rounds": 2}, "Train"),
    ("pages/9_Attack_the_model.py", "audit.dataset", {"audit.attack": "canaries"}, "Train and attack"),
]


def _run_on_upload(path, picker, settings, button, *, bounds: str, categories: str = ""):
    """The file uploaded on the Train page with ``bounds`` and ``categories`` declared (they hold on every page of the
    session), then ``path``'s run on it."""
    at = page("app.py", timeout=600).run()
    at.switch_page("pages/2_Train_a_network.py").run()
    at.selectbox(key="train.dataset").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("ward.csv", _csv(), "text/csv")).run()
    at.text_area(key="train.dataset.bounds.your_file").set_value(bounds).run()
    at.text_area(key="train.dataset.categories.ward.csv").set_value(categories).run()
    at.switch_page(path).run()
    assert at.selectbox(key=picker).value == "upload"
    for key, value in settings.items():
        at.session_state[key] = value
    next(b for b in at.button if b.label == button).click()
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("path, picker, settings, button", PAGES, ids=["pate", "federated", "attack"])
def test_a_run_on_bounds_read_from_the_rows_makes_the_sessions_total_no_guarantee(path, picker, settings, button):
    at = _run_on_upload(path, picker, settings, button, bounds="")
    total = _session_total(at)
    assert NOT_PRIVATE in total
    # a federated run with no guarantee is said to give none, not to have "protected each client's whole data (ε = ∞"
    assert "protected each client's whole data (ε = ∞" not in total
    if "federated" in path:
        assert f"**1 federated training** gave no guarantee for each client's whole data ({NOT_PRIVATE})" in total


@pytest.mark.parametrize("path, picker, settings, button", PAGES, ids=["pate", "federated", "attack"])
def test_the_same_run_with_every_bound_declared_keeps_its_finite_total(path, picker, settings, button):
    at = _run_on_upload(path, picker, settings, button, bounds="*=0:100", categories="outcome=0|1")
    total = _session_total(at)
    assert NOT_PRIVATE not in total and "ε = " in total, total
