"""A table uploaded on one page is offered on every page whose task it fits, for that session only: its runs are
neither kept by the server (memory or disk) nor joined or seen by another session."""
from __future__ import annotations

import numpy as np
import pytest

from dpcore.runtime.serving import shared_runs
from dpcore.ui.common import NO_LABEL, UPLOAD_OPTION_IN_FORM
from dpcore.ui.uploads import UPLOAD_KEY, UploadRef, holds_upload

#: page, its dataset picker's key (the pages that take a table, the upload's own page first)
PAGES = [("pages/2_Train_a_network.py", "train.dataset"), ("pages/9_Attack_the_model.py", "audit.dataset"),
         ("pages/4_Classical_models.py", "classical.dataset"), ("pages/3_Clustering.py", "cluster.dataset"),
         ("pages/7_PATE.py", "pate.dataset"), ("pages/8_Federated_learning.py", "fed.dataset"),
         ("pages/5_Tradeoff_explorer.py", "sweep.dataset")]


def _csv(n: int = 400) -> bytes:
    rng = np.random.default_rng(43)
    X = rng.integers(1_000_001, 9_999_998, size=(n, 3))
    y = (X[:, 0] + rng.normal(0, 1.5e6, n) > 5.5e6).astype(int)
    return ("spend,visits,tenure,churned\n" + "".join(f"{a},{b},{c},{t}\n" for (a, b, c), t in zip(X, y))).encode()


@pytest.fixture
def private_store(tmp_path, monkeypatch):
    """The sweeps' cache and the server's store of finished runs both under ``tmp_path``, to see what lands there."""
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(shared_runs(), "directory", tmp_path)
    return tmp_path


def _uploaded(app_page):
    at = app_page("app.py", timeout=600).run()
    at.switch_page(PAGES[0][0]).run()
    at.selectbox(key="train.dataset").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("customers.csv", _csv(), "text/csv")).run()
    at.text_area(key="train.dataset.bounds.your_file").set_value("*=1000000:10000000").run()
    assert not at.exception and not at.error
    return at


def _kept_upload_runs() -> list:
    store = shared_runs()
    return [k for k in list(store._done) if holds_upload(k) or (isinstance(k, tuple) and "session" in k[:2])]


def test_a_file_uploaded_on_one_page_is_offered_with_its_bounds_on_every_page_of_the_session(app_page,
                                                                                           private_store):
    shared_runs().get_or_run(("probe", "registry-like run"), lambda progress: 1)  # the store does write here ...
    assert [p.name for p in private_store.rglob("*.pkl")]
    shared_runs().clear()
    at = _uploaded(app_page)
    at.button(key="train.run").click().run()  # ... but a run on the file does not
    assert not at.exception and at.session_state["train.results"]
    for path, key in PAGES[1:]:
        at.switch_page(path).run()
        assert not at.exception, path
        picker = at.selectbox(key=key)
        assert picker.value == "upload", path  # offered first: the file fits every one of these pages' task
        assert "Your file: customers.csv" in picker.options, path
        assert at.text_area(key=f"{key}.bounds.your_file").value == "*=1000000:10000000", path
        sidebar = " ".join(c.value for c in at.sidebar.caption)
        assert "stays in this session" in sidebar and "never written to disk" in sidebar, path
        assert not at.error, (path, [e.value for e in at.error])
    at.switch_page("pages/9_Attack_the_model.py").run()
    assert any("Download the report" in b.proto.label for b in at.get("download_button"))
    # nothing of the file's runs on disk, nor in the server's store that every visitor reads
    assert [p for p in private_store.rglob("*") if p.is_file()] == []
    assert _kept_upload_runs() == []


def test_another_session_is_not_offered_the_file_and_cannot_reach_its_runs(app_page, private_store):
    mine = _uploaded(app_page)
    mine.switch_page("pages/9_Attack_the_model.py").run()
    assert mine.session_state["audit.results"]  # this session's attack on its file
    theirs = app_page("app.py", timeout=600).run()
    theirs.switch_page("pages/9_Attack_the_model.py").run()
    assert not theirs.exception
    assert UPLOAD_KEY not in theirs.session_state
    picker = theirs.selectbox(key="audit.dataset")
    assert picker.value != "upload"
    assert "Your file: customers.csv" not in picker.options and UPLOAD_OPTION_IN_FORM in picker.options
    assert "customers.csv" not in " ".join(c.value for c in [*theirs.caption, *theirs.sidebar.caption])
    assert not any(isinstance(k[1], UploadRef) for k in theirs.session_state["audit.results"])
    assert _kept_upload_runs() == []


def test_taking_the_file_out_of_the_uploader_forgets_it_on_every_page(app_page, private_store):
    at = _uploaded(app_page)
    at.get("file_uploader")[0].set_value(None).run()
    assert UPLOAD_KEY not in at.session_state
    at.switch_page("pages/4_Classical_models.py").run()
    assert at.selectbox(key="classical.dataset").value == "breast_cancer"


def test_a_regression_file_is_offered_where_its_task_fits_and_not_where_classes_are_needed(app_page, private_store):
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 10, size=(300, 3))
    y = X @ [1.0, -2.0, 0.5] + rng.normal(0, 1, 300)
    data = ("a,b,c,price\n" + "".join(f"{a:.3f},{b:.3f},{c:.3f},{t:.3f}\n" for (a, b, c), t in zip(X, y))).encode()
    at = app_page("app.py", timeout=600).run()
    at.switch_page("pages/4_Classical_models.py").run()
    at.selectbox(key="classical.dataset").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("prices.csv", data, "text/csv")).run()
    assert not at.exception and at.session_state[UPLOAD_KEY]["task"] == "regression"
    at.switch_page("pages/9_Attack_the_model.py").run()
    assert at.selectbox(key="audit.dataset").value == "upload"
    at.switch_page("pages/7_PATE.py").run()
    picker = at.selectbox(key="pate.dataset")
    assert picker.value != "upload" and UPLOAD_OPTION_IN_FORM in picker.options
    picker.set_value("upload")  # chosen anyway (the picker stands in a form): the page says what it needs
    next(b for b in at.button if b.proto.form_id).click().run()
    assert any("needs a classification label" in c.value for c in at.caption)
    assert not at.exception
    # the Clustering page clusters any file's rows without a label: offered first there, with no label chosen
    at.switch_page("pages/3_Clustering.py").run()
    assert at.selectbox(key="cluster.dataset").value == "upload"
    assert at.selectbox(key="cluster.dataset.label").value == NO_LABEL
    assert not at.exception and not any("needs a classification label" in c.value for c in at.sidebar.caption)
    assert [m.label for m in at.metric][0].startswith("DPLloyd, ε")


@pytest.mark.parametrize("path, key", PAGES, ids=[p.split("/")[-1][:-3] for p, _ in PAGES])
def test_a_file_the_page_cannot_use_is_said_once_in_the_main_area_where_a_phone_shows_it(app_page, path, key):
    # the Classical models and Clustering pages stopped inside their sidebar: the message stood there twice, and the
    # main area (all a phone shows with the sidebar closed) was blank
    at = app_page(path, timeout=600).run()
    submit = [b for b in at.button if b.proto.form_id]  # the pages whose settings are a form: their submit button
    at.selectbox(key=key).set_value("upload")
    (submit[0].click() if submit else at).run()
    bad = b"ward,age,label\nCardiology,1,x\nOncology,2,y\nCardiology,3,x\n"
    at.get("file_uploader")[0].set_value(("wards.csv", bad, "text/csv"))
    (next(b for b in at.button if b.proto.form_id).click() if submit else at).run()
    assert not at.exception, path
    said = [e.value for e in at.main.error if "'ward' is text with 2 categories" in e.value]
    assert len(said) == 1, (path, [e.value for e in at.error])
    assert len([e for e in at.sidebar.error if "'ward'" in e.value]) <= 1, path
    # the file could not be read, so it has no task yet: the pages that need a class label said it "was read as None"
    assert not [c.value for c in at.sidebar.caption if "was read as" in c.value], path


def test_a_column_left_out_is_never_read_and_stays_left_out_on_the_other_pages(app_page):
    rng = np.random.default_rng(5)
    rows = [(f"P{100000 + i}", ("Cardiology", "Oncology")[i % 2], rng.integers(20, 90), i % 2) for i in range(60)]
    data = ("patient_id,ward,age,readmitted\n" + "".join(f"{p},{w},{a},{t}\n" for p, w, a, t in rows)).encode()
    at = app_page("app.py", timeout=600).run()
    at.switch_page(PAGES[0][0]).run()
    at.selectbox(key="train.dataset").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("wards.csv", data, "text/csv")).run()
    assert any("'patient_id' holds a different text on every row" in e.value and "Columns to leave out" in e.value
               for e in at.error)
    at.multiselect(key="train.dataset.drop").set_value(["patient_id", "ward"]).run()
    assert not at.exception and not at.error
    assert at.session_state[UPLOAD_KEY]["drop"] == ["patient_id", "ward"]
    at.switch_page("pages/9_Attack_the_model.py").run()  # another page: the same columns left out
    assert at.multiselect(key="audit.dataset.drop").value == ["patient_id", "ward"] and not at.error
    at.switch_page(PAGES[0][0]).run()
    at.selectbox(key="train.dataset.label").set_value("ward").run()  # a left-out column made the label: not left out
    assert not at.exception and at.multiselect(key="train.dataset.drop").value == ["patient_id"]
    assert "ward" not in at.multiselect(key="train.dataset.drop").options



def _next_stop_caption(dataset: str, upload: dict | None) -> str:
    """The line under the Train page's next-stop link with ``dataset`` chosen and ``upload`` the session's file."""
    from streamlit.testing.v1 import AppTest

    def script():
        import streamlit as st

        from dpcore.ui.lesson import next_stop_note

        st.caption(next_stop_note("train."))

    at = AppTest.from_function(script, default_timeout=60)
    at.session_state["train.dataset"] = dataset
    at.session_state["train.epsilon"] = 2.0
    at.session_state["train.seed"] = 3
    if upload is not None:
        at.session_state[UPLOAD_KEY] = upload
    at.run()
    assert not at.exception
    return next(c.value for c in at.caption if "The link keeps" in c.value)


def test_the_lessons_next_stop_on_an_uploaded_file_says_it_keeps_the_file_not_the_lessons_dataset():
    # the link cannot carry a file, but the next stop offers the session's file first (the test above): it opens on
    # the file, where the caption said "The link keeps MNIST 5k"
    upload = {"name": "customers.csv", "data": _csv(), "digest": "d", "label": "churned", "kind": "auto"}
    assert "The link keeps your file, ε = 2, seed 3." in _next_stop_caption("upload", upload)
    assert "The link keeps Iris, ε = 2, seed 3." in _next_stop_caption("iris", upload)  # a registry set: its name
    # "Upload a CSV…" chosen but no file yet: the next stop opens on the lesson's dataset, as the caption says
    assert "The link keeps MNIST 5k, ε = 2, seed 3." in _next_stop_caption("upload", None)


def _next_stop_params(dataset: str, upload: dict | None) -> dict:
    """The query parameters of the Train page's next-stop link with ``dataset`` chosen and ``upload`` the session's
    file."""
    from streamlit.testing.v1 import AppTest

    def script():
        import json

        import streamlit as st

        from dpcore.ui.lesson import next_link_params

        st.text(json.dumps(next_link_params("train.")[1]))

    at = AppTest.from_function(script, default_timeout=60)
    at.session_state["train.dataset"] = dataset
    at.session_state["train.epsilon"] = 2.0
    if upload is not None:
        at.session_state[UPLOAD_KEY] = upload
    at.run()
    assert not at.exception
    import json

    return json.loads(at.text[0].value)


def test_the_lessons_next_stop_link_on_an_uploaded_file_names_no_dataset_so_the_next_page_opens_on_the_file():
    # the caption said "The link keeps your file", but the link carried the lesson's MNIST 5k, which the Attack page
    # then showed instead of the file (a link's dataset outranks the session's file offered first)
    upload = {"name": "customers.csv", "data": _csv(), "digest": "d", "label": "churned", "kind": "auto"}
    params = _next_stop_params("upload", upload)
    assert "audit.dataset" not in params and params["audit.eps"] == "2.0"
    assert _next_stop_params("iris", upload)["audit.dataset"] == '"iris"'  # a registry set chosen: carried
    assert _next_stop_params("upload", None)["audit.dataset"] == '"mnist5k"'  # no file yet: the lesson's dataset


def test_a_file_whose_bounds_were_read_from_its_rows_is_said_not_a_guarantee_above_every_pages_results(app_page):
    # the loader's leak warning stood folded in the sidebar, below the file's settings: the Classical models,
    # Clustering, PATE and Federated pages showed their ε and its verdict with nothing in view saying it is no guarantee
    at = app_page("app.py", timeout=600).run()
    at.switch_page(PAGES[0][0]).run()
    at.selectbox(key="train.dataset").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("customers.csv", _csv(), "text/csv")).run()
    for path in ("pages/4_Classical_models.py", "pages/3_Clustering.py", "pages/7_PATE.py",
                 "pages/8_Federated_learning.py"):
        at.switch_page(path).run()
        assert not at.exception, path
        said = [w.value for w in at.main.warning if "Not yet a guarantee" in w.value]
        assert len(said) == 1, (path, [w.value for w in at.main.warning])
        assert "'spend', 'visits', 'tenure'" in said[0] and "Declared bounds" in said[0], path
    at.text_area(key="fed.dataset.bounds.your_file").set_value("*=1000000:10000000")
    at.text_area(key="fed.dataset.categories.customers.csv").set_value("churned=0|1")
    next(b for b in at.button if b.proto.form_id).click().run()  # declared: the note goes
    assert not at.exception
    assert not [w.value for w in at.main.warning if "Not yet a guarantee" in w.value]


def _in_order(node):
    """Every element under ``node`` in page order."""
    children = getattr(node, "children", None)
    if not children:
        yield node
        return
    for child in children.values():
        yield from _in_order(child)


def test_the_train_page_says_whose_file_it_is_and_that_its_epsilon_is_no_guarantee_above_its_results(app_page):
    # the Train page said neither in its main area (all a phone shows with the sidebar closed): its tiles and the
    # "●●●● Strong privacy" verdict of the ε spent came first, the leak a warning further down
    at = app_page("app.py", timeout=600).run()
    at.switch_page(PAGES[0][0]).run()
    at.selectbox(key="train.dataset").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("customers.csv", _csv(), "text/csv")).run()
    at.button(key="train.run").click().run()
    assert not at.exception
    order = list(_in_order(at.main))
    said = [i for i, e in enumerate(order) if e.type == "warning" and "Not yet a guarantee" in str(e.value)]
    first_metric = next(i for i, e in enumerate(order) if e.type == "metric")
    assert len(said) == 1 and said[0] < first_metric
    assert "'spend', 'visits', 'tenure'" in order[said[0]].value
    assert any("On your file **customers.csv**" in c.value for c in at.main.caption)
    at.text_area(key="train.dataset.bounds.your_file").set_value("*=1000000:10000000").run()
    at.text_area(key="train.dataset.categories.customers.csv").set_value("churned=0|1").run()
    at.button(key="train.run").click().run()  # declared: the note goes
    assert not [w.value for w in at.main.warning if "Not yet a guarantee" in w.value]
