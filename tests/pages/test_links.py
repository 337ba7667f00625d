"""Links that restore a view: a page's inputs are written to the address and read back from it."""
from __future__ import annotations

from .conftest import page


def _param(at, key):
    value = at.query_params.get(key)
    return value[0] if isinstance(value, list) else value


def test_a_link_sets_the_page_inputs_and_the_address_follows_every_change():
    at = page("app.py")
    at.query_params["home.eps"] = "0.5"
    at.run()
    assert not at.exception and not at.warning
    assert at.slider(key="home.eps").value == 0.5
    assert _param(at, "home.eps") == "0.5" and _param(at, "home.mech") == '"laplace"'
    at.slider(key="home.eps").set_value(2.0).run()
    assert _param(at, "home.eps") == "2.0"
    # a new visitor given that address sees the same view
    again = page("app.py")
    for key, value in at.query_params.items():
        again.query_params[key] = value[0] if isinstance(value, list) else value
    again.run()
    assert again.slider(key="home.eps").value == 2.0 and again.radio(key="home.mech").value == "laplace"


def test_an_out_of_range_or_mistyped_value_is_a_warning_and_the_default_not_a_traceback():
    for bad in ("50", "abc", "[1, 2, 3]"):
        at = page("app.py")
        at.query_params["home.eps"] = bad
        at.run()
        assert not at.exception, bad
        assert at.slider(key="home.eps").value == 1.0
        assert any("home.eps" in w.value and "default" in w.value for w in at.warning), bad


def test_an_outdated_choice_or_an_unknown_input_is_named_in_the_warning():
    at = page("app.py")
    at.query_params["home.mech"] = '"exponential"'  # no such mechanism on the page
    at.query_params["home.no_such_input"] = "3"
    at.run()
    assert not at.exception
    assert at.radio(key="home.mech").value == "laplace"
    warning = " ".join(w.value for w in at.warning)
    assert "home.mech" in warning and "home.no_such_input" in warning
    assert "home.no_such_input" not in at.query_params


def test_a_page_that_stops_early_still_writes_its_view_and_its_glossary():
    at = page("app.py").run()
    at.switch_page("pages/2_Train_a_network.py").run()  # it stops at "Press Train to run"
    assert not at.exception
    assert _param(at, "train.epsilon") is not None
    assert any(e.label.startswith("Glossary") for e in at.sidebar.expander)


def test_no_page_ends_without_writing_its_view():
    """A page that ends early with st.stop() instead of stop_page() keeps its choices out of the address and loses
    the sidebar's glossary (as the papers page did before anything was run)."""
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[2]
    stopping = [p.name for p in sorted((root / "pages").glob("*.py")) if "st.stop()" in p.read_text()]
    assert stopping == []


def test_the_papers_page_before_a_run_writes_the_chosen_paper_and_draws_the_glossary():
    at = page("app.py").run()
    at.switch_page("pages/10_Papers_reproduced.py").run()
    assert not at.exception
    assert _param(at, "repro.name") is not None
    assert any(e.label.startswith("Glossary") for e in at.sidebar.expander)


def _open(path: str, params: dict):
    at = page("app.py")
    at.switch_page(path)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def test_a_list_of_unknown_choices_falls_back_to_the_default_choices_the_warning_promises():
    key = "sweep.learners.classification.tab.epsilon"
    at = _open("pages/5_Tradeoff_explorer.py", {key: '["nope"]'})
    assert not at.exception
    assert at.multiselect(key=key).value == ["dpsgd", "erm-objective"]  # not an empty selection
    assert any(key in w.value and "default" in w.value for w in at.warning)
    assert _param(at, key) == '["dpsgd", "erm-objective"]'


def test_a_link_made_with_an_uploaded_file_waits_quietly_for_the_file_and_keeps_its_other_inputs():
    at = _open("pages/2_Train_a_network.py", {"train.dataset": '"upload"', "train.dataset.label": '"target"',
                                              "train.dataset.task": '"auto"', "train.epsilon": "2.5"})
    assert not at.exception and not at.warning  # the page asks for the file; nothing is "not valid"
    assert at.session_state["train.epsilon"] == 2.5  # for the ε box, once the file is there


def test_a_waiting_link_value_its_widget_refuses_once_the_file_is_there_is_warned_about():
    at = _open("pages/2_Train_a_network.py", {"train.dataset": '"upload"', "train.algorithm": '"no-such-learner"'})
    assert not at.exception and not at.warning  # waiting for the file: nothing judged yet
    at.get("file_uploader")[0].set_value(("mine.csv", b"a,b,label\n" + b"".join(
        f"{i},{i % 7},{i % 2}\n".encode() for i in range(80)), "text/csv")).run()
    assert not at.exception
    assert any("train.algorithm" in w.value and "default" in w.value for w in at.warning)
    assert at.selectbox(key="train.algorithm").value == "dpsgd"  # the default the warning promises


def test_a_waiting_link_value_that_fits_is_applied_without_a_warning():
    at = _open("pages/2_Train_a_network.py", {"train.dataset": '"upload"', "train.epsilon": "2.5"})
    at.get("file_uploader")[0].set_value(("mine.csv", b"a,b,label\n" + b"".join(
        f"{i},{i % 7},{i % 2}\n".encode() for i in range(80)), "text/csv")).run()
    assert not at.exception
    assert not any("train.epsilon" in w.value for w in at.warning)
    assert at.number_input(key="train.epsilon").value == 2.5


def test_a_link_carries_an_uploads_declared_bounds_and_restores_them_once_the_file_is_there():
    at = _open("pages/2_Train_a_network.py",
               {"train.dataset": '"upload"', "train.dataset.bounds.your_file": '"*=0:100"'})
    at.get("file_uploader")[0].set_value(("mine.csv", b"a,b,label\n" + b"".join(
        f"{i},{i % 7},{i % 2}\n".encode() for i in range(80)), "text/csv")).run()
    assert not at.exception and not any("the bounds of" in w.value for w in at.warning)
    assert at.text_area(key="train.dataset.bounds.your_file").value == "*=0:100"
    assert _param(at, "train.dataset.bounds.your_file") == '"*=0:100"'


def test_the_address_carries_an_uploads_declared_bounds_but_never_the_files_name():
    # a file's name may say whose data it is; the link keeps what was declared, for whichever file is uploaded
    at = _open("pages/2_Train_a_network.py", {"train.dataset": '"upload"'})
    at.get("file_uploader")[0].set_value(("ward7_hiv_patients.csv", b"a,b,label\n" + b"".join(
        f"{i},{i % 7},{i % 2}\n".encode() for i in range(80)), "text/csv")).run()
    assert not at.exception and not at.error
    assert not any("ward7" in k or "ward7" in str(v) for k, v in at.query_params.items())
    assert _param(at, "train.epochs.your_file")  # the knobs kept for the file are in the address all the same
    at.text_area(key="train.dataset.bounds.your_file").set_value("*=0:100").run()
    assert _param(at, "train.dataset.bounds.your_file") == '"*=0:100"'
    assert not any("ward7" in k or "ward7" in str(v) for k, v in at.query_params.items())
    assert "ward7" in " ".join(c.value for c in at.sidebar.caption)  # the owner's own view names their file


def test_another_file_starts_from_an_empty_bounds_box_and_default_knobs_as_after_the_file_is_taken_out():
    at = _open("pages/2_Train_a_network.py", {"train.dataset": '"upload"'})
    rows = b"".join(f"{i},{i % 7},{i % 2}\n".encode() for i in range(80))
    at.get("file_uploader")[0].set_value(("first.csv", b"a,b,label\n" + rows, "text/csv")).run()
    at.text_area(key="train.dataset.bounds.your_file").set_value("*=0:100").run()
    default_epochs = at.number_input(key="train.epochs.your_file").value
    at.number_input(key="train.epochs.your_file").set_value(default_epochs + 7).run()
    at.get("file_uploader")[0].set_value(("second.csv", b"c,d,label\n" + rows, "text/csv")).run()
    assert not at.exception
    assert at.text_area(key="train.dataset.bounds.your_file").value == ""  # not the first file's
    assert at.number_input(key="train.epochs.your_file").value == default_epochs  # nor its knobs
    at.text_area(key="train.dataset.bounds.your_file").set_value("*=0:50").run()
    at.get("file_uploader")[0].set_value(None).run()  # the file's ✕
    at.get("file_uploader")[0].set_value(("second.csv", b"c,d,label\n" + rows, "text/csv")).run()
    assert not at.exception
    assert at.text_area(key="train.dataset.bounds.your_file").value == ""


def test_the_address_carries_no_declared_category_of_an_upload_which_stays_in_the_session():
    # a category is a cell value (a rare ward's name): the address, made to be passed on, names none
    at = _open("pages/2_Train_a_network.py", {"train.dataset": '"upload"'})
    at.get("file_uploader")[0].set_value(("mine.csv", b"a,ward,label\n" + b"".join(
        f"{i},{('Burns', 'Oncology')[i % 2]},{i % 2}\n".encode() for i in range(80)), "text/csv")).run()
    at.text_area(key="train.dataset.categories.mine.csv").set_value("ward=Burns|Oncology").run()
    assert not at.exception and not at.error
    assert _param(at, "train.dataset.label") == '"label"'  # the page's view is in the address
    assert not any("categories" in k or "Burns" in str(v) for k, v in at.query_params.items())
    assert at.text_area(key="train.dataset.categories.mine.csv").value == "ward=Burns|Oncology"


def test_the_address_carries_no_declared_class_share_of_an_upload_whose_box_names_its_classes():
    # a class is a value of the label (a rare diagnosis): the class shares box names each one, so it stays in the
    # session as the categories box does
    at = _open("pages/2_Train_a_network.py", {"train.dataset": '"upload"'})
    at.get("file_uploader")[0].set_value(("mine.csv", b"a,b,diagnosis\n" + b"".join(
        f"{i},{i % 7},{('healthy', 'Kahler')[i % 2]}\n".encode() for i in range(80)), "text/csv")).run()
    at.text_area(key="train.dataset.categories.mine.csv").set_value("diagnosis=healthy|Kahler").run()
    at.text_area(key="train.dataset.shares.mine.csv").set_value("healthy=0.9, Kahler=0.1").run()
    assert not at.exception and not at.error
    assert _param(at, "train.dataset.label") == '"diagnosis"'  # the page's view is in the address
    assert not any("shares" in k or "Kahler" in str(v) for k, v in at.query_params.items())
    assert at.text_area(key="train.dataset.shares.mine.csv").value == "healthy=0.9, Kahler=0.1"


def test_the_address_carries_only_the_inputs_the_page_shows_now():
    at = page("app.py")
    at.switch_page("pages/2_Train_a_network.py").run()
    at.selectbox(key="train.dataset").set_value("iris").run()
    assert any(k.endswith(".iris") for k in at.query_params)
    at.selectbox(key="train.dataset").set_value("wine").run()
    assert not any(k.endswith(".iris") for k in at.query_params)  # no knob of the dataset left behind


def test_a_page_waiting_for_an_upload_says_so_in_the_main_area_too_where_a_phone_shows_it():
    at = _open("pages/5_Tradeoff_explorer.py", {"sweep.dataset": '"upload"'})
    assert not at.exception
    assert any("Upload a CSV file in the sidebar" in i.value for i in at.main.info)


def test_a_fraction_for_a_whole_number_or_a_value_its_box_refuses_is_replaced_not_kept_in_the_address():
    # the box showed 5000 while the page computed with 5000.5; a σ of -3 stayed in the box and in the address
    at = _open("pages/1_Accountant.py", {"acct.n": "5000.5", "acct.sigma": "-3", "acct.batch": "10"})
    assert not at.exception
    assert at.number_input(key="acct.n").value == 60_000 and at.number_input(key="acct.sigma").value == 4.0
    assert at.number_input(key="acct.batch").value == 10  # a whole number is kept
    warning = " ".join(w.value for w in at.warning)
    assert "`acct.n` (`5000.5`)" in warning and "`acct.sigma` (`-3`)" in warning and "acct.batch" not in warning
    assert _param(at, "acct.n") == "60000" and _param(at, "acct.sigma") == "4.0"


def test_a_list_with_an_option_not_offered_keeps_the_others_and_names_the_one_left_out():
    at = page("app.py")
    at.query_params["sweep.learners.classification.tab.epsilon"] = '["dpsgd", "no-such-learner"]'
    at.switch_page("pages/5_Tradeoff_explorer.py").run()
    assert not at.exception
    assert at.multiselect(key="sweep.learners.classification.tab.epsilon").value == ["dpsgd"]  # not the default pair
    warning = " ".join(w.value for w in at.warning)
    assert "no-such-learner" in warning and "rest of its choices kept" in warning
    assert _param(at, "sweep.learners.classification.tab.epsilon") == '["dpsgd"]'


def test_a_name_that_is_no_pages_input_is_said_and_another_pages_input_is_left_to_it():
    at = page("app.py")
    at.query_params["epsilon"] = "2"  # typed by hand, without the page's prefix
    at.query_params["train.epsilon"] = "3"  # the Train page's, in an address that lags behind a page switch
    at.query_params["embed"] = "true"  # Streamlit's own
    at.run()
    assert not at.exception
    warning = " ".join(w.value for w in at.warning)
    assert "`epsilon` (`2`)" in warning and "inputs are named `home.…`" in warning
    assert "train.epsilon" not in warning and "embed" not in warning
    assert at.slider(key="home.eps").value == 1.0


def test_every_problem_of_a_link_is_still_said_when_a_later_one_makes_the_page_draw_again():
    at = page("app.py")
    at.query_params["epsilon"] = "2"  # said as the link is read
    at.query_params["sweep.learners.classification.tab.epsilon"] = '["dpsgd", "gone"]'  # found after the run
    at.switch_page("pages/5_Tradeoff_explorer.py").run()
    warning = " ".join(w.value for w in at.warning)
    assert "`epsilon` (`2`)" in warning and "`gone`" in warning


def _linked_page():
    """A page that reads its link, then ends before checking it the first time (as a run the visitor interrupts by
    changing an input: Streamlit stops it where it is), and checks it on later runs."""
    import streamlit as st

    from dpcore.ui.links import check_view, restore_view, show_link_problems

    restore_view("t.")
    show_link_problems()
    st.selectbox("Data", ["iris", "wine", "digits"], key="t.data")
    if not st.session_state.get("t_first_run_ended"):
        st.session_state["t_first_run_ended"] = True
        st.stop()
    if check_view():
        st.rerun()


def test_an_input_changed_before_the_linked_run_ended_is_kept_without_a_link_warning():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_linked_page)
    at.query_params["t.data"] = '"wine"'
    at.run()
    assert at.selectbox(key="t.data").value == "wine"
    at.selectbox(key="t.data").set_value("digits").run()  # the visitor's choice, made while the first run went on
    assert not at.warning
    assert at.selectbox(key="t.data").value == "digits"


def test_a_links_bad_value_is_said_before_any_heavy_work_runs_for_the_default_in_its_place(monkeypatch):
    import streamlit as st

    from dpcore.runtime.serving import shared_runs

    runs = shared_runs()
    real = runs.get_or_run
    pending_at_work = []

    def get_or_run(key, compute, **kwargs):
        pending_at_work.append("classical.dataset" in st.session_state.get("link.restored", {}))
        return real(key, compute, **kwargs)

    monkeypatch.setattr(runs, "get_or_run", get_or_run)
    at = page("app.py")
    at.query_params["classical.dataset"] = '"digits"'  # an image set: not offered on this page
    at.switch_page("pages/4_Classical_models.py").run()
    assert not at.exception
    assert any("classical.dataset" in w.value and "default" in w.value for w in at.warning)
    assert pending_at_work and not any(pending_at_work)  # no sweep was queued while the bad value was unsaid


def test_a_hand_typed_list_of_whole_numbers_sets_a_multiselect_of_decimals_and_delta_0_is_kept():
    at = page("app.py")
    at.query_params["images.eps_list"] = "[1, 10]"  # the options are 0.1, 1.0, 10.0 ...
    at.query_params["images.mode"] = '"epsilons"'
    at.query_params["images.delta"] = "0"  # the Gaussian mechanisms are left out, not the value refused
    at.query_params["images.set.n"] = "1"
    at.switch_page("pages/6_Noisy_images.py").run()
    assert not at.exception and not at.warning, [w.value for w in at.warning]
    assert at.multiselect(key="images.eps_list").value == [1.0, 10.0]
    assert at.number_input(key="images.delta").value == 0.0
