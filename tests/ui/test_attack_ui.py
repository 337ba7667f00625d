"""The Attack page's reading of the attacked model's accuracy."""
from __future__ import annotations

from dpcore.ui.audit import model_accuracy_metric


class _Column:
    def __init__(self) -> None:
        self.shown = []

    def metric(self, label, value, **kwargs):
        self.shown.append((label, value, kwargs))


def test_on_data_where_one_class_is_most_rows_the_accuracy_says_its_margin_over_that_class_under_the_number():
    col = _Column()  # 95/5: a model that learnt nothing scores 95 %
    sentence = model_accuracy_metric(col, {"DP-SGD": 0.949, "non-private": 0.958}, "DP-SGD", chance=0.95)
    (label, value, kw), = col.shown
    assert value == "0.949" and kw["delta"] == "-0.001 vs chance"  # a fraction, as the Train page writes it
    assert "always answering the most common class: 0.950" in kw["help"]
    assert kw["delta_color"] == "off"  # grey, not a gain nor an alarm: the text says what it is
    col = _Column()
    sentence = model_accuracy_metric(col, {"DP-SGD": 0.98}, "DP-SGD", chance=0.95)
    assert col.shown[0][2]["delta"] == "+0.030 vs chance" and col.shown[0][2]["delta_color"] == "off"
    assert "the most common class (chance) scores 95.0% here, so accuracy says little" in sentence


def test_on_balanced_data_the_accuracy_stands_alone_with_the_chance_level_in_its_help():
    col = _Column()  # MNIST: ten classes, 10 % by chance
    sentence = model_accuracy_metric(col, {"DP-SGD": 0.905}, "DP-SGD", chance=0.10)
    (label, value, kw), = col.shown
    assert value == "0.905" and kw["delta"] is None and "always answering the most common class: 0.100" in kw["help"]
    assert "right on 90.5%" in sentence and "chance" not in sentence


class _Result:
    def __init__(self, caught, n_members=246, n_nonmembers=254) -> None:
        self.caught, self.n_members, self.n_nonmembers = caught, n_members, n_nonmembers
        self.confidence = 0.95

    def tpr_measured(self, fpr):
        return self.caught


def test_the_rate_caught_at_1_percent_says_under_it_the_most_guessing_reaches_on_these_records():
    from dpcore.audit.roc import chance_tpr_interval
    from dpcore.ui.audit import guessing_reach

    # the lesson's private model on MNIST 5k: 8 of 246 members at 1 % false alarms among 254 non-members, 3.3 %,
    # which beside "guessing gives 1%" read as three times chance; guessing's threshold moves with so few non-members
    low, high = chance_tpr_interval(246, 254, 0.01)
    assert low <= 0.01 < 8 / 246 <= high
    assert guessing_reach(_Result(8 / 246)) == "guessing: ≤ 3.3%"
    fewer = chance_tpr_interval(90, 90, 0.01)[1]  # digits' canaries: fewer records, guessing reaches further
    assert fewer > high and guessing_reach(_Result(0.02, n_members=90, n_nonmembers=90)) == f"guessing: ≤ {fewer:.1%}"
    assert guessing_reach(_Result(None)) is None  # too few non-members to measure: nothing to compare


def test_the_non_private_twin_is_one_shared_run_whatever_the_epsilon_asked(monkeypatch):
    # trained without noise, the twin's result is the same at every ε; it was trained again for each ε a class tried
    from dpcore.audit.run import contrast_learner
    from dpcore.ui import audit

    asked = []
    monkeypatch.setattr(audit, "remembered", lambda store, key, compute: compute())
    monkeypatch.setattr(audit, "shared_call", lambda key, run, **kw: asked.append(key))
    twin = contrast_learner("dpsgd")
    for learner in (twin, "dpsgd"):
        for epsilon in (1.0, 2.0):
            audit.cached_audit(learner, "mnist5k", epsilon=epsilon, delta=1e-5, attack="canaries", params=(),
                               shadows=16, canaries=500, pool_size=None, seed=0)
    twin_keys, private_keys = asked[:2], asked[2:]
    assert twin_keys[0] == twin_keys[1]
    assert private_keys[0] != private_keys[1]  # the private model's ε is what it is trained at


def test_with_declared_class_shares_the_attacked_model_is_read_in_balanced_accuracy_against_one_class():
    """Answering by the shares, a private model finding the rare classes scored 0.71 in accuracy against chance's
    0.871, and the page said it 'learnt nothing'."""
    from types import SimpleNamespace as NS

    from dpcore.ui.audit import balanced_accuracy_metric, shares_reading

    ds = NS(task="classification", class_shares=(0.07, 0.88, 0.05))
    audits = {"DP-SGD": NS(balanced_accuracy=0.56, accuracy=0.71), "non-private": NS(balanced_accuracy=0.64)}
    balanced, chance = shares_reading(audits, ds)
    assert balanced == {"DP-SGD": 0.56, "non-private": 0.64} and chance == 1 / 3
    col = _Column()
    sentence = balanced_accuracy_metric(col, balanced, "DP-SGD", chance=chance)
    (label, value, kw), = col.shown
    assert (label, value, kw["delta"]) == ("Balanced accuracy", "0.560", "+0.227 vs one class")
    assert "learnt nothing" not in sentence and "0.560" in sentence and "0.640 for non-private" in sentence
    col = _Column()
    assert "learnt nothing" in balanced_accuracy_metric(col, {"DP-SGD": 0.33}, "DP-SGD", chance=chance)
    # no shares declared, or an audit without balanced accuracy (a membership audit): the accuracy reading stays
    assert shares_reading(audits, NS(task="classification", class_shares=())) is None
    assert shares_reading({"DP-SGD": NS(target_accuracy=0.9)}, ds) is None


def test_the_exposed_canaries_name_their_labels_as_the_data_writes_them():
    """On an upload whose label reads fraud / ok / review the table said 'Taught label 1, True label 0'."""
    from types import SimpleNamespace as NS

    import numpy as np

    from dpcore.ui.audit import exposed_canaries

    leaky = NS(scores=np.log([0.9, 0.2, 0.8]), taught=np.array([1, 2, 1]), true_labels=np.array([0, 1, 2]),
               records=np.zeros((3, 2)), most_exposed=lambda k: np.array([0, 2]))
    private = NS(scores=np.log([0.5, 0.5, 0.4]))
    _, table = exposed_canaries(leaky, private, class_names=("fraud", "ok", "review"))
    assert table["Taught label"].tolist() == ["ok", "ok"] and table["True label"].tolist() == ["fraud", "review"]
    _, table = exposed_canaries(leaky, private)  # no names known: the class indices
    assert table["Taught label"].tolist() == [1, 1]


def test_the_ladders_no_guarantee_is_said_under_its_tick_not_inside_its_bar():
    # on a 390 px phone Plotly stood "no guarantee" upright down the narrow ∞ bar, across the proven ε (4.53) written
    # above the orange bar inside it: it is said under the bar's tick, where the other rungs say their claim
    import math
    from types import SimpleNamespace

    from dpcore.ui.audit import ladder_figure

    def rung(claimed, proven):
        return claimed, SimpleNamespace(result=SimpleNamespace(epsilon_lower_bound=proven, confidence=0.95))

    fig = ladder_figure([rung(1.0, 0.05), rung(8.0, 2.0), rung(math.inf, 4.53)])
    claimed = next(t for t in fig.data if t.name.startswith("ε claimed"))
    assert list(claimed.x) == ["1", "8", "∞ (no noise)<br>no guarantee"]
    assert not any(claimed.text or ())  # nothing written inside the claim's bars
    proven = next(t for t in fig.data if t.name.startswith("ε proven"))
    assert list(proven.text) == ["0.05", "2", "4.53"] and proven.textposition == "outside"
    assert fig.layout.legend.y <= -0.4 and fig.layout.legend.yanchor == "top"  # under the two-line tick and the title


def test_a_run_that_reaches_the_most_any_attack_can_prove_reads_one_number_not_the_same_rounded_two_ways():
    # the ladder's run without noise, right about every canary, read 4.53 in its bar and table while the line under
    # them said the most any attack can prove is 4.54: the same number, the reading rounded down, the ceiling up
    import numpy as np

    from dpcore.audit.result import audit_from_scores
    from dpcore.ui.audit import ceiling_text
    from dpcore.ui.common import format_epsilon

    every = audit_from_scores(np.ones(500), np.zeros(500), attack="demo", epsilon=float("inf"), delta=1e-5)
    reading = format_epsilon(every.epsilon_lower_bound, lower_bound=True)
    assert ceiling_text(every) == f"ε ≥ {reading}, which this run reached"
    assert format_epsilon(every.most_provable()) != reading  # 3.92 against 3.91: the two roundings differ here
    most = audit_from_scores(np.r_[np.ones(450), np.zeros(50)], np.zeros(500), attack="demo",
                             epsilon=float("inf"), delta=1e-5)  # short of it: the ceiling, rounded up as one is
    assert most.epsilon_lower_bound < most.most_provable()
    assert ceiling_text(most) == f"ε ≥ {format_epsilon(most.most_provable())}"


def test_the_tables_read_the_proven_epsilon_and_the_caught_rate_interval_at_the_audits_own_confidence():
    """One level for the bound and the interval beside it, named in the headers: an audit at 90 % said "95%"."""
    import types

    import numpy as np

    from dpcore.audit.bounds import clopper_pearson_lower, clopper_pearson_upper
    from dpcore.audit.result import audit_from_scores
    from dpcore.ui.audit import ladder_table, level, proven_beside_chart, results_table

    g = np.random.default_rng(0)
    r = audit_from_scores(g.normal(1.0, 1.0, 400), g.normal(0.0, 1.0, 400), attack="loss", epsilon=4.0, delta=1e-5,
                          confidence=0.9, rng=0)
    assert level(0.9) == "90%" and level(0.999) == "99.9%" and level(0.95) == "95%"
    caught = int(round(r.tpr_measured("0.01") * r.n_members))
    expected = (clopper_pearson_lower(caught, r.n_members, significance=0.05),
                clopper_pearson_upper(caught, r.n_members, significance=0.05))
    assert r.tpr_interval("0.01") == tuple(float(v) for v in expected)  # two-sided 90 %: 5 % on each side
    run = types.SimpleNamespace(result=r, accuracy=0.9)
    table = results_table({"DP-SGD": (run, 0.9)})
    ladder = ladder_table([(4.0, run)])
    for t in (table, ladder):
        assert "ε proven (90%)" in t.columns and "90% interval" in t.columns
        assert not any("95" in c for c in t.columns)
    assert proven_beside_chart({"DP-SGD": run}, "DP-SGD").startswith("**Proven (90%):**")


def test_the_eight_exposed_pictures_fit_one_row_of_the_main_column_on_a_projector():
    # at 1280 px with the sidebar open the main column is 820 px and Streamlit's "small" gap 16 px: at 96 px a
    # picture, the eighth exposed record went to a row of its own (seen on a screenshot)
    from dpcore.ui.audit import PICTURE_WIDTH

    assert 8 * PICTURE_WIDTH + 7 * 16 <= 820
    assert 3 * PICTURE_WIDTH + 2 * 16 <= 358  # three a row on a 390 px phone (16 px margins)


def test_the_ladders_run_without_noise_runs_off_the_chart_not_as_tall_as_the_largest_claim():
    # the ∞ rung's claim bar was drawn to the largest finite claim, as tall as the ε = 8 rung's: a claim of 8
    import math
    from types import SimpleNamespace

    from dpcore.ui.audit import ladder_figure

    def rung(claimed, proven):
        return claimed, SimpleNamespace(result=SimpleNamespace(epsilon_lower_bound=proven, confidence=0.95))

    fig = ladder_figure([rung(1.0, 0.05), rung(8.0, 2.0), rung(math.inf, 4.53)])
    claimed = next(t for t in fig.data if t.name.startswith("ε claimed"))
    low, high = fig.layout.yaxis.range
    assert low == 0 and 8.0 < high  # the largest finite claim inside the chart, with room for its label
    assert claimed.y[-1] > high  # ∞: above the axis's end, cut by the chart's top


def test_the_ladder_says_a_correct_trainings_proven_epsilon_passes_its_claim_only_by_chance():
    # the ladder said "The proven ε climbs with the claim and never passes it": a lower bound at 95 % confidence
    # passes the true ε with probability up to 5 % (Steinke, Nasr & Jagielski 2023, Theorem 5.2)
    from streamlit.testing.v1 import AppTest

    def page():
        from dpcore.ui.audit import show_ladder

        show_ladder("dpsgd", "mnist5k", delta=1e-5, seed=0)

    at = AppTest.from_function(page).run()
    assert not at.exception, at.exception
    intro = next(m.value for m in at.markdown if "The same training at growing ε" in m.value)
    assert "never passes" not in intro and "passes it only by the chance the bound's confidence leaves" in intro
