"""The upload's box of declared class shares: a classification label's shares, declared (no privacy spent), make
the Train page's models answer by them; a mistake is an error naming the box, with the file still read."""
from __future__ import annotations

from tests.pages.conftest import upload_rare_label


def test_declared_shares_reach_the_train_pages_model_and_its_reference():
    at = upload_rare_label("pages/2_Train_a_network.py", "train.dataset", rows=1200, shift=1.5, bounds="*=-5:7")
    box = at.text_area(key="train.dataset.shares.ward.csv")
    assert "costs no privacy because the shares are declared, not read from the rows" in box.help
    box.set_value("no=0.95, yes=0.05").run()
    assert any("Answers follow the declared class shares" in c.value for c in at.caption)
    at.button(key="train.run").click().run()
    assert not at.exception
    out = next(iter(at.session_state["train.results"].values()))
    assert out["metrics"]["rare_class_recall"] > 0.3  # the rare class is answered
    assert out["metrics"]["balanced_accuracy"] > 0.6 and out["baseline"]["balanced_accuracy"] > 0.6


def test_a_wrong_declaration_is_an_error_naming_the_box_and_what_to_do():
    at = upload_rare_label("pages/2_Train_a_network.py", "train.dataset", rows=300, shift=1.5, bounds="*=-5:7")
    at.text_area(key="train.dataset.categories.ward.csv").set_value("outcome=no|yes").run()  # classes declared
    at.text_area(key="train.dataset.shares.ward.csv").set_value("no=0.95, maybe=0.05").run()
    errors = [e.value for e in at.error]
    assert any(e.startswith("The declared class shares cannot be used:") and "'maybe' is not a class" in e
               and "no share for the class 'yes'" in e for e in errors), errors
    assert not at.exception


def test_classes_read_from_the_rows_are_never_named_by_the_shares_box():
    """A label whose classes were not declared has the classes its rows hold: private values (a rare one points to
    a record). The box's placeholder and its refusal of a mistake name only what was typed, say how many classes
    there are and where to declare them; declared, the classes are named again."""
    at = upload_rare_label("pages/2_Train_a_network.py", "train.dataset", rows=300, shift=1.5, bounds="*=-5:7")
    box = at.text_area(key="train.dataset.shares.ward.csv")
    assert box.placeholder == "CLASS=…\nCLASS=…"
    box.set_value("no=0.95, maybe=0.05").run()
    errors = sorted({e.value for e in at.error})  # one refusal (said in the sidebar and where a phone shows it)
    assert len(errors) == 1 and "'maybe' is not a class" in errors[0], errors
    assert "yes" not in errors[0].replace("'maybe'", ""), errors  # the rows' other class is not named
    assert ("no share for 1 of the label's 2 classes" in errors[0] and "not named here" in errors[0]
            and "(the 'Declared categories' box)" in errors[0]), errors
    assert not at.exception
    at.text_area(key="train.dataset.shares.ward.csv").set_value("").run()
    at.text_area(key="train.dataset.categories.ward.csv").set_value("outcome=no|yes").run()
    assert at.text_area(key="train.dataset.shares.ward.csv").placeholder == "no=…\nyes=…"


def test_the_clustering_page_offers_no_class_shares():
    at = upload_rare_label("pages/3_Clustering.py", "cluster.dataset", rows=300, shift=1.5, bounds="*=-5:7")
    assert not [t for t in at.text_area if t.key.startswith("cluster.dataset.shares")]


def test_the_classical_models_page_offers_no_class_shares_and_says_declared_ones_are_unused_there():
    """Its models (DP-ERM, logistic regression) release scores: the box said "Answers follow the declared class
    shares" above five warnings that none did."""
    from dpcore.ui.common import SHARES_UNUSED
    from dpcore.ui.uploads import UPLOAD_KEY

    at = upload_rare_label("pages/4_Classical_models.py", "classical.dataset", rows=300, shift=1.5, bounds="*=-5:7")
    assert not at.exception
    assert not [t for t in at.text_area if ".shares." in t.key]
    assert not any(c.value == SHARES_UNUSED for c in at.caption)  # nothing declared: nothing to say
    stored = at.session_state[UPLOAD_KEY]
    at.session_state[UPLOAD_KEY] = {**stored, "shares": "no=0.95, yes=0.05"}  # declared on the Train page
    at.run()
    assert not at.exception
    assert any(c.value == SHARES_UNUSED for c in at.caption)
    assert not any("releases scores, not class probabilities" in str(w.value) for w in at.warning)
