"""Where a page's key control is and the charts read with it: said under the title on a phone, whose sidebar is folded;
beside it in tabs when presenting."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page_with_epsilon_in_the_sidebar():
    import streamlit as st

    from dpcore.ui.common import page_header
    from dpcore.ui.present import control_area

    page_header("A page", "What it shows.")
    control_area(st.sidebar).slider("Epsilon (ε)", 0.05, 5.0, 1.0, key="home.eps")
    control_area(st.sidebar).markdown("its verdict")  # a second control there: still one cue
    st.markdown("The page's chart.")


def _page_with_its_control_in_the_main_area():
    import streamlit as st

    from dpcore.ui.common import page_header
    from dpcore.ui.present import control_area

    page_header("A page", "What it shows.")
    control_area(st).button("Run")


def _cues(at):
    return [m.value for m in at.main.markdown if "dp-knobs-cue" in m.value]


def test_a_page_whose_knobs_are_in_the_sidebar_says_so_under_its_title_where_a_phone_folds_the_sidebar():
    # on a 390-pixel phone Streamlit folds the sidebar away (768 px and less), and the home page showed no ε at all
    # while the lesson's first stop asks the room to move it
    from dpcore.ui.common import _PHONE_STYLE
    from dpcore.ui.present import KNOBS_CUE

    assert "@media (max-width: 768px){.dp-knobs-cue{display:block}}" in _PHONE_STYLE  # hidden on wider screens
    at = AppTest.from_function(_page_with_epsilon_in_the_sidebar).run()
    assert not at.exception, at.exception
    assert _cues(at) == [KNOBS_CUE]
    said = [m.value for m in at.main.markdown]
    assert said.index(KNOBS_CUE) < said.index("What it shows.")  # under the title, above the intro
    presenting = AppTest.from_function(_page_with_epsilon_in_the_sidebar)
    presenting.query_params["present"] = "1"
    presenting.run()  # ε is on the stage, beside the chart: nothing to say
    assert not presenting.exception and not _cues(presenting)
    main_only = AppTest.from_function(_page_with_its_control_in_the_main_area).run()
    assert not main_only.exception and not _cues(main_only)


def _page_with_two_charts_read_together():
    import streamlit as st

    from dpcore.ui.common import page_header
    from dpcore.ui.present import control_area, headline_tabs

    page_header("A page", "What it shows.")
    control_area(st.sidebar).slider("Epsilon (ε)", 0.05, 5.0, 1.0, key="home.eps")
    st.header("Section 2")
    curves, ratio = headline_tabs("The two curves", "Their ratio and its band")
    (curves or st).markdown("curves")
    (ratio or st).markdown("ratio")


def test_presenting_the_charts_read_with_the_headline_are_tabs_beside_the_key_control():
    # the lesson's first stop: move ε and watch the ratio band, which stood a screen below the stage (and below the
    # ε slider's reach) at 1280x720
    at = AppTest.from_function(_page_with_two_charts_read_together)
    at.query_params["present"] = "1"
    at.run()
    assert not at.exception, at.exception
    assert [t.label for t in at.tabs] == ["The two curves", "Their ratio and its band"]
    assert [m.value for m in at.tabs[0].markdown] == ["curves"] and [m.value for m in at.tabs[1].markdown] == ["ratio"]
    normal = AppTest.from_function(_page_with_two_charts_read_together).run()  # in the page's flow, no tabs
    assert not normal.exception and not normal.tabs
    assert [m.value for m in normal.main.markdown][-2:] == ["curves", "ratio"]


def _page_with_a_form_on_the_stage():
    import streamlit as st

    from dpcore.ui.common import page_header
    from dpcore.ui.present import control_area, headline_area

    page_header("A page", "What it shows.")
    with control_area(st.sidebar).form("audit.form"):
        st.number_input("Epsilon (ε)", key="audit.eps")
        st.form_submit_button("Train and attack")
    headline_area().markdown("the ROC chart")


def test_on_a_phone_a_stage_whose_control_is_a_form_shows_its_chart_first():
    # presenting on a 390-pixel phone, the stage's columns stand one above the other, and the Attack page's form of a
    # dozen settings put its ROC curve two screens down
    from dpcore.ui.present import STAGE_KEY, STYLE

    at = AppTest.from_function(_page_with_a_form_on_the_stage)
    at.query_params["present"] = "1"
    at.run()
    assert not at.exception, at.exception
    stage = next(b for b in at.main.children.values() if getattr(b.proto, "id", "").endswith(f"-{STAGE_KEY}"))
    columns = list(next(iter(stage.children.values())).children.values())
    assert [c.type for c in columns] == ["column", "column"] and columns[1].markdown[0].value == "the ROC chart"
    rule = (f'.st-key-{STAGE_KEY} [data-testid="stHorizontalBlock"]:has([data-testid="stForm"]) > '
            '[data-testid="stColumn"]:last-child')
    phone = STYLE[STYLE.index("@media (max-width: 640px)"):]
    assert rule in " ".join(phone.split()) and "order: -1" in phone
