"""Every page that shows an ε says how to judge it: a verdict band in body text beside it."""
from __future__ import annotations

import pytest

from dpcore.teaching.verdict import BANDS, NOT_PRIVATE
from dpcore.ui.navigation import PAGES

from .conftest import page

HEADLINES = tuple(b.headline for b in BANDS) + (NOT_PRIVATE.headline,)


def verdicts(at) -> list[str]:
    """Every markdown block of the page (sidebar included) that carries a verdict band."""
    return [m.value for m in at.markdown if any(f"**{h}**" in m.value or h in m.value for h in HEADLINES)]


@pytest.mark.parametrize("path", ["app.py", *(p.path for p in PAGES[1:])])  # the home page needs the router
def test_every_page_judges_the_epsilon_it_shows(path):
    at = page(path).run()
    assert not at.exception
    found = verdicts(at)
    assert found, f"{path} shows an ε without a verdict band"
    # a sentence names its ε; a bare band sits right under the metric that shows the ε
    shorts = {f"{b.icon} {b.headline}" for b in (*BANDS, NOT_PRIVATE)}
    assert all("ε" in v or v in shorts for v in found), [v for v in found if "ε" not in v]


def test_accountant_judges_each_method_and_names_the_tightest():
    at = page("pages/1_Accountant.py").run()
    found = verdicts(at)
    # one band under each method's ε, a sentence for the tightest accounting, one for the target of the inverse
    assert sum(v.startswith(tuple(b.icon for b in BANDS)) for v in found) >= 4
    assert any(v.startswith("The tightest accounting") for v in found)
    assert any("published deployment" in v for v in found)
    # an (ε, δ) bound: its odds sentence names the page's δ (the sidebar's, 1e-5) as an additive slack
    assert any(v.startswith("The tightest accounting") and "up to an additive δ = 1e-05" in v for v in found)


def test_the_band_follows_the_epsilon_box():
    at = page("pages/3_Clustering.py").run()
    at.number_input(key="cluster.epsilon").set_value(8.0).run()
    assert any("Weak guarantee" in v for v in verdicts(at))
    at.number_input(key="cluster.epsilon").set_value(0.1).run()
    assert any("Strong privacy" in v for v in verdicts(at)) and not any("Weak guarantee" in v for v in verdicts(at))


def test_clustering_states_random_centres_and_says_dplloyd_at_the_smallest_epsilon_is_no_better():
    at = page("pages/3_Clustering.py").run()
    said = [m.value for m in at.markdown if "Random centres (no data used)" in m.value]
    # iris, seeds 0 to 2: well above the 1/3 of one cluster for every row (seed 0 alone: 0.633 ± 0.105)
    assert said and "0.630 ± 0.116" in said[0] and "averaged over 3 seeds" in said[0]
    at.number_input(key="cluster.epsilon").set_value(0.001).run()
    assert not at.exception
    said = [m.value for m in at.markdown if "Random centres (no data used)" in m.value]
    assert "DPLloyd (0.565)" in said[0] and "**no better than random centres**" in said[0]


def test_trained_network_states_the_band_of_the_epsilon_spent_and_the_chance_level():
    at = page("pages/2_Train_a_network.py").run()
    at.button(key="train.run").click().run()
    assert not at.exception
    assert any(v.startswith("ε spent") or "spent" in v.split(":")[0] for v in verdicts(at))
    assert any("Chance level" in m.value for m in at.markdown)


def test_the_glossary_sits_at_the_foot_of_every_page_with_deployments_and_terms():
    at = page("app.py").run()
    glossary = next(e for e in at.sidebar.expander if e.label.startswith("Glossary"))
    text = " ".join(m.value for m in glossary.markdown)
    assert "17.14" in text and "US Census Bureau" in text and "**DP-SGD**" in text and "**GNMax**" in text



def test_an_epsilon_or_delta_out_of_range_is_said_under_its_box_and_not_used():
    # the browser used to refuse such a value with a red outline only, while the page went on with the old one
    from tests.pages.conftest import page

    at = page("pages/2_Train_a_network.py").run()
    at.number_input(key="train.epsilon").set_value(0.0).run()
    assert not at.exception
    assert any(e.value == "ε must be from 0.001 to 100; 0 is not. The page uses 1 until it is." for e in at.error)
    # and a toast, seen wherever the box has scrolled to, once per refused value
    assert [t.value for t in at.toast] == ["ε must be from 0.001 to 100; 0 is not. The page uses 1 until it is."]
    at.run()
    assert not at.toast
    at.number_input(key="train.epsilon").set_value(2.0)
    at.number_input(key="train.delta").set_value(1.0).run()
    assert [e.value for e in at.error] == ["δ must be from 0 to 0.01; 1 is not. The page uses 1e-05 until it is."]


@pytest.mark.parametrize("path, key", [("pages/9_Attack_the_model.py", "audit.eps"), ("pages/7_PATE.py", "pate.eps")])
def test_a_verdict_inside_a_form_names_the_epsilon_it_judges_until_the_form_is_submitted(path, key):
    at = page(path).run()
    assert any(v.startswith("At the ε last applied, 5") or v.startswith("At the ε last applied, 1")
               for v in verdicts(at))
    at.number_input(key=key).set_value(8.0).run()  # typed, not submitted: a form reports nothing yet
    applied = [v for v in verdicts(at) if v.startswith("At the ε last applied")]
    assert applied and not any("At the ε last applied, 8" in v for v in applied)


def _sidebar_verdicts(at) -> list[str]:
    return [m.value for m in at.sidebar.markdown if any(f"**{h}**" in m.value for h in HEADLINES)]


def test_the_sidebar_verdict_of_an_epsilon_delta_guarantee_names_the_pages_delta():
    # DP-SGD's guarantee is (ε, δ): its odds bound carries an additive δ (Dwork & Roth 2014, Definition 2.4), which
    # the run's verdict said and the sidebar's, under the ε box, did not
    at = page("pages/2_Train_a_network.py").run()
    assert not at.exception
    said = _sidebar_verdicts(at)
    assert said and all("up to an additive δ = 1e-05" in v for v in said), said
    at.number_input(key="train.delta").set_value(1e-6).run()  # the δ box sits under ε: its new value is named
    assert all("δ = 1e-06" in v for v in _sidebar_verdicts(at)), _sidebar_verdicts(at)
    attack = page("pages/9_Attack_the_model.py").run()  # a box in a form: "At the ε last applied", with its δ
    assert not attack.exception
    said = _sidebar_verdicts(attack)
    assert said and all(v.startswith("At the ε last applied") and "δ = 1e-05" in v for v in said), said


def test_the_sidebar_verdict_of_a_pure_epsilon_guarantee_names_no_delta():
    at = page("pages/3_Clustering.py").run()
    said = _sidebar_verdicts(at)
    assert said and not any("δ" in v for v in said), said


def test_the_home_pages_sidebar_verdict_names_delta_for_the_gaussian_and_none_for_laplace():
    # the Gaussian mechanism is (ε, δ)-DP: its outputs past e^ε have probability above δ (section 2's tails), so the
    # pure-ε odds bound and the posterior e^ε / (1 + e^ε) the sidebar stated for it do not hold (Dwork & Roth 2014,
    # Definition 2.4; Kairouz, Oh & Viswanath 2015)
    at = page("pages/0_What_epsilon_means.py").run()
    assert not at.exception
    assert all("δ" not in v and "a 50 % guess can reach 73.2 %" in v for v in _sidebar_verdicts(at))
    at.radio(key="home.mech").set_value("gaussian").run()
    said = _sidebar_verdicts(at)
    assert said and all("up to an additive δ = 1e-05" in v and "right at most 73.2 %" in v for v in said), said
    at.select_slider(key="home.delta").set_value(1e-3).run()
    assert all("δ = 1e-03" in v for v in _sidebar_verdicts(at)), _sidebar_verdicts(at)
