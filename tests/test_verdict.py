"""The ε verdict bands, the published deployments they are compared with, and the glossary behind every page."""
from __future__ import annotations

import ast
import math
import pathlib
import re

import pytest

from dpcore.exceptions import DPValueError
from dpcore.teaching.glossary import GLOSSARY, define
from dpcore.teaching.verdict import BANDS, DEPLOYMENTS, belief_text, comparison, neighbours, verdict

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("epsilon,band", [(0.1, "strong"), (1, "strong"), (8, "weak"), (983, "nominal")])
def test_the_band_of_the_four_reference_epsilons(epsilon, band):
    assert verdict(epsilon).name == band


@pytest.mark.parametrize("epsilon,band", [(1.0000001, "moderate"), (4, "moderate"), (4.01, "weak"), (10, "weak"),
                                          (10.5, "nominal"), (0, "strong"), (math.inf, "not private")])
def test_band_edges_belong_to_the_lower_band(epsilon, band):
    assert verdict(epsilon).name == band


@pytest.mark.parametrize("bad", [-0.1, float("nan"), "abc", None])
def test_a_negative_or_non_numeric_epsilon_is_refused_with_its_name(bad):
    with pytest.raises(DPValueError, match="epsilon"):
        verdict(bad)


@pytest.mark.parametrize("epsilon,belief", [(0.1, "52.5 %"), (1.0, "73.2 %"), (3.0, "95.3 %"), (8.0, "99.97 %")])
def test_the_sentence_states_the_odds_bound_and_the_belief_reachable_from_even_odds(epsilon, belief):
    v = verdict(epsilon)
    # e^ε bounds the likelihood ratio of any output (Dwork et al. 2006); from prior 1/2 the posterior is at most
    # e^ε / (1 + e^ε), computed here from Bayes' rule on the odds
    assert v.odds_factor == pytest.approx(math.exp(epsilon))
    prior_odds = 1.0
    assert v.max_belief == pytest.approx(prior_odds * math.exp(epsilon) / (1 + prior_odds * math.exp(epsilon)))
    text = v.sentence()
    assert v.band.headline in text and f"reach {belief}" in text


def test_the_belief_bound_agrees_with_the_home_page_posterior_curve():
    from dpcore.teaching.explain import posterior_bound

    for epsilon in (0.5, 2.0):
        low, high = posterior_bound([0.5], epsilon=epsilon)
        assert verdict(epsilon).max_belief == pytest.approx(float(high[0]))
        assert 1 - verdict(epsilon).max_belief == pytest.approx(float(low[0]))


def test_huge_epsilon_is_written_as_a_power_of_ten_not_an_overflow():
    text = verdict(983).sentence()
    assert "10⁴²⁷×" in text and "inf" not in text.lower()


def test_bands_are_ordered_and_cover_every_finite_epsilon():
    uppers = [b.upper for b in BANDS]
    assert uppers == sorted(uppers) and uppers[-1] == math.inf
    assert len({b.icon for b in BANDS}) == len(BANDS)  # the icon repeats the words, it never replaces them


def test_deployments_are_sorted_sourced_and_state_their_unit():
    eps = [d.epsilon for d in DEPLOYMENTS]
    assert eps == sorted(eps)
    for d in DEPLOYMENTS:
        assert d.source and d.unit and d.short and d.epsilon > 0
    assert {"US Census Bureau", "Apple", "Google"} <= {d.who for d in DEPLOYMENTS}


def test_comparison_names_the_nearest_deployments_on_each_side():
    below, above = neighbours(3.0)
    assert below[0].epsilon <= 3.0 < above[0].epsilon
    assert all(not (below[0].epsilon < d.epsilon <= 3.0) for d in DEPLOYMENTS)
    text = comparison(3.0)
    assert below[0].short in text and above[0].short in text
    # each deployment's own ε stands beside its name, so "... data 2.47" never reads as the run's number; in words,
    # not as "X (ε 2.47) ≤ ε = 3 < Y (ε 4)", which a class read as one chain of numbers
    assert (f"ε = 3 lies between two published deployments, {below[0].short} (ε {below[0].epsilon:g}) and "
            f"{above[0].short} (ε {above[0].epsilon:g})") in text
    assert "≤" not in text and "<" not in text
    assert "below every published deployment" in comparison(0.01)
    assert "above every published deployment" in comparison(500)

    assert "finite" in comparison(math.inf)


#: the abbreviations a newcomer meets on first screens (the menu and the page introductions)
FIRST_SCREEN_ABBREVIATIONS = ("DP-SGD", "RDP", "PLD", "DPLloyd", "ERM", "RFF", "SSP", "GNMax", "DCT", "HOG", "PSNR",
                              "SSIM", "IID")
#: names, not jargon: data sets, organisations, file formats
NOT_JARGON = {"MNIST", "UCI", "CSV", "US", "LFW", "CIFAR", "OS", "ML", "I", "II", "III", "HDF", "KDD", "DP", "NOT"}


@pytest.mark.parametrize("term", FIRST_SCREEN_ABBREVIATIONS)
def test_every_abbreviation_of_the_first_screens_is_in_the_glossary(term):
    assert define(term)


def _first_screen_texts() -> list[str]:
    from dpcore.ui.navigation import PAGES

    texts = [p.blurb for p in PAGES]
    for path in sorted((ROOT / "pages").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "page_header":
                texts += [a.value for a in node.args if isinstance(a, ast.Constant)]  # title and introduction
    return texts


def test_no_abbreviation_on_a_first_screen_is_left_undefined():
    defined = {k.split(" (")[0] for k in GLOSSARY} | {part for k in GLOSSARY for part in re.split(r"[ /()]+", k)}
    texts = _first_screen_texts()
    assert len(texts) >= 30  # every page's menu blurb, title and introduction were read
    found = set()
    for text in texts:
        found |= set(re.findall(r"\b(?:[A-Z][A-Za-z]*[A-Z][A-Za-z-]*|[A-Z]{2,})\b", text))
    undefined = sorted(t for t in found if t not in defined and t not in NOT_JARGON)
    assert not undefined, f"define these in dpcore/teaching/glossary.py: {undefined}"


def test_an_epsilon_calibrated_just_under_a_deployment_is_placed_as_shown_not_below_itself():
    text = comparison(3.9999999)  # a calibrated target of 4
    assert "and Apple's emoji statistics (ε 4)" not in text  # never placed below itself
    assert "ε = 4 is the ε of a published deployment, Apple's emoji statistics; the next one above is" in text


def test_a_tiny_epsilon_says_the_odds_move_a_little_not_1x():
    assert "1.0011×" in verdict(0.001).sentence()  # e^0.001 = 1.0010005, rounded up: the bound is never undershot
    assert "1.00031×" in verdict(0.0003).sentence()


def test_a_tiny_epsilon_moves_a_fair_guess_by_a_visible_decimal_not_to_a_rounded_50_percent():
    from dpcore.teaching.verdict import verdict

    assert "a 50 % guess can reach 50.3 %" in verdict(0.01).sentence()  # 50.25 %, rounded up
    assert "a 50 % guess can reach 73.2 %" in verdict(1.0).sentence()


@pytest.mark.parametrize("epsilon", [1e-4, 0.003, 0.07, 0.5, 1.0, 2.3, 4.0, 6.9, 9.99, 12.0, 13.7, 14.0, 30.0])
def test_the_odds_factor_and_the_reachable_belief_are_never_shown_below_the_truth(epsilon):
    """Both are bounds ("change at most", "can reach"): read back from the sentence, each is at least the true
    value (e^ε and e^ε / (1 + e^ε)); the factor written as a power of ten at least e^ε too."""
    import re

    from dpcore.teaching.verdict import odds_factor

    shown = odds_factor(epsilon)
    if any(c in "⁰¹²³⁴⁵⁶⁷⁸⁹" for c in shown):  # 10 with a raised exponent
        exponent = int(shown[2:-1].translate(str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")))
        assert exponent * math.log(10) >= epsilon
    else:
        assert float(shown.rstrip("×").replace(",", "")) >= math.exp(epsilon)
    sentence = verdict(epsilon).sentence()
    belief = re.search(r"can reach ([0-9.]+) %", sentence)
    if belief:
        assert float(belief.group(1)) / 100 >= math.exp(epsilon) / (1 + math.exp(epsilon))


def test_comparison_writes_a_large_epsilon_with_thousands_separators():
    # "ε = 9.83e+03" under a naive-composition total read as about ten; rounded up: never below the ε computed
    assert "ε = 9,840 is above every published deployment" in comparison(9834.2)
    assert "ε = 984 is above" in comparison(983.2)


@pytest.mark.parametrize("epsilon", [1e-20, 1e-16, 1e-10, 1e-9, 0.0953101798043249, 23.025850929940457])
def test_the_odds_factor_of_an_epsilon_at_the_edge_of_double_precision_is_never_below_e_to_the_epsilon(epsilon):
    """e^ε in double precision is 1.0 exactly for ε = 1e-20 ("odds change at most 1.000...0×", no change at all), and
    1.0000000001 for ε = 1e-10 (rounded up, still below the true 1.000000000100000000005); ε = 10 ln 10 as a float
    is just above it, where the float quotient ε / ln 10 is exactly 10 ("10¹⁰×"). Checked in 50-digit decimals."""
    from decimal import Decimal, localcontext

    from dpcore.teaching.verdict import odds_factor

    shown = odds_factor(epsilon)
    with localcontext() as ctx:
        ctx.prec = 60
        true = Decimal(epsilon).exp()
        if any(c in "⁰¹²³⁴⁵⁶⁷⁸⁹" for c in shown):
            exponent = int(shown[2:-1].translate(str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")))
            assert Decimal(10) ** exponent >= true
        else:
            assert Decimal(shown.rstrip("×").replace(",", "")) >= true


@pytest.mark.parametrize("epsilon", [1e-20, 1e-16, 1e-12])
def test_the_belief_reachable_at_a_tiny_epsilon_is_never_written_as_the_50_percent_it_started_from(epsilon):
    """e^ε / (1 + e^ε) is 0.5 exactly in double precision below ε ~ 1e-16: "a 50 % guess can reach 50.0 %" is below
    the true belief (and says the release moves nothing). The sentence bounds it in decimal arithmetic."""
    from decimal import Decimal, localcontext

    sentence = verdict(epsilon).sentence()
    shown = Decimal(sentence.split("can reach ")[1].split(" %")[0])
    with localcontext() as ctx:
        ctx.prec = 60
        assert shown / 100 > 1 / (1 + Decimal(-epsilon).exp())


def test_an_epsilon_a_rounding_above_a_band_edge_is_banded_as_shown():
    """Randomized response at exactly ε = 1 is accounted 1.0000000000000004 (its noise parameter rounded down to a
    double, so the event never states less than the mechanism spends); it is shown "1", and banded as shown, not
    "Moderate privacy (1 < ε ≤ 4)" beside "ε = 1". A real excess over the edge still moves it up."""
    from dpcore.accounting import epsilon_of_event
    from dpcore.mechanisms import RandomizedResponse
    from dpcore.teaching.verdict import epsilon_text

    for edge, band in [(1.0, "strong"), (4.0, "moderate"), (10.0, "weak")]:
        spent = epsilon_of_event(RandomizedResponse(epsilon=edge, k=10).dp_event, delta=0.0,
                                 neighbouring="replace-one")
        assert spent >= edge and epsilon_text(spent) == f"{edge:g}" and verdict(spent).name == band
    assert verdict(1.000001).name == "moderate"


def test_the_odds_sentence_names_the_additive_delta_of_an_epsilon_delta_bound_and_a_pure_one_exactly():
    # (ε, δ)-DP bounds each outcome's probability by e^ε times its neighbour's plus δ (Dwork & Roth 2014, Definition
    # 2.4): the odds bound carries an additive δ
    pure, approx = verdict(1.0).sentence(), verdict(1.0).sentence(delta=1e-5)
    assert "δ" not in pure and "change at most 2.72×; a 50 % guess can reach 73.2 %" in pure
    assert "change at most 2.72×, up to an additive δ = 1e-05 in any outcome's probability" in approx


def test_an_epsilon_not_known_reads_as_no_guarantee_and_no_proof():
    # epsilon_text(nan) raised "cannot convert float NaN to integer": a table's lost epsilon took a page down with it
    from dpcore.teaching.verdict import epsilon_text

    assert epsilon_text(float("nan")) == "∞" and epsilon_text(float("nan"), infinity="inf") == "inf"
    assert epsilon_text(float("nan"), lower_bound=True) == "0"


def test_an_epsilon_delta_sentence_states_the_additive_delta_not_a_failure_probability_of_order_delta():
    """(ε, δ)-DP bounds every set of outcomes by e^ε times its neighbour's probability plus δ (Dwork & Roth 2014,
    Definition 2.4); it is not "ε-DP except on outcomes of probability of the order of δ". For the Gaussian mechanism
    calibrated to (1, 1e-5) the outputs whose ratio passes e^ε have probability about 16 δ on D, so the sentence must
    not say the odds bound holds apart from outcomes of probability of the order of δ (it did)."""
    from dpcore.teaching.explain import count_query_densities

    _, summary = count_query_densities(mechanism="gaussian", epsilon=1.0, delta=1e-5)
    assert summary["delta_actual"] == pytest.approx(1e-5, rel=1e-6)
    assert summary["mass_above"] > 10 * 1e-5  # where the ratio leaves e^ε: an order of magnitude above δ
    text = verdict(1.0).sentence(delta=1e-5)
    assert "of the order of δ" not in text and "apart from" not in text
    assert "additive δ = 1e-05" in text and "not: except with probability δ" in text


@pytest.mark.parametrize("epsilon,delta", [(1.0, 1e-5), (0.01, 1e-2), (3.0, 1e-3)])
def test_an_epsilon_delta_sentence_gives_the_best_guess_accuracy_the_hypothesis_test_bound_allows(epsilon, delta):
    """Under (ε, δ) the posterior of a single output is not bounded (an outcome of probability δ can reveal the
    record), so the sentence gives what is: from even odds, a membership test is right at most
    (1 + TPR - FPR) / 2 ≤ (e^ε + δ) / (1 + e^ε) of the time (Kairouz, Oh & Viswanath 2015, Theorem 2.1:
    TPR - FPR ≤ (e^ε - 1 + 2δ) / (e^ε + 1)), rounded up; the pure-ε sentence keeps the posterior e^ε / (1 + e^ε)."""
    advantage = (math.exp(epsilon) - 1 + 2 * delta) / (math.exp(epsilon) + 1)
    accuracy = (1 + advantage) / 2
    shown = verdict(epsilon).sentence(delta=delta).split("right at most ")[1].split(" %")[0]
    assert accuracy <= float(shown) / 100 <= accuracy + 0.001
    assert f"reach {belief_text(verdict(epsilon).max_belief)}" in verdict(epsilon).sentence()


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 5.0])
def test_delta_is_taught_as_additive_slack_not_as_the_chance_the_epsilon_bound_fails(epsilon):
    """"δ, roughly, the small chance that the ε bound fails" is the known misreading of (ε, δ)-DP: for the home page's
    Gaussian the answers whose ratio passes e^ε have probability Pr_D[S] = δ + e^ε Pr_D'[S], above δ at every ε (and
    16 δ at ε = 1). The glossary and the home page said it; they now say what δ bounds (Dwork & Roth 2014,
    Definition 2.4)."""
    from dpcore.teaching.explain import count_query_densities

    _, summary = count_query_densities(mechanism="gaussian", epsilon=epsilon, delta=1e-5)
    assert summary["mass_above"] > 1e-5  # where the ε bound "fails": likelier than δ
    home = (ROOT / "pages" / "0_What_epsilon_means.py").read_text(encoding="utf-8")
    for text in (define("δ"), define("ε"), re.sub(r'"\s*\n\s*"', "", home)):
        assert not re.search(r"roughly[,)]? (the )?small chance that the (ε )?bound\s+fails", text), text[:200]
    assert "It is not the chance that the ε bound fails" in define("δ")


def test_the_glossarys_judging_line_gives_the_odds_bound_with_its_additive_delta():
    """The bands judge (ε, δ) guarantees too (DP-SGD's, the Gaussian's), whose odds bound holds only up to an
    additive δ in each outcome's probability (Dwork & Roth 2014, Definition 2.4); the glossary's line on judging ε
    gave the bare e^ε."""
    from dpcore.ui.navigation import glossary_markdown

    judging = next(line for line in glossary_markdown().splitlines() if line.startswith("**Judging ε.**"))
    assert "at most e^ε" in judging and "additive δ" in judging


def test_the_attack_page_says_a_proven_epsilon_bounds_the_training_not_one_run():
    """ε is a property of the randomised training algorithm, not of one output: an audit of one run bounds the ε of
    the training that made it (Steinke, Nasr & Jagielski 2023, Theorem 5.2), as the page's introduction says. The
    proven-ε tile's help said "the true ε of this run"."""
    page = re.sub(r'"\s*\n\s*f?"', "", (ROOT / "pages" / "9_Attack_the_model.py").read_text(encoding="utf-8"))
    assert "true ε of this run" not in page
    assert "The true ε of the training that made this model is at least this" in page


def test_the_delta_box_help_says_what_delta_bounds_not_a_failure_probability():
    """Every page's δ box said "Roughly, the probability the ε guarantee may fail": for the Gaussian mechanism at
    (1, 1e-5) the outputs past e^ε have probability about 16 δ, so δ is no such probability; it is the additive
    slack beside e^ε (Dwork & Roth 2014, Definition 2.4)."""
    from dpcore.teaching.explain import count_query_densities
    from dpcore.ui.common import DELTA_HELP

    _, summary = count_query_densities(mechanism="gaussian", epsilon=1.0, delta=1e-5)
    assert summary["mass_above"] > 10 * 1e-5
    assert "may fail" not in DELTA_HELP and "plus δ" in DELTA_HELP and "not the chance" in DELTA_HELP


def test_an_epsilon_delta_sentence_at_a_large_epsilon_reads_as_a_sentence():
    # "a guess from even odds is right at most near-certainty (over 99.99 %) of the time" at ε = 12
    text = verdict(12.0).sentence(delta=1e-5)
    assert "at most near-certainty" not in text and "can be right nearly always" in text
    assert (math.exp(12) + 1e-5) / (1 + math.exp(12)) > 0.9999
