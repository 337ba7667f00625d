"""The upload's box of declared categories: a column of text in the visitor's file, declared there, is one 0/1
feature per declared value on every page, the form pages included; a mistake is an error naming the box."""
from __future__ import annotations

import numpy as np

from dpcore.ui.uploads import UPLOAD_KEY

WARDS = ("Cardiology", "Oncology", "Surgery")
DECLARED = "ward=Cardiology|Oncology|Surgery\nreadmitted=0|1"  # the label's classes too: nothing read from rows


def _wards_csv() -> bytes:
    rng = np.random.default_rng(7)
    ward = rng.choice(WARDS, 60)
    return ("age,ward,readmitted\n" + "".join(f"{a},{w},{int(w == 'Oncology')}\n"
                                              for a, w in zip(rng.integers(20, 90, 60), ward))).encode()


def test_a_column_of_text_declared_in_the_box_is_read_and_the_declaration_holds_on_a_form_page(app_page):
    at = app_page("app.py", timeout=600).run()
    at.switch_page("pages/2_Train_a_network.py").run()
    at.selectbox(key="train.dataset").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("wards.csv", _wards_csv(), "text/csv")).run()
    said = " ".join(e.value for e in at.error)  # undeclared, the column is refused, telling where to declare it
    assert "(the 'Declared categories' box)" in said and not any(w in said for w in WARDS)
    box = at.text_area(key="train.dataset.categories.wards.csv")
    assert "never copied from this file's rows" in box.help and "ward=Cardiology|Oncology|Surgery" in box.help
    box.set_value(DECLARED).run()
    at.text_area(key="train.dataset.bounds.your_file").set_value("age=0:110").run()
    assert not at.exception and not at.error
    assert any(c.value.startswith("'ward': 3 declared categories, each a 0/1 column bounded 0:1") for c in at.caption)
    assert any(c.value.startswith("'readmitted': 2 declared classes, in the order declared") for c in at.caption)
    assert not any("Not yet a guarantee" in w.value for w in at.warning)  # no bound nor class read from the rows
    box.set_value("ward=Cardiology|Oncology|Surgery\nreadmitted=1|2").run()  # the rows' 0 is no declared class
    said = " ".join(e.value for e in at.error)
    assert not at.exception and said.startswith("The declared categories cannot be used: the label 'readmitted' "
                                                "holds none of its declared classes in ")
    box.set_value(DECLARED).run()
    assert not at.exception and not at.error
    assert at.session_state[UPLOAD_KEY]["categories"] == DECLARED
    for path, key in (("pages/9_Attack_the_model.py", "audit"), ("pages/7_PATE.py", "pate"),
                      ("pages/8_Federated_learning.py", "fed")):  # the pages whose settings are a form
        at.switch_page(path).run()
        assert not at.exception and not at.error, path
        assert at.selectbox(key=f"{key}.dataset").value == "upload", path
        assert at.text_area(key=f"{key}.dataset.categories.wards.csv").value == DECLARED, path


def test_a_declaration_that_cannot_be_used_is_an_error_naming_the_box():
    from tests.pages.conftest import page

    at = page("pages/2_Train_a_network.py").run()
    at.selectbox(key="train.dataset").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("wards.csv", _wards_csv(), "text/csv")).run()
    at.text_area(key="train.dataset.categories.wards.csv").set_value("ward=Cardiology|Oncology|Oncology").run()
    errors = [e.value for e in at.main.error]  # said where a phone shows it, the sidebar closed
    assert errors == ["The declared categories cannot be used: categories for 'ward': the value 'Oncology' is "
                      "listed twice; list each value once"], errors
    assert not at.exception


def test_a_declaration_no_cell_matches_is_said_beside_the_box_not_folded_with_the_other_warnings():
    from tests.pages.conftest import page

    at = page("pages/2_Train_a_network.py").run()
    at.selectbox(key="train.dataset").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("wards.csv", _wards_csv(), "text/csv")).run()
    at.text_area(key="train.dataset.categories.wards.csv").set_value(DECLARED.lower()).run()  # case mistyped
    assert not at.exception and not at.error
    folded = [w.value for e in at.sidebar.expander for w in e.warning]
    shown = [w.value for w in at.sidebar.warning if w.value not in folded]
    assert any("hold none of their column's declared categories: 'ward' (60 of 60 cells)" in w and
               "case and spelling included" in w for w in shown), shown
    assert not any(w in " ".join(shown) for w in WARDS)  # the declaration is the visitor's; no cell is quoted
