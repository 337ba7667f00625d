"""AppTest: the home page and the Accountant page run and react to their controls."""
from __future__ import annotations

import pytest



def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def test_home_runs_and_epsilon_changes_the_noise(app_page):
    at = app_page("app.py").run()
    assert not at.exception
    assert metrics(at)["Noise scale"] == "1"
    assert metrics(at)["Largest ratio p_D / p_D′"] == "2.72"
    at.slider(key="home.eps").set_value(0.5).run()
    assert not at.exception
    assert metrics(at)["Noise scale"] == "2"
    assert metrics(at)["e^ε (allowed ratio)"] == "1.65"


def test_home_gaussian_shows_delta_spent(app_page):
    at = app_page("app.py").run()
    at.radio(key="home.mech").set_value("gaussian").run()
    assert not at.exception
    d = float(metrics(at)["δ actually used"])
    assert 0.9e-5 < d <= 1.0001e-5


def test_accountant_page_shows_seed_004_gap(app_page):
    at = app_page("views/1_Accountant.py").run()
    assert not at.exception
    m = metrics(at)
    rdp = float(m["RDP"].split("=")[1])
    adv = float(m["Advanced"].split("=")[1])
    assert 1.5 < rdp < 3 and adv > 10 * rdp
    table = at.dataframe[0].value
    assert list(table.columns)[:1] == ["epochs"] and len(table) == 41
    assert float(m["Noise multiplier needed σ"]) > 0
    assert float(m["ε check with that σ"]) <= 1.0


def test_accountant_reacts_to_sigma_and_rejects_bad_batch(app_page):
    at = app_page("views/1_Accountant.py")
    at.run()
    before = float(metrics(at)["RDP"].split("=")[1])
    at.number_input(key="acct.sigma").set_value(2.0).run()
    assert float(metrics(at)["RDP"].split("=")[1]) > before
    at.number_input(key="acct.batch").set_value(100_000).run()
    assert not at.exception
    assert any("larger than n" in e.value for e in at.error)
