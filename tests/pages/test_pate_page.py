"""The PATE page runs a small configuration, shows its metrics, and reacts to the teacher count."""
from __future__ import annotations

import pathlib

from streamlit.testing.v1 import AppTest

from tests.pages.conftest import check_epsilon_button

PAGE = str(pathlib.Path(__file__).resolve().parents[2] / "pages/7_PATE.py")


def _metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def _submit(at):
    next(b for b in at.button if b.label == "Run PATE").click()
    return at.run()


def test_pate_page_runs_and_reacts():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception
    assert not at.error
    labels = {m.label for m in at.metric}
    assert {"ε spent (data-independent)", "Student accuracy", "Teacher accuracy", "Noisy-label accuracy"} <= labels
    assert float(_metric(at, "ε spent (data-independent)")) <= 10.0 + 1e-9
    split = at.table[0].value
    assert list(split["Part"]) == ["private (teachers)", "public (student)", "test"]
    votes = at.dataframe[0].value  # the numbers behind the vote histogram of the chosen query
    assert votes.loc[votes["Noisy winner"] == "✔", "Votes + noise"].item() == votes["Votes + noise"].max()
    before = _metric(at, "Teacher accuracy")

    at.number_input(key="pate.teachers.digits").set_value(5)
    at.number_input(key="pate.queries.digits").set_value(40)
    _submit(at)
    assert not at.exception
    assert _metric(at, "Teacher accuracy") != before  # fewer teachers, more data each
    assert _metric(at, "Queries answered") == "40"


def test_the_teachers_own_accuracies_are_said_to_be_outside_the_epsilon():
    # the teachers are trained on the private partitions without noise: their test accuracy and their noiseless
    # vote's are statistics of the private data that the PATE epsilon (the noisy answers only) does not cover, and
    # they were shown beside it as headline metrics without a word, where the Train page labels such numbers
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception
    for label in ("Teacher accuracy", "Vote, no noise"):
        metric = next(m for m in at.metric if m.label == label)
        assert "not covered by ε" in metric.help


def test_the_five_accuracies_have_labels_that_fit_their_columns():
    """Five columns beside the sidebar at 1280 px hold a label of about 20 characters with its help icon ("Noisy-label
    accuracy" fits); "Mean teacher accuracy" and "Noiseless vote accuracy" were cut to "Mean teacher accur…"."""
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception
    row = ("Teacher accuracy", "Vote, no noise", "Noisy-label accuracy", "Student accuracy", "Non-private model")
    labels = [m.label for m in at.metric]
    assert [label for label in labels if label in row] == list(row)
    assert max(len(label) for label in row) <= 20


def test_pate_page_bad_input_is_an_error_not_a_traceback():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    at.number_input(key="pate.queries.digits").set_value(5000)  # more than the public pool
    _submit(at)
    assert not at.exception
    assert any("queries=5000" in e.value for e in at.error)


def test_pate_page_data_dependent_epsilon_is_labelled_and_smaller():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    at.checkbox(key="pate.data_dependent.digits").check()
    _submit(at)
    assert not at.exception
    # not a headline metric, but a visibly labelled expander
    assert not any("DATA-DEPENDENT" in m.label.upper() for m in at.metric)
    box = next(e for e in at.expander if "NOT a privacy guarantee" in e.label)
    text = box.markdown[0].value
    assert "do not publish" in text
    dd = float(text.split("**")[1])
    assert dd <= float(_metric(at, "ε spent (data-independent)")) + 1e-9
    history = at.dataframe[1].value
    assert "ε data-dependent (NOT private, do not publish)" in history.columns and "epoch" not in history.columns


def test_the_epsilon_spent_on_the_page_includes_the_release_of_the_data_dependent_epsilon_and_says_by_how_much():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    off = float(_metric(at, "ε spent (data-independent)"))
    assert not any("Includes releasing" in c.value for c in at.caption)
    at.checkbox(key="pate.data_dependent.digits").check()
    _submit(at)
    assert not at.exception and any("released privately" in i.value for i in at.info)
    spent = float(_metric(at, "ε spent (data-independent)"))
    said = next(c.value for c in at.caption if c.value.startswith("Includes releasing the data-dependent ε"))
    answers = float(said.split("answers alone cost ε = ")[1].split(",")[0])
    added = float(said.split("the release adds ")[1].split(" ")[0])
    # the answers and the release share the target: the answers get less than with the release off
    assert answers < off and spent <= off and added > 0 and abs(answers + added - spent) <= 0.011  # rounded up
    assert any("releasing the data-dependent ε costs the rest" in c.value for c in at.caption)


def test_pate_page_warns_about_tiny_teachers_and_large_epsilon():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not any("Too few examples per teacher" in w.value for w in at.warning)
    assert any("Chance level" in m.value for m in at.markdown)
    at.number_input(key="pate.teachers.digits").set_value(300)
    at.number_input(key="pate.queries.digits").set_value(20)
    at.number_input(key="pate.eps").set_value(20.0)
    _submit(at)
    assert not at.exception
    assert any("Too few examples per teacher" in w.value for w in at.warning)
    assert any(w.value.startswith("Nominal guarantee only: ε = 20") for w in at.warning)  # the verdict's band


def test_confident_gnmax_on_the_page_says_how_many_queries_it_answered_and_releases_its_data_dependent_epsilon():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    at.radio(key="pate.aggregator.digits").set_value("confident")
    at.number_input(key="pate.threshold.digits").set_value(0.5)
    at.checkbox(key="pate.data_dependent.digits").check()
    _submit(at)
    assert not at.exception and not at.error
    answered, examined = (int(x) for x in _metric(at, "Queries answered").split(" of "))
    assert 0 < answered <= examined
    assert any(f"answered **{answered} of {examined}**" in m.value for m in at.markdown)
    released = next(i.value for i in at.info if "released privately" in i.value)
    assert float(released.split("**")[1]) > 0 and "may be published" in released
    assert any("NOT a privacy guarantee" in e.label for e in at.expander)



def test_the_vote_gap_says_the_noise_on_each_count_rounded_up_as_the_noise_tile_does():
    # the calibrated noise's standard deviation was written to the nearest figure (:.3g), less noise than the run
    # added whenever it rounded down, beside a noise tile rounded up (format_noise)
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    at.radio(key="pate.mode").set_value("noise scale").run()
    at.number_input(key="pate.noise").set_value(6.0312)
    _submit(at)
    assert not at.exception
    tile = _metric(at, "Noise on each vote").split(" = ")[1]  # the Gaussian aggregator's σ: the std of each count
    assert tile == "6.04"
    gap = next(m.value for m in at.markdown if m.value.startswith("Vote gap"))
    assert gap.split("typically ±")[1].split(" ")[0] == tile


def test_a_target_epsilon_has_a_button_beside_it_that_applies_it():
    # the form's own button was two screens below ε at 1280×720: a teacher who changed ε saw nothing happen until
    # scrolling to "Run PATE"
    check_epsilon_button(lambda present: AppTest.from_file(PAGE, default_timeout=120), prefix="pate",
                         metric="ε spent (data-independent)", mode=("pate.mode", "noise scale"))


def test_one_query_asked_shows_its_votes_without_a_slider_to_pick_it():
    # "Queries asked" = 1: the query slider ran from 0 to 0, which Streamlit refuses with an exception on the page
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    at.number_input(key="pate.queries.digits").set_value(1)
    _submit(at)
    assert not at.exception, at.exception
    assert _metric(at, "Queries answered") == "1"
    assert not at.slider and any(c.value == "One query was asked: its votes below." for c in at.caption)
    votes = at.dataframe[0].value  # the one query's votes, the noisy winner marked
    assert (votes["Noisy winner"] == "✔").sum() == 1


def test_the_queries_are_numbered_from_one_as_the_privacy_chart_and_its_table_count_them():
    # the slider read "Answered query # 0" for the first of 20 queries, whose ε the table under section 3 lists at
    # "Queries answered 1"
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception, at.exception
    query = at.slider(key="pate.example")
    assert (query.min, query.max, query.value) == (1, 20, 1) and _metric(at, "Queries answered") == "20"
    first = at.dataframe[0].value["Teacher votes"].tolist()
    query.set_value(20).run()
    assert not at.exception, at.exception
    assert at.dataframe[0].value["Teacher votes"].tolist() != first  # the last query's votes, another cluster
