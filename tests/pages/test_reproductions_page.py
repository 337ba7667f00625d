"""The "Papers, reproduced" page: a paper's claim, a live run on a click, published beside ours."""
from __future__ import annotations

import json

from .conftest import page

PATH = "pages/10_Papers_reproduced.py"


def test_the_page_describes_the_paper_and_runs_it_on_a_click():
    at = page(PATH).run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "Abadi" in text and "What the paper reports" in text and "What runs here" in text
    assert not at.get("plotly_chart")  # nothing computed before the click
    at.button(key="repro.run").click().run()
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table.columns) == ["Quantity", "Published", "Ours"]
    assert "1.26" in table.Published.tolist() and "9.34" in table.Published.tolist()
    assert at.get("plotly_chart")
    checks = " ".join(m.value for m in at.markdown)
    assert "holds" in checks and "fails" not in checks
    assert any(m.label == "Checks that hold" and m.value == "5 / 5" for m in at.metric)
    assert not any(b.label == "Run it live" for b in at.button)  # nothing left to press for this entry


def test_an_entry_with_a_gap_says_so_and_the_result_stays_when_coming_back():
    at = page(PATH).run()
    at.selectbox(key="repro.name").set_value("zhang2012-functional").run()  # a fast entry with a stated gap
    at.button(key="repro.run").click().run()
    assert not at.exception
    assert any(w.value.startswith("**Reproduced in part.**") for w in at.warning)
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["layout"]["xaxis"]["type"] == "log"
    assert spec["layout"]["xaxis"]["title"]["text"] == "ε — log scale"  # a reader sees the axis is not linear
    at.selectbox(key="repro.name").set_value("abadi2016-accountant").run()
    at.selectbox(key="repro.name").set_value("zhang2012-functional").run()
    assert at.get("plotly_chart")  # kept in the session: no second click


def test_an_entry_whose_paper_gives_no_numbers_shows_ours_without_a_column_of_dashes():
    at = page(PATH).run()
    at.selectbox(key="repro.name").set_value("su2016-dplloyd").run()
    at.button(key="repro.run").click().run()
    assert not at.exception
    assert list(at.dataframe[0].value.columns) == ["Quantity", "Ours"]
    assert any("#### Our numbers" in m.value for m in at.markdown)
    assert not any("Published beside ours" in m.value for m in at.markdown)


def test_every_paper_at_a_glance_runs_the_rest_and_lists_each_with_its_checks(monkeypatch):
    from dpcore.reproduce import entries, registry

    # the slow entries stand aside here: the table and the button are what is under test (each entry is tested alone)
    fast = {n: registry.REPRODUCTIONS[n] for n in ("abadi2016-accountant", "su2016-dplloyd", "zhang2012-functional")}
    monkeypatch.setattr(registry, "REPRODUCTIONS", fast)
    assert entries  # the entries module registered into the real table before the swap
    at = page(PATH).run()
    at.button(key="repro.all").click().run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "Paper" in d.value.columns)
    assert set(table.Paper) == {"Abadi et al. 2016", "Su et al. 2016", "Zhang et al. 2012"}
    assert table.set_index("Paper").loc["Zhang et al. 2012", "Reproduced"] == "in part (see its gap)"
    assert not any("Run the" in b.label for b in at.button)  # nothing left to run
    assert any(m.label == "Checks that hold" for m in at.metric)  # the selected entry's result is drawn too
    held, total = table["Checks that hold"].str.split(" / ").str[0], table["Checks that hold"].str.split(" / ").str[1]
    assert (held == total).all()
