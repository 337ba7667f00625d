"""The Federated page trains a small federation, shows its metrics and per-round table, and reacts to σ."""
from __future__ import annotations

import math
import pathlib
import re

from streamlit.testing.v1 import AppTest

from tests.pages.conftest import check_epsilon_button

PAGE = str(pathlib.Path(__file__).resolve().parents[2] / "pages/8_Federated_learning.py")


def _metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def _train(at):
    next(b for b in at.button if b.label == "Train").click()
    return at.run()


def _choose(at, dataset):
    """Switch the dataset (one quick round): each dataset keeps its own boxes, drawn once it is chosen."""
    at.selectbox(key="fed.dataset").set_value(dataset)
    at.number_input(key="fed.rounds").set_value(1)
    return _train(at)


def _opened_on_digits(timeout=120):
    """The page opened on digits with one round (as a link would), so the first run is not the default MNIST one."""
    at = AppTest.from_file(PAGE, default_timeout=timeout)
    at.session_state["fed.dataset"], at.session_state["fed.rounds"] = "digits", 1
    return at.run()


def _small(at, by="noise multiplier"):
    if not at.radio(key="fed.by").disabled:
        at.radio(key="fed.by").set_value(by)
    if at.selectbox(key="fed.dataset").value != "digits":
        _choose(at, "digits")
    at.number_input(key="fed.clients.digits").set_value(8)
    at.number_input(key="fed.rounds").set_value(5)
    return _train(at)


def test_federated_page_runs_and_reacts():
    at = _opened_on_digits()
    assert not at.exception and not at.error
    _small(at)
    assert not at.exception and not at.error
    hist = at.dataframe[0].value
    assert list(hist["Round"]) == [1, 2, 3, 4, 5] and "epoch" not in hist and "Epoch" not in hist
    assert "Share of updates clipped" not in hist and "Largest update norm sent" not in hist  # in the expander
    # how many clients joined a round is not covered by the epsilon beside it (sampling amplifies only while who
    # joined stays secret): it is in the expander of what epsilon does not cover, not in the epsilon's table
    assert "Clients this round" not in hist
    # each client's exact class counts (the simulation's deal) are exact counts of the data: said beside them
    deal = next(e for e in at.expander if e.label.startswith("Who holds what"))
    assert any("NOT covered by ε" in c.value for c in deal.caption)
    # 8 clients at q = 0.2: the noise swamps every step, and a caption says so with the numbers that ran
    private, reference = float(_metric(at, "Final test accuracy")), float(_metric(at, "Non-private FedAvg"))
    assert reference - private >= 0.05
    gap = next(c.value for c in at.caption if c.value.startswith("Why the gap"))
    qn = float(_metric(at, "Clients per round qN"))
    sigma = float(_metric(at, "Noise multiplier σ"))
    norm = sigma * 1.0 * math.sqrt(65 * 10) / qn  # digits: 64 features + bias, 10 classes; S = 1
    assert math.isclose(float(re.search(r"norm about ([0-9]+\.?[0-9]*)", gap).group(1)), norm, rel_tol=0.01)
    assert f"{private:.3f} vs {reference:.3f}" in gap
    eps1 = float(_metric(at, "ε (user level)"))
    last = hist["ε so far (user level)"].iloc[-1]
    assert eps1 == float(last) or abs(eps1 - last) / eps1 < 1e-2
    at.number_input(key="fed.sigma").set_value(4.0)
    _train(at)
    assert not at.exception
    assert float(_metric(at, "ε (user level)")) < eps1  # more noise, less privacy spent
    assert _metric(at, "Noise multiplier σ") == "4"


def test_federated_page_non_private_and_bad_input():
    at = _opened_on_digits()
    at.radio(key="fed.mode").set_value("none")
    _small(at)
    assert not at.exception
    assert _metric(at, "ε (user level)") == "∞"
    _choose(at, "iris")
    at.number_input(key="fed.clients.iris").set_value(1000)  # more clients than iris's 112 training rows
    _train(at)
    assert not at.exception
    assert any("clients=1000" in e.value for e in at.error)


def test_federated_page_clip_sweep(monkeypatch, tmp_path):
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))  # keep the sweep cache out of the project
    at = _opened_on_digits(timeout=180)
    _small(at)
    at.button(key="fed.sweep.clip_norm").click().run()
    assert not at.exception and not at.error
    table = at.dataframe[-1].value
    swept = table[table["Kind"] == "private (swept)"]
    assert sorted(float(v) for v in swept["Clip norm"]) == [0.03, 0.1, 0.3, 1.0, 3.0, 10.0]
    assert len(set(table["Model"])) >= 3 and not any("-" in m and " " not in m for m in table["Model"])


def test_federated_defaults_to_target_epsilon_and_warns():
    at = _opened_on_digits()
    assert at.radio(key="fed.by").value == "target ε"
    at.number_input(key="fed.clients.digits").set_value(4)
    at.number_input(key="fed.rounds").set_value(3)
    at.number_input(key="fed.eps").set_value(20.0)
    _train(at)
    assert not at.exception and not at.error
    assert float(_metric(at, "ε (user level)")) <= 20.0 + 1e-6
    texts = [w.value for w in at.warning]
    assert any(t.startswith("Nominal guarantee only: ε = 20") for t in texts) and any("Few clients" in t for t in texts)
    assert any("Chance level" in m.value for m in at.markdown)


def test_a_tiny_target_epsilon_explains_its_zero_and_the_clip_sweep_without_an_error():
    # ε = 0.001 needs σ far above what a sweep accepts, and the accountant then reports exactly 0
    at = _opened_on_digits()
    at.number_input(key="fed.eps").set_value(0.001)
    at = _train(at)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert _metric(at, "ε (user level)") == "0"
    assert any("(0, δ) guarantee, not perfect privacy" in m.value for m in at.markdown)
    # the model is at chance, and a warning says so with what to change (as PATE's and the Attack page's do)
    assert any("better than always answering the most common class" in w.value and "Raise ε" in w.value
               for w in at.warning)
    assert any("clip-norm sweep keeps this run's σ" in i.value for i in at.info)


def test_the_non_private_reference_says_it_trains_for_the_private_runs_rounds(app_page):
    # its accuracy moved with ε (0.858 at ε 0.001, 0.894 at ε 4: 20 rounds against 100) with nothing saying why
    at = app_page("pages/8_Federated_learning.py").run()
    assert not at.exception
    help_text = next(m.proto.help for m in at.metric if m.label == "Non-private FedAvg")
    assert "same 100 rounds" in help_text and "moves with ε" in help_text


def test_the_sigma_tile_says_who_adds_the_noise_and_how_sigma_was_chosen():
    at = _opened_on_digits()
    assert not at.exception, at.exception
    tile = next(m for m in at.metric if m.label == "Noise multiplier σ")
    assert tile.help.startswith("The server adds Gaussian noise of std σ·S to the sum of the clipped updates")
    assert tile.help.endswith("calibrated so the rounds cost the target ε.")


def test_a_target_epsilon_has_a_button_beside_it_that_applies_it():
    # the form's own button was two screens below ε at 1280×720: a teacher who changed ε saw nothing happen until
    # scrolling to "Train"
    def open_page(present):
        at = AppTest.from_file(PAGE, default_timeout=180)
        at.session_state["fed.dataset"], at.session_state["fed.rounds"] = "digits", 2
        return at

    check_epsilon_button(open_page, prefix="fed", metric="ε (user level)", mode=("fed.by", "noise multiplier"))


def test_the_verdict_under_the_target_epsilon_names_the_epsilon_last_applied():
    # the box sits in a form: a typed ε reaches the page only when applied, so the verdict under a box reading 8 was
    # still "Moderate privacy (1 < ε ≤ 4)", for the 4 of the last run, without saying so (PATE's says it)
    at = _opened_on_digits()
    assert not at.exception, at.exception
    slot = next(iter(at.get("form")[0].children.values()))
    said = [c.value for c in slot.children.values() if c.type == "markdown"]
    assert said and said[0].startswith("At the ε last applied, 4: "), said
