"""AppTest: the home page and the Accountant page run and react to their controls."""
from __future__ import annotations

import pytest


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def test_home_runs_and_epsilon_changes_the_noise(app_page):
    at = app_page("app.py").run()
    assert not at.exception
    assert metrics(at)["Noise scale (people)"] == "1"  # the count's unit: a number of people
    assert metrics(at)["Largest ratio $p_D / p_{D'}$"] == "2.72"
    assert not [w for w in at.select_slider if w.key == "home.delta"]  # δ means nothing for Laplace
    assert any("Laplace is pure ε-DP" in c.value for c in at.caption)
    at.slider(key="home.eps").set_value(0.5).run()
    assert not at.exception
    assert metrics(at)["Noise scale (people)"] == "2"
    assert metrics(at)["$e^{\\varepsilon}$ (allowed ratio)"] == "1.65"


def test_home_shows_the_noise_the_ratio_bound_and_the_delta_rounded_the_side_that_fails_closed(app_page):
    # ε = 0.3: the Laplace scale 1/0.3 = 3.3333 read "3.33", less noise than ε = 0.3 needs; ε = 1.5: the allowed ratio
    # e^1.5 = 4.4817 read "4.48", a bound below the one that holds; the Gaussian's δ spent read to the nearest figure
    import math

    from dpcore.teaching.explain import count_query_densities

    at = app_page("app.py").run()
    at.slider(key="home.eps").set_value(0.3).run()
    assert not at.exception
    assert metrics(at)["Noise scale (people)"] == "3.34"
    at.slider(key="home.eps").set_value(1.5).run()
    assert metrics(at)["$e^{\\varepsilon}$ (allowed ratio)"] == "4.49" and math.exp(1.5) > 4.48
    assert float(metrics(at)["Largest ratio $p_D / p_{D'}$"]) <= 4.49
    at.radio(key="home.mech").set_value("gaussian").run()
    _, summary = count_query_densities(mechanism="gaussian", epsilon=1.5, delta=1e-5, count_d=3.0, count_d2=2.0)
    assert float(metrics(at)["δ actually used"]) >= summary["delta_actual"]
    assert float(metrics(at)["Noise scale (people)"]) >= summary["noise_scale"]


def test_the_home_pages_chart_descriptions_round_the_noise_and_the_ratio_bound_up_as_its_tiles_do(app_page):
    # the tiles read 3.34 and 4.49 (rounded the side that fails closed), the screen reader's text of the two charts
    # still said "noise scale 3.33" (1 / 0.3 = 3.3333) and "e^ε = 4.48" (e^1.5 = 4.4817), figures below the truth
    at = app_page("app.py").run()
    at.slider(key="home.eps").set_value(0.3).run()
    alts = [c.proto.alt for c in at.get("vega_lite_chart")]
    assert any("noise scale 3.34." in a for a in alts) and not any("3.33" in a for a in alts)
    at.slider(key="home.eps").set_value(1.5).run()
    alts = [c.proto.alt for c in at.get("vega_lite_chart")]
    assert any("e^ε = 4.49." in a for a in alts) and not any("4.48" in a for a in alts)


def test_home_draws_its_charts_with_vega_lite_only_so_a_browser_never_fetches_the_plotly_bundle(app_page):
    at = app_page("app.py").run()
    at.radio(key="home.mech").set_value("gaussian").run()
    assert not at.exception
    charts = at.get("vega_lite_chart")
    assert len(charts) == 5 and not at.get("plotly_chart")  # densities, ratio, answers, ε spent, posterior
    assert all(c.proto.alt for c in charts)  # each with a text alternative for screen readers


def test_every_light_charts_y_labels_sit_beside_their_own_values_not_flushed_inward(app_page):
    # Streamlit's theme flushes an axis's end labels inward (labelFlush): the top y label sat under its grid line, so
    # the Train page's dotted budget line at ε = 2 and its last epoch's point read above the label "2.0"; the same
    # config draws every Vega-Lite chart of the home page and of the Train page (dpcore.ui.vega.show)
    import json

    at = app_page("app.py").run()
    charts = at.get("vega_lite_chart")
    assert charts
    for chart in charts:
        assert json.loads(chart.proto.spec)["config"]["axisY"]["labelFlush"] is False


def test_home_gaussian_shows_delta_spent(app_page):
    at = app_page("app.py").run()
    at.radio(key="home.mech").set_value("gaussian").run()
    assert not at.exception
    assert at.select_slider(key="home.delta").value == 1e-5
    d = float(metrics(at)["δ actually used"])
    assert 0.9e-5 < d <= 1.0001e-5


def test_home_belief_bound_says_the_gaussian_can_leave_it_where_delta_is_spent(app_page):
    # "at most e^ε times more likely on D than on D′, whatever answer is published" holds for Laplace only: the
    # Gaussian's ratio leaves the band in its tails (section 2 of the same page), which δ accounts for
    def belief_words(at) -> str:
        return next(m.value for m in at.markdown if "Whatever noisy answer is published" in m.value)

    at = app_page("app.py").run()
    assert "δ is spent" not in belief_words(at)
    at.radio(key="home.mech").set_value("gaussian").run()
    assert not at.exception
    assert "except on the rare answers in its tails" in belief_words(at)


def test_home_shows_the_floating_point_attack_breaking_textbook_noise_and_not_secure_noise(app_page):
    at = app_page("app.py").run()
    assert at.button(key="home.float_attack")
    at.session_state["home.float_attack_ran"] = True  # what the button sets (AppTest's router drops the click)
    at.run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "ε proven (95%)" in d.value.columns)
    textbook, secure = table.to_dict("records")
    assert textbook["ε proven (95%)"] > 3 * textbook["ε claimed"]
    assert secure["ε proven (95%)"] == 0.0
    assert textbook["Wrongly certain (from D′)"] == 0 == secure["Wrongly certain (from D′)"]
    assert any("never happens on D′" in m.value for m in at.markdown)
    assert not [m for m in at.markdown if "dpcore." in m.value]  # a class reads no module path


def test_the_floating_point_attack_table_fits_beside_the_sidebar_at_1280_pixels():
    # its names ("Textbook floating-point Laplace (seeded numpy)") pushed "ε proven (95%)", the column the text
    # under it reads from, behind a sideways scroll at 1280×720: the main column beside the sidebar is 820 px
    from dpcore.ui.common import column_width
    from dpcore.ui.explain import cached_float_attack, float_attack_table

    table = float_attack_table(cached_float_attack(1.0, 3.0, 2.0, releases=1000))
    assert sum(column_width([c, *map(str, table[c])]) for c in table.columns) <= 800


def test_accountant_page_shows_the_moments_accountant_far_below_the_theorems(app_page):
    at = app_page("pages/1_Accountant.py").run()
    assert not at.exception
    m = metrics(at)
    rdp = float(m["RDP"].split("=")[1])
    adv = float(m["Advanced"].split("=")[1])
    assert 1.5 < rdp < 3 and adv > 10 * rdp
    table = at.dataframe[0].value
    assert list(table.columns)[:1] == ["Epochs"] and len(table) == 41
    assert all(len(v.replace(".", "").replace("-", "").split("e")[0].lstrip("0")) <= 3 for v in table.iloc[-1, 1:])
    assert any("sidebar's δ" in c.value for c in at.caption)  # the inverse section says what it reuses
    assert not any("almost no formal protection" in w.value for w in at.warning)
    assert float(m["Noise multiplier needed σ"]) > 0
    assert float(m["ε check with that σ"]) <= 1.0


def test_the_accountants_calibrated_sigma_is_shown_rounded_up_so_setting_it_spends_no_more_than_the_target(app_page):
    # default inputs (q 0.01, 10 epochs = 1,000 steps, δ 1e-5, target 1, RDP): the noise needed is 1.51312...; shown to
    # the nearest figure it read "1.513", and σ = 1.513 spends ε = 1.00012, above the target the page said it meets
    from dpcore.accounting import dpsgd_epsilon

    at = app_page("pages/1_Accountant.py").run()
    assert not at.exception
    shown = float(metrics(at)["Noise multiplier needed σ"].replace(",", ""))
    assert dpsgd_epsilon(noise_multiplier=shown, sample_rate=0.01, steps=1000, delta=1e-5) <= 1.0
    assert shown == 1.514


def test_the_accountant_pages_pld_number_is_the_epsilon_commands(app_page):
    from dpcore.accounting import dpsgd_epsilon
    from dpcore.teaching.verdict import epsilon_text

    at = app_page("pages/1_Accountant.py").run()  # n 60,000, L 600, σ 4, 400 epochs
    cli = dpsgd_epsilon(noise_multiplier=4.0, sample_rate=0.01, steps=40_000, delta=1e-5, accountant="pld")
    # 2.0334 rounded up, as every ε spent is shown; the curve's coarser grid gives 2.07 (2.06 to nearest)
    assert metrics(at)["PLD"] == f"ε = {epsilon_text(cli)}" == "ε = 2.04"
    assert any("coarser grid (1e-3)" in c.value and "2.07" in c.value for c in at.caption)


def test_accountant_reacts_to_sigma_and_rejects_bad_batch(app_page):
    at = app_page("pages/1_Accountant.py")
    at.run()
    before = float(metrics(at)["RDP"].split("=")[1])
    at.number_input(key="acct.sigma").set_value(2.0).run()
    assert float(metrics(at)["RDP"].split("=")[1]) > before
    at.number_input(key="acct.batch").set_value(100_000).run()
    assert not at.exception
    assert any("larger than n" in e.value for e in at.error)


def test_accountant_small_sigma_advanced_is_never_above_naive_and_warns(app_page):
    at = app_page("pages/1_Accountant.py")
    at.run()
    at.number_input(key="acct.sigma").set_value(0.5).run()
    assert not at.exception
    m = metrics(at)
    naive, adv = (float(m[k].split("=")[1].replace(",", "")) for k in ("Naive", "Advanced"))
    assert adv <= naive  # min(naive, advanced): both valid at the same delta
    assert any("guarantee" in w.value and "almost no formal protection" in w.value for w in at.warning)


def test_accountant_writes_a_large_epsilon_with_thousands_separators_not_e_notation(app_page):
    # σ = 0.5 over 400 epochs: naive composition was "ε = 9.83e+03" on a metric, which a student reads as 9.83
    at = app_page("pages/1_Accountant.py")
    at.run()
    at.number_input(key="acct.sigma").set_value(0.5).run()
    assert not at.exception
    shown = [m.value for m in at.metric] + [w.value for w in at.warning] + [c.value for c in at.caption]
    shown += [m.value for m in at.markdown] + list(at.dataframe[0].value.iloc[-1, 1:])
    assert not [t for t in shown if "e+0" in t]
    naive = metrics(at)["Naive"]
    assert "," in naive and float(naive.split("=")[1].replace(",", "")) > 1000
    # the inverse at a tiny target over many epochs: the noise it needs was "2.807e+04"
    at.number_input(key="acct.target").set_value(0.01)
    at.number_input(key="acct.plan_epochs").set_value(10_000.0).run()
    sigma = metrics(at)["Noise multiplier needed σ"]
    assert "e+" not in sigma and float(sigma.replace(",", "")) > 1000


def test_best_of_compositions_against_the_theorems():
    from dpcore.accounting.composition import dpsgd_composition_bound
    from dpcore.ui.accounting import ADVANCED_LABEL, cached_comparison, weak_guarantee_note

    df = cached_comparison(0.5, 0.01, 1e-5, 100.0, 3, ("advanced",))
    assert set(df.method) == {ADVANCED_LABEL}
    for ep, eps in zip(df.epochs, df.epsilon):
        steps = int(round(ep / 0.01))
        ref = [dpsgd_composition_bound(noise_multiplier=0.5, sample_rate=0.01, steps=steps, delta=1e-5, method=k)
               for k in ("naive", "advanced")]
        assert eps == pytest.approx(min(ref))
    assert weak_guarantee_note(9.9) is None and weak_guarantee_note(10.0) is not None  # e^10 > 22 000: weak
    assert weak_guarantee_note(9.9999) is not None  # what a run calibrated to a target of 10 spends
    assert "up to 36,316×" in weak_guarantee_note(10.5)  # the verdict line's way of writing e^ε
    # the note opens with the verdict's own band: weak up to 10, nominal beyond, as the line beside ε says
    assert weak_guarantee_note(10.0).startswith("Weak guarantee: ε = 10")
    assert weak_guarantee_note(10.5).startswith("Nominal guarantee only: ε = 10.5")
    # the protected unit is named for the page's guarantee, not "one record, one client" on every page
    assert "odds about a record grow" in weak_guarantee_note(12, unit="per training record")
    assert "odds about a client's data grow" in weak_guarantee_note(12, unit="per client")


def test_the_inverse_with_the_pld_accountant_asks_less_noise_than_rdp_at_a_small_target(app_page):
    # target 0.1 over 100 epochs: the inverse asked for σ 75 with PLD against 34 with RDP (its ε check 0.039)
    at = app_page("pages/1_Accountant.py").run()
    at.number_input(key="acct.target").set_value(0.1)
    at.number_input(key="acct.plan_epochs").set_value(100.0).run()
    rdp = float(metrics(at)["Noise multiplier needed σ"])
    at.radio(key="acct.acct").set_value("pld").run()
    assert not at.exception
    m = metrics(at)
    assert float(m["Noise multiplier needed σ"]) < rdp and 0.099 <= float(m["ε check with that σ"]) <= 0.1


def test_every_visitor_shown_a_pld_number_the_rdp_accountant_gave_is_told_why(app_page):
    """σ = 0.5, every record in every step, 400 epochs: the PLD grid would not fit, the RDP accountant answers. The
    numbers are cached for the whole server; the second visitor, served from that cache, is told as the first was."""
    for _ in range(2):
        at = app_page("pages/1_Accountant.py")
        at.run()
        at.number_input(key="acct.sigma").set_value(0.5)
        at.number_input(key="acct.batch").set_value(60_000).run()
        assert not at.exception
        assert any("from the RDP accountant instead" in w.value for w in at.warning)


def test_a_budget_below_one_asks_epsilon_says_no_answer_was_released_rather_than_that_the_mean_closes_in(app_page):
    at = app_page("app.py").run()
    at.number_input(key="home.budget").set_value(0.5).run()  # ε = 1 per ask: every ask refused
    assert not at.exception
    said = " ".join(m.value for m in at.markdown)
    assert "**No answer released:** the first alone would spend more than the budget of 0.5, so all 50 asks were " \
           "refused." in said
    assert "closes in on the exact count" not in said


def test_the_accountants_table_shows_every_column_whole_on_a_projector(app_page):
    # at 1280x720 with the sidebar open the main column is 820 px wide; the table headed each column by the method's
    # full name, needed about 930 px and cut its last header to "Privacy loss distribution (PLD"
    from dpcore.ui.common import column_width

    at = app_page("pages/1_Accountant.py").run()
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table.columns) == ["Epochs", *(m.label for m in at.metric[:4])]  # the metrics' names above it
    assert sum(column_width([str(c), *map(str, table[c])]) for c in table.columns) <= 820


def test_the_averaging_text_does_not_claim_the_mean_closed_in_beside_a_mean_far_from_the_count(app_page):
    # at ε 0.05 with a budget of 0.1 two answers were released and the page read "the mean of many answers closes in
    # on the exact count (-11.84 after 2 answers, against 3)"
    at = app_page("app.py").run()
    said = [m.value for m in at.markdown if "after 25 answers, against 3" in m.value]
    assert said and "closes in on the exact count" in said[0]  # the default: 25 answers at ε 1, close to 3
    at.slider(key="home.eps").set_value(0.05).run()
    at.number_input(key="home.budget").set_value(0.1).run()
    assert not at.exception
    said = [m.value for m in at.markdown if "against 3" in m.value]
    assert said and "too few to close in" in said[0] and "after 2 answers" in said[0]
    assert "the mean of many answers closes in" not in said[0]


def test_the_noise_multiplier_help_states_the_epsilons_the_accountant_computes(app_page):
    # the help said "Below ~0.7 the guarantee is vacuous at these step counts (ε in the hundreds)": at the page's
    # defaults (q = 600/60,000, 400 epochs, δ = 1e-5) σ = 0.7 costs ε ≈ 37 by RDP, in the hundreds only near 0.5
    from dpcore.accounting import dpsgd_epsilon

    at = app_page("pages/1_Accountant.py").run()
    assert not at.exception
    text = at.number_input(key="acct.sigma").help
    at_07 = dpsgd_epsilon(noise_multiplier=0.7, sample_rate=0.01, steps=40_000, delta=1e-5)
    at_05 = dpsgd_epsilon(noise_multiplier=0.5, sample_rate=0.01, steps=40_000, delta=1e-5)
    assert "in the hundreds" not in text and "400 epochs" in text
    assert at_07 > 30 and at_05 > 100 and "ε above 30, above 100 at 0.5" in text
