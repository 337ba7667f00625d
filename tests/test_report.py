"""The decision report: `python -m dpcore report` on one's own file holds the answer and its evidence, opens offline,
and holds no cell value of the file."""
from __future__ import annotations

import json
import pathlib
import re
from html import unescape

import numpy as np
import pytest

from tests.sweep_tables import sweep_with_references

LABELS = ("stayed_48213", "churned_90377")  # class labels are cell values too
#: a column of categories, declared with --categories (declared categories are cell values too), and a value of it
#: that is not declared (how many cells hold it counts the file's unusual records)
PLANS, UNDECLARED_PLAN = ("Platinum_73519", "Gold_28461", "Basic_64027"), "Legacy_91733"
#: the module's tests read one report command's output (a module fixture, 5 s): one test worker runs them all, so
#: that it is made once, not once in each worker that happens to run one of them
pytestmark = pytest.mark.xdist_group("report")


@pytest.fixture(scope="module")
def owner_file(tmp_path_factory) -> tuple[pathlib.Path, set[str]]:
    """A customer table whose every cell is a distinctive 7-digit number, a distinctive label or a distinctive
    category."""
    rng = np.random.default_rng(2024)
    n = 240
    X = rng.integers(1_000_000, 9_999_999, size=(n, 3))
    score = (X[:, 0] - 5.5e6) / 2.6e6 + 0.6 * (X[:, 1] - 5.5e6) / 2.6e6 + rng.normal(0, 0.5, n)
    y = np.where(score > 0, LABELS[1], LABELS[0])
    path = tmp_path_factory.mktemp("owner") / "customers.csv"
    plans = [(*PLANS, UNDECLARED_PLAN)[i % 4] for i in range(n)]
    lines = ["monthly_spend,visits,tenure_days,plan,churn"] + [f"{a},{b},{c},{p},{lab}"
                                                               for (a, b, c), p, lab in zip(X, plans, y)]
    path.write_text("\n".join(lines) + "\n")
    cells = {str(v) for v in X.ravel()} | set(LABELS) | set(PLANS) | {UNDECLARED_PLAN}
    return path, cells


@pytest.fixture(scope="module")
def made_report(owner_file, tmp_path_factory):
    """The report command run once on the file (two ε, two seeds, one learner, the attack included)."""
    import subprocess
    import sys

    path, cells = owner_file
    out = tmp_path_factory.mktemp("report") / "report.html"
    cache = tmp_path_factory.mktemp("cache")
    proc = subprocess.run(
        [sys.executable, "-m", "dpcore", "report", "--data", str(path), "--label", "churn", "--need",
         "accuracy>=0.6", "--epsilon-range", "1,10", "--points", "2", "--seeds", "2", "--algorithms", "erm-objective",
         "--bounds", "*=1000000:9999999", "--categories", "plan=" + "|".join(PLANS), "--jobs", "1", "--out", str(out),
         "--json"],
        capture_output=True, text=True, timeout=600, env={**__import__("os").environ, "DPCORE_CACHE_DIR": str(cache)},
        cwd=pathlib.Path(__file__).resolve().parents[1])
    assert proc.returncode == 0, proc.stderr
    return out.read_text(encoding="utf-8"), proc.stdout, proc.stderr, cells, cache


def test_no_cell_value_of_the_file_appears_in_the_report_or_its_json(made_report):
    html, stdout, _, cells, _ = made_report
    assert len(cells) > 700
    for text in (html, stdout):
        leaked = sorted(c for c in cells if c in text)
        assert leaked == [], f"cell values in the report: {leaked[:5]}"
        # nor a 0/1 column named after a category, nor how many cells were none of the declared ones
        assert "plan=" not in text and "of 240 cells" not in text
    assert "(60 of 240 cells)" in made_report[2]  # said to the owner, on the terminal


def test_the_report_holds_the_question_the_answer_and_the_evidence(made_report):
    html, stdout, _, _, _ = made_report
    doc = json.loads(stdout.strip().splitlines()[-1])
    assert doc["need"]["text"] == "accuracy at least 0.6"
    assert doc["data"]["rows"] == 240 and doc["data"]["classes"] == 2
    assert [c["column"] for c in doc["data"]["columns"]] == ["monthly_spend", "visits", "tenure_days",
                                                             "plan (3 declared categories)"]
    assert {p["epsilon"] for p in doc["points"]} == {1.0, 10.0}
    assert all(p["event"] for p in doc["points"])  # each ε with its dp_accounting event
    assert doc["noise"].startswith("secure")
    assert doc["versions"]["dp-accounting"] and doc["created"]
    if doc["met"]:
        assert doc["attack"] is not None and "epsilon_lower_bound" in doc["attack"]
        assert doc["recommended"]["band"] in html
    for words in ("The question asked", "The answer", "The curves", "Choosing ε from these curves is a release",
                  "Your data", "Every ε tried", "How it was computed", "monthly_spend",
                  "1000000 to 9999999 (declared)"):
        assert words in html
    assert re.search(r"DpEvent\(", html)
    # what choosing ε cost reads in paragraphs: the cost, how it is counted, the remedies
    assert "<p>How it is counted: " in html and "<p>Two remedies. (1)" in html


def test_the_report_says_at_its_top_that_it_is_not_covered_by_the_epsilon_it_recommends(made_report):
    """The recommended ε covers one model trained at it; the report holds every curve looked at (their composed ε),
    and the non-private and trivial scores and the attack, which no ε covers: a data owner is told before anything
    else to keep it with those who may see the rows, the composed ε said there as in the section that counts it."""
    html, stdout, _, _, _ = made_report
    doc = json.loads(stdout.strip().splitlines()[-1])
    top = unescape(html[:html.index("<h2>The question asked</h2>")])
    assert "<strong>Who may read it.</strong> This report is not covered by the ε it recommends" in top
    cost = re.search(r"Looking at (?:it|both of them|all \d+ of them) costs ε = ([0-9.e+∞]+)", html)
    assert cost and f"Its curves cost ε = {cost.group(1)} " in top
    assert "without noise, which no ε covers. Keep it with those allowed to see the data" in top
    assert ("and the attack's figures," in top) == (doc["attack"] is not None)


def test_the_report_command_says_on_the_terminal_what_choosing_the_epsilon_cost(made_report):
    """The terminal's answer comes with its price: the runs looked at to choose it, composed, as the report says."""
    html, _, stderr, _, _ = made_report
    said = re.search(r"Choosing ε from these curves is itself a release: .*? costs ε = [0-9.e+∞]+.*", stderr)
    assert said and unescape(said.group(0)) in unescape(html)


def test_the_report_opens_offline_chart_inside(made_report):
    html = made_report[0]
    assert "<svg" in html and "<polyline" in html
    assert "<script" not in html and not re.search(r"(src|href)=\"https?://", html)


def test_the_runs_on_ones_own_file_are_not_cached_on_disk(made_report):
    cache = made_report[4]
    assert not any(cache.rglob("*.json"))
    assert "not cached on disk" in made_report[2]


def test_the_report_renders_in_headless_chromium_without_errors(made_report, tmp_path):
    chromium = pathlib.Path("/usr/bin/chromium")
    if not chromium.exists():
        pytest.skip("no Chromium at /usr/bin/chromium (apt-get install chromium)")
    playwright = pytest.importorskip("playwright.sync_api")
    page_file = tmp_path / "report.html"
    page_file.write_text(made_report[0], encoding="utf-8")
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium))
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(page_file.as_uri())
            box = page.locator("svg").first.bounding_box()
            heading = page.locator("h1").inner_text()
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        finally:
            browser.close()
    assert errors == []
    assert box is not None and box["width"] > 500 and box["height"] > 300
    assert "decision report" in heading


@pytest.mark.parametrize("argv, words", [
    (["report", "--dataset", "iris"], "give --out FILE.html"),
    (["report", "--dataset", "iris", "--json", "--epsilon-range", "5,1"], "--epsilon-range must be 0 < LOW"),
    (["report", "--dataset", "iris", "--json", "--need", "speed>=3"], "--need 'speed>=3'"),
    # refused before the sweep: it ran 70 trainings to say that no ε reaches an accuracy of 90
    (["report", "--dataset", "iris", "--json", "--need", "accuracy>=90"], "--need 'accuracy>=90': accuracy is at most"),
])
def test_bad_report_arguments_get_one_line_naming_the_flag(cli, argv, words):
    res = cli(*argv)
    assert res.returncode == 2 and words in res.stderr and "Traceback" not in res.stderr


def _imbalanced_advice(level: float = 0.9):
    """The advice on a 95/5 upload (labels 'no'/'yes') whose private model at ε = 0.1 answers 'no' for every row,
    for a need of accuracy at least ``level``."""
    import math

    import pandas as pd

    from dpcore.datasets.csv_upload import load_csv
    from dpcore.decision.advisor import Need, judge
    from dpcore.sweep import SweepConfig, SweepResult

    rng = np.random.default_rng(3)
    lines = ["heart_rate,lactate,sepsis"] + [f"{rng.normal(80, 9):.1f},{rng.normal(1.5, 0.4):.2f},"
                                             f"{'yes' if i % 20 == 0 else 'no'}" for i in range(200)]
    ds = load_csv("\n".join(lines).encode(), label_column="sepsis", name="ward.csv",
                  bounds="heart_rate=20:250,lactate=0:20")
    config = SweepConfig(dataset=ds, learners=("erm-objective",), values=(0.1, 1.0, 10.0), seeds=3)
    rows = []
    for s in range(3):
        rows.append({"learner": "logreg", "role": "baseline", "value": np.nan, "seed": s, "accuracy": 0.97,
                     "epsilon": math.inf, "warnings": "", "leaks_privacy": False, "event": ""})
        rows.append({"learner": "majority", "role": "trivial", "value": np.nan, "seed": s, "accuracy": 0.95,
                     "epsilon": math.inf, "warnings": "", "leaks_privacy": False, "event": ""})
    for v, acc in ((0.1, 0.95), (1.0, 0.96), (10.0, 0.965)):
        for s in range(3):
            warn = ("DP-ERM predicts the single class 'no' for every test row: its accuracy is that class's share "
                    "of the test rows, not skill." if v == 0.1 else "")
            rows.append({"learner": "erm-objective", "role": "swept", "value": v, "seed": s,
                         "accuracy": acc + 0.001 * s, "epsilon": v, "warnings": warn, "leaks_privacy": False,
                         "event": '{"dp_event": "EpsilonDeltaDpEvent", "epsilon": %r, "delta": 0.0}' % v})
    return judge(SweepResult(config, pd.DataFrame(rows), 0, len(rows), 0.0), Need("at_least", "accuracy", level)), ds


def test_the_report_command_says_on_the_terminal_what_would_meet_a_need_no_epsilon_meets(cli, tmp_path, monkeypatch):
    # it printed only "No ε from ... meets the need": what to change next was in the HTML file alone
    import dpcore.decision.advisor as advisor

    advice, _ = _imbalanced_advice(level=0.99)
    assert advice.recommended is None and advice.instead
    monkeypatch.setattr(advisor, "advise", lambda *a, **k: advice)
    data = tmp_path / "ward.csv"
    data.write_text("heart_rate,sepsis\n" + "".join(f"{70 + i % 30},{'yes' if i % 20 == 0 else 'no'}\n"
                                                     for i in range(200)))
    res = cli("report", "--data", data, "--label", "sepsis", "--bounds", "heart_rate=20:250", "--out",
              tmp_path / "r.html")
    assert res.returncode == 0, res.stderr
    assert "No ε from" in res.stderr and "What would meet it:" in res.stderr
    for line in advice.instead:
        assert f"  - {line}" in res.stderr


def test_the_report_says_why_a_point_above_the_target_does_not_meet_and_names_no_class():
    from dpcore.decision.report import report_html

    advice, ds = _imbalanced_advice()
    html = report_html(advice)
    # ε = 0.1: 0.95 is above the target 0.9, but it is the majority class's score: the table says why it is "no"
    assert "<td>no (no better than the trivial predictor)</td>" in html
    assert "beware: always answering the most common class scores 0.950, which meets it too" in html
    assert "predicts a single class for every test row" in html
    assert "'no'" not in html and "'yes'" not in html


def test_the_report_fits_a_phone_screen_its_chart_scaled_and_its_wide_table_scrolled_inside(tmp_path):
    # the chart's 760 px and the ε table's ten columns widened a 390 px phone page to 811 px
    chromium = pathlib.Path("/usr/bin/chromium")
    if not chromium.exists():
        pytest.skip("no Chromium at /usr/bin/chromium (apt-get install chromium)")
    playwright = pytest.importorskip("playwright.sync_api")
    from dpcore.decision.report import report_html

    page_file = tmp_path / "report.html"
    page_file.write_text(report_html(_imbalanced_advice()[0]), encoding="utf-8")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=["--headless", "--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 390, "height": 844})
            page.goto(page_file.as_uri())
            page_width = page.evaluate("document.documentElement.scrollWidth")
            chart = page.locator("svg").first.bounding_box()
        finally:
            browser.close()
    assert page_width <= 390
    assert chart is not None and chart["width"] <= 390 - 2 * 16 and chart["height"] > 100  # scaled, not cut


def test_the_recommended_point_s_label_stays_inside_the_chart_at_the_top_of_the_range():
    # ε = 10, the range's top, was labelled from its point rightwards: "recommended ε = 10" ran off the chart
    from dataclasses import replace

    from dpcore.decision.report import curves_svg

    advice, _ = _imbalanced_advice()
    top = advice.points[advice.points.epsilon == 10.0].iloc[0]
    advice = replace(advice, recommended={**advice.recommended, "epsilon": 10.0, "mean": float(top["mean"])})
    svg = curves_svg(advice, width=760)
    label = re.search(r'<text x="([\d.]+)" y="[\d.]+" font-weight="bold"[^>]*?( text-anchor="end")?>'
                      r'recommended ε = 10<', svg)
    assert label and label[2] and float(label[1]) < 760 - 16


def _legend_and_points(svg: str):
    box = re.search(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="#fff"', svg)
    x, y, w, h = (float(v) for v in box.groups())
    points = [(float(a), float(b)) for a, b in re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)" r="4"', svg)]
    label = re.search(r'<text x="([\d.]+)" y="([\d.]+)" font-weight="bold"', svg)
    return (x, y, w, h), points, (float(label[1]), float(label[2]))


@pytest.mark.parametrize("trivial", [None, 0.2], ids=["curves-spread", "curves-crowding-the-top"])
def test_the_chart_legend_hides_no_curve_point_and_the_recommended_label_clears_it(trivial):
    # an R² sweep whose curves end near its best, under an axis stretched far below by its first points, drew its
    # legend over those curves and the label 'recommended ε = 4.64' over the legend's text
    from dataclasses import replace

    from dpcore.decision.report import curves_svg

    advice, _ = _imbalanced_advice()
    if trivial is not None:  # a reference far below stretches the axis: every curve point sits in the top band
        advice = replace(advice, trivial=trivial)
    (x, y, w, h), points, (lx, ly) = _legend_and_points(curves_svg(advice, width=760))
    assert points and not [p for p in points if x <= p[0] <= x + w and y <= p[1] <= y + h]
    assert not (x <= lx <= x + w + 150 and y <= ly <= y + h + 12)  # the label's baseline is not in the box


def test_the_chart_draws_each_learners_own_non_private_model_where_they_differ():
    # with declared class shares DP-SGD's counterpart follows them (0.656) and DP-ERM's does not (0.349): the chart
    # drew only "non-private 0.349" under a DP-SGD curve at 0.59 that the report said fell short of "the non-private
    # model"
    import math

    import pandas as pd

    from dpcore.datasets.csv_upload import load_csv
    from dpcore.decision.advisor import Need, judge
    from dpcore.decision.report import curves_svg, non_private_lines
    from dpcore.sweep import SweepConfig, SweepResult

    rng = np.random.default_rng(5)
    lines = ["a,b,y"] + [f"{rng.normal():.3f},{rng.normal():.3f},{'r' if i % 10 == 0 else 'c'}" for i in range(200)]
    ds = load_csv("\n".join(lines).encode(), label_column="y", name="t.csv", bounds="*=-5:5")
    config = SweepConfig(dataset=ds, learners=("dpsgd", "erm-objective"), values=(1.0, 10.0), seeds=2)
    assert config.baseline_for("dpsgd") != config.baseline_for("erm-objective")
    rows = []
    for s in range(2):
        for learner, value in ((config.baseline_for("dpsgd"), 0.656), (config.baseline_for("erm-objective"), 0.349)):
            rows.append({"learner": learner, "role": "baseline", "value": np.nan, "seed": s, "balanced_accuracy": value,
                         "accuracy": 0.5, "epsilon": math.inf, "warnings": "", "leaks_privacy": False, "event": ""})
        rows.append({"learner": "majority", "role": "trivial", "value": np.nan, "seed": s, "balanced_accuracy": 1 / 3,
                     "accuracy": 0.88, "epsilon": math.inf, "warnings": "", "leaks_privacy": False, "event": ""})
        for learner, value in (("dpsgd", 0.59), ("erm-objective", 0.34)):
            for v in (1.0, 10.0):
                rows.append({"learner": learner, "role": "swept", "value": v, "seed": s,
                             "balanced_accuracy": value + 0.001 * s, "accuracy": 0.7, "epsilon": v, "warnings": "",
                             "leaks_privacy": False, "event": ""})
    advice = judge(SweepResult(config, pd.DataFrame(rows), 0, len(rows), 0.0), Need("within", "balanced_accuracy",
                                                                                     0.05))
    drawn = dict((value, label) for label, value in non_private_lines(advice))
    assert sorted(drawn) == pytest.approx([0.349, 0.656])
    svg = curves_svg(advice)
    assert "Non-private SGD" in svg and "0.656" in svg and "0.349" in svg
    # one learner (or learners sharing a counterpart): the one line keeps its short name
    one = judge(SweepResult(config, pd.DataFrame([r for r in rows if r["learner"] != "erm-objective"]), 0, 1, 0.0),
                Need("within", "balanced_accuracy", 0.05))
    assert [label for label, _ in non_private_lines(one)] == ["non-private"]


def test_every_number_of_the_report_s_table_and_attack_is_said_in_words():
    # "bound", "spread (sd)", "ε spent" and "AUC 0.506" stood in the report with no word on what they are
    from dataclasses import replace

    from dpcore.decision.report import report_html

    advice, _ = _imbalanced_advice()
    attack = {"attack": "loss threshold (Yeom et al. 2018)", "epsilon": 1.0, "epsilon_lower_bound": 0.0,
              "confidence": 0.95, "caught_at_1pct": 0.002, "auc": 0.506, "pool": 200, "model_accuracy": 0.95}
    html = report_html(replace(advice, attack=attack))
    assert "AUC 0.506: the chance that the attack ranks a member above a non-member, 0.5 for guessing" in html
    # read with the members known, which no epsilon covers, from one more run on the rows: said beside them
    assert "measured knowing which of your records trained the attacked model (an attacker does not), so no ε" in html
    assert "that model is one more run on your data, besides the ones counted below" in html
    for words in ("Mean: the score averaged over the seeds", "Spread (sd): the seeds&#x27; standard deviation",
                  "Bound: the score a fresh run reaches at least in 90% of cases", "Target: the score the need asks",
                  "ε spent: what the runs spent, computed by dp_accounting"):
        assert words in html, words


def test_the_attack_paragraph_says_how_well_the_attacked_model_did_and_when_it_learnt_nothing():
    # the attacked model scored 0.617 where always answering 'no' scored 0.632: the board read "proves ε ≥ 0" alone
    from dataclasses import replace

    from dpcore.decision.advisor import Need, judge
    from dpcore.decision.report import report_html

    advice = judge(sweep_with_references({"erm-objective": 0.8}, {"logreg": 0.85}), Need("within", "accuracy", 0.1))
    attack = {"attack": "loss threshold (Yeom et al. 2018)", "epsilon": 1.0, "epsilon_lower_bound": 0.0,
              "confidence": 0.95, "caught_at_1pct": 0.0, "auc": 0.506, "pool": 200}
    learnt = report_html(replace(advice, attack={**attack, "model_accuracy": advice.trivial + 0.1}))
    assert f"The attacked model answers {advice.trivial + 0.1:.1%} of the records it never saw right." in learnt
    nothing = report_html(replace(advice, attack={**attack, "model_accuracy": advice.trivial - 0.01}))
    assert (f"no better than always answering the most common class ({advice.trivial:.1%}): a model that learnt so "
            "little gives an attack little to find") in nothing


def test_two_non_private_lines_a_hair_apart_keep_their_names_apart():
    # the network at 0.740 and logistic regression at 0.736: their names were drawn 1 px apart, one over the other
    from dpcore.decision.advisor import Need, judge
    from dpcore.decision.report import curves_svg

    result = sweep_with_references({"dpsgd": 0.73, "erm-objective": 0.70}, {"non-private": 0.740, "logreg": 0.736},
                                   seeds=2, step=0.01)
    svg = curves_svg(judge(result, Need("within", "accuracy", 0.05)))
    ys = [float(m) for m in re.findall(r'<text x="[\d.]+" y="([\d.]+)" text-anchor="end" fill="#000">[^<]*0\.7[34]',
                                       svg)]
    assert len(ys) == 2 and abs(ys[0] - ys[1]) >= 12, ys


def test_a_quoted_class_name_in_parentheses_is_left_out_not_replaced_by_a_class():
    # the sweep's warning "always answering the most common training class ('no')" read "... class (a class)"
    from dpcore.decision.report import scrub

    _, ds = _imbalanced_advice()
    said = scrub("no more accurate than always answering the most common training class ('no'). Try more", ds)
    assert said == "no more accurate than always answering the most common training class. Try more"
    assert scrub("predicts the single class 'yes' for every row", ds) == "predicts a single class for every row"


def test_the_question_says_what_delta_and_the_seeds_are():
    # "δ 1e-05" and "seeds per ε 5" stood in the question with no word on what they are. δ is the additive slack of
    # (ε, δ)-DP (Dwork & Roth 2014, Definition 2.4), not "the small chance that the guarantee does not hold" the
    # report said: the Gaussian's outputs past e^ε are far likelier than δ
    from dpcore.decision.report import question_of

    advice, _ = _imbalanced_advice()
    q = question_of(advice)
    assert q["δ"].startswith("1e-05 (the additive slack beside ε") and "below 1/n" in q["δ"]
    assert "not the chance that the ε bound fails" in q["δ"] and "guarantee does not hold" not in q["δ"]
    assert q["seeds per ε"].startswith("3 (runs at each ε, each on a fresh split")


def test_the_report_names_the_columns_clipped_to_their_bounds_but_not_how_many_values_were():
    # "165 value(s) lay outside the declared bounds ...: 'age' (165)" counted the file's extreme records in a report
    # meant to be shared, and no ε covers that count
    import warnings

    from dpcore.datasets.csv_upload import load_csv
    from dpcore.datasets.transforms import standardize_with_bounds
    from dpcore.decision.report import scrub
    from dpcore.validation import clip_to_bounds

    rows = "age,bmi,y\n" + "".join(f"{20 + i},{18 + i % 30},{i % 2}\n" for i in range(120))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = load_csv(rows.encode(), label_column="y", bounds="age=0:100, bmi=0:40")
        standardize_with_bounds(np.array([[1.0], [5.0], [9.0]]), (0.0, 4.0))
        clip_to_bounds(np.array([1.0, 5.0, 9.0]), 0.0, 4.0, name="the label 'y'")
    said = [str(w.message) for w in caught if "lay outside the declared bounds" in str(w.message)]
    assert len(said) == 3 and "'age' (" in said[0] and all(m[0].isdigit() for m in said)
    scrubbed = [scrub(m, ds) for m in said]
    assert scrubbed[0].startswith("Values lay outside the declared bounds and were clipped to them: 'age', 'bmi'")
    assert scrubbed[1].startswith("Rows lay outside the declared bounds")
    assert scrubbed[2].startswith("Values of the label 'y' lay outside the declared bounds")
    assert not any(re.search(r"\d", m) for m in scrubbed), scrubbed


def test_a_column_of_categories_is_named_with_its_count_and_no_category_appears_in_the_report_or_its_json():
    # a declared category is a cell value: the report names its column and counts its categories, and says neither a
    # category, nor a 0/1 column named after one, nor how many cells were none of them (the file's unusual records)
    import warnings

    from dpcore.datasets.csv_upload import load_csv
    from dpcore.decision.advisor import Need, judge
    from dpcore.decision.report import report_html, report_json

    wards, sexes = ("Xylocardia_4471", "Quuxoncology_8812", "Zorbsurgery_3390"), ("Femmeq_5521", "Mascq_6603")
    other = "Plumbotransplant_7719"  # in the file, not declared: all zeros, counted to the owner
    rows = "age,ward,sex,y\n" + "".join(f"{20 + i % 60},{(*wards, other)[i % 4]},{sexes[i % 2]},{i % 2}\n"
                                        for i in range(120))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = load_csv(rows.encode(), label_column="y", name="wards.csv", bounds="age=0:110",
                      categories={"ward": wards, "sex": sexes})
    load_warnings = [(str(w.message), False) for w in caught]
    assert any("'ward' (30 of 120 cells)" in m for m, _ in load_warnings)  # said to the owner, not in the report
    result = sweep_with_references({"erm-objective": 0.8}, {"logreg": 0.85}, dataset=ds)
    swept = result.table.index[result.table.role == "swept"][0]
    result.table.loc[swept, "warnings"] = f"a learner's warning naming 'sex={sexes[0]}' and {wards[1]!r}"
    advice = judge(result, Need("within", "accuracy", 0.1))
    html = report_html(advice, load_warnings=load_warnings)
    doc = report_json(advice, load_warnings=load_warnings)
    for text in (html, json.dumps(doc)):
        for token in (*wards, *sexes, other, "ward=", "sex=", "30 of 120", "(30"):
            assert token not in text, token
    assert "ward (3 declared categories)" in html and "sex (2 declared categories)" in html
    assert [c["column"] for c in doc["data"]["columns"]] == ["age", "ward (3 declared categories)",
                                                             "sex (2 declared categories)"]
    assert "Some cells hold none of their column&#x27;s declared categories: &#x27;ward&#x27;; each is" in html
    assert "naming &#x27;sex&#x27; (a declared category) and a category" in html


def test_the_report_says_what_a_column_of_declared_categories_is_where_the_data_has_one():
    # a board member reads "ward (5 declared categories)" and 14 features from 7 columns: the report says why
    import warnings
    from html import escape

    from dpcore.datasets.csv_upload import load_csv
    from dpcore.decision.report import CATEGORIES_NOTE, _data_section, data_shape

    rows = "age,ward,y\n" + "".join(f"{20 + i},{('Cardiology', 'Oncology')[i % 2]},{i % 2}\n" for i in range(40))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        declared = load_csv(rows.encode(), label_column="y", bounds="age=0:110", categories="ward=Cardiology|Oncology")
        plain = load_csv(rows.encode(), label_column="y", bounds="age=0:110", drop="ward")
    shape = data_shape(declared)
    assert shape["declared_categories"] == CATEGORIES_NOTE and "more features than columns" in CATEGORIES_NOTE
    assert f"<p>{escape(CATEGORIES_NOTE)}</p>" in "".join(_data_section(shape))
    assert "declared_categories" not in data_shape(plain) and "yes/no" not in "".join(_data_section(data_shape(plain)))


def test_judged_by_balanced_accuracy_the_attacked_model_s_accuracy_is_set_beside_the_most_common_class_s():
    # an 84/16 label judged in balanced accuracy (0.59 at the recommended ε): the report said "the attacked model
    # answers 84.8% of the records it never saw right" alone, which a manager reads as a good model, where always
    # answering the most common class answers 84.1% right
    from dataclasses import replace

    from dpcore.decision.advisor import Need, judge
    from dpcore.decision.report import report_html

    result = sweep_with_references({"dpsgd": 0.85}, {"non-private": 0.88}, trivial=0.841)
    t = result.table
    t["balanced_accuracy"] = np.select([t.role == "trivial", t.role == "baseline"], [0.5, 0.79], 0.59 + 0.01 * t.seed)
    advice = judge(result, Need("at_least", "balanced_accuracy", 0.55))
    assert advice.met and advice.metric == "balanced_accuracy"
    attack = {"attack": "loss threshold (Yeom et al. 2018)", "epsilon": 1.0, "epsilon_lower_bound": 0.0,
              "confidence": 0.95, "caught_at_1pct": 0.015, "auc": 0.502, "pool": 1000, "model_accuracy": 0.848}
    html = report_html(replace(advice, attack=attack))
    assert ("The attacked model answers 84.8% of the records it never saw right, in accuracy; always answering the "
            "most common class answers 84.1% right, which is why the need is judged in balanced accuracy.") in html
    nothing = report_html(replace(advice, attack={**attack, "model_accuracy": 0.83}))
    assert ("no better than always answering the most common class (84.1%): a model that learnt so little gives an "
            "attack little to find") in nothing
