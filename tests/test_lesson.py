"""One lesson from page to page: the stops' links carry the dataset, ε and seed in each page's own input names, and
the lesson plan in docs/ is the one the home page shows."""
from __future__ import annotations

import pathlib
import re

from dpcore.datasets import REGISTRY
from dpcore.defaults import EPSILON
from dpcore.teaching.lesson import DATASET, OWN_DEFAULTS, SEED, STOPS, carried, next_stop, stop_of
from dpcore.ui.navigation import PAGES

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_the_lesson_is_on_a_registry_dataset_at_the_apps_epsilon():
    assert DATASET in REGISTRY and EPSILON == 1.0 and SEED == 0


def test_every_stop_is_a_page_and_names_that_pages_inputs():
    keys = {p.path: p.keys for p in PAGES}
    assert [s.title for s in STOPS] == ["What ε means", "Train a network", "Attack the model", "Trade-off explorer"]
    for s in STOPS:
        assert s.page in keys and s.prefix == keys[s.page]
        for name in (s.dataset_key, s.epsilon_key, s.seed_key, *s.also):
            assert name is None or name.startswith(keys[s.page])
        source = (ROOT / s.page).read_text()
        for name in (s.dataset_key, s.epsilon_key, s.seed_key):  # the page really has an input of that name
            assert name is None or f'"{name}"' in source, (s.page, name)


def test_a_button_the_plan_says_to_press_is_a_button_of_that_stops_page():
    pressed = [s for s in STOPS if s.press]
    assert [s.title for s in pressed] == ["Train a network", "Trade-off explorer"]
    for s in pressed:
        assert f'.button("{s.press}"' in (ROOT / s.page).read_text(), (s.page, s.press)
    from dpcore.ui.lesson import lesson_plan_markdown

    assert "Press *Train*, then point at the private model's accuracy curve" in lesson_plan_markdown()
    # the attack stop's ladder, which answers its "at which ε", is a button the page draws from dpcore.ui.audit
    assert "press *Climb the ladder*" in STOPS[2].point_at
    assert '.button("Climb the ladder' in (ROOT / "dpcore" / "ui" / "audit.py").read_text()


def test_a_link_carries_what_the_visitor_changed_and_the_lesson_for_the_rest():
    train = next_stop(STOPS[0].page)
    assert train is STOPS[1] and next_stop(STOPS[-1].page) is None and stop_of("pages/11_Glossary.py") is None
    assert carried(train, dataset=None, epsilon=2.0, seed=None) == {
        "train.dataset": DATASET, "train.epsilon": 2.0, "train.seed": SEED}
    # the trade-off sweeps ε itself: the link sets its dataset, seed and the lesson's learner, named for the data's
    # kind, and the class's ε as the mark on its chart
    assert carried(STOPS[3], dataset="digits", epsilon=2.0, seed=7) == {
        "sweep.dataset": "digits", "sweep.mark": 2.0, "sweep.seed": 7,
        "sweep.learners.classification.img.epsilon": ["dpsgd"]}
    assert carried(STOPS[3], dataset="breast_cancer", epsilon=None, seed=None) == {
        "sweep.dataset": "breast_cancer", "sweep.mark": EPSILON, "sweep.seed": SEED,
        "sweep.learners.classification.tab.epsilon": ["dpsgd"]}


def test_pages_that_keep_their_own_defaults_say_why():
    assert set(OWN_DEFAULTS) <= {p.path for p in PAGES}
    assert all(len(why) > 80 for why in OWN_DEFAULTS.values())


def test_docs_lesson_plan_is_the_plan_the_home_page_shows():
    from dpcore.ui.lesson import lesson_plan_markdown

    doc = (ROOT / "docs" / "lesson.md").read_text()
    assert lesson_plan_markdown() in doc
    # the plan promises only what the links carry: the trade-off explorer sweeps ε, and the class's ε is its mark
    assert STOPS[-1].epsilon_key == "sweep.mark" and "marks yours on its chart" in lesson_plan_markdown()
    for s in STOPS:
        assert re.search(re.escape(s.ask), doc)


def test_every_abbreviation_the_lesson_plan_says_to_the_room_is_in_the_glossary():
    # the Attack stop says "point at the ROC curve", a word the page never wrote and the glossary did not define
    from dpcore.teaching.glossary import GLOSSARY
    from dpcore.ui.lesson import lesson_plan_markdown

    defined = {k.split(" (")[0] for k in GLOSSARY} | {part for k in GLOSSARY for part in re.split(r"[ /()]+", k)}
    said = set(re.findall(r"\b(?:[A-Z][A-Za-z]*[A-Z][A-Za-z-]*|[A-Z]{2,})\b", lesson_plan_markdown()))
    assert "ROC" in said
    assert not sorted(t for t in said if t not in defined and t not in {"MNIST"})
    assert "**ROC curve**" in (ROOT / "pages" / "9_Attack_the_model.py").read_text()  # named where it is drawn


def test_the_tab_the_first_stop_names_is_the_home_pages_tab():
    page = (ROOT / STOPS[0].page).read_text()
    name = re.search(r"its tab \*([^*]+)\*", STOPS[0].point_at).group(1)
    assert f'"{name}"' in page and "headline_tabs(" in page


def test_a_link_to_the_trade_off_widens_its_swept_range_to_hold_the_carried_epsilon():
    # a room at ε 0.05, the home page slider's least, reached the last stop to read "Your ε = 0.05 lies outside the
    # swept range (0.1 to 10)" and no mark on the chart the stop points at
    from dpcore.sweep.axes import DEFAULT_RANGES

    assert DEFAULT_RANGES["epsilon"][:2] == (0.1, 10.0)
    least, largest = STOPS[3].range_keys
    assert least.startswith(STOPS[3].prefix) and largest.startswith(STOPS[3].prefix)
    assert carried(STOPS[3], dataset=None, epsilon=0.05, seed=None)[least] == 0.05
    assert carried(STOPS[3], dataset=None, epsilon=50.0, seed=None)[largest] == 50.0
    within = carried(STOPS[3], dataset=None, epsilon=1.0, seed=None)  # inside the range: the page's own range
    assert least not in within and largest not in within
    assert all(s.range_keys is None for s in STOPS[:3])  # the other stops take the ε itself


def test_the_words_of_the_train_stops_preset_line_are_in_the_glossary():
    # the Train page's first screen names its preset "linear model on HOG features ..., Poisson sampling rate 0.25,
    # ..., averaged iterates": a student asked what averaged iterates are, and the glossary had no answer
    from dpcore.datasets import REGISTRY
    from dpcore.teaching.glossary import define
    from dpcore.training.presets import preset_for

    line = preset_for(REGISTRY[DATASET]).note
    for term in ("HOG", "Poisson sampling", "Averaged iterates"):
        assert term.lower() in line.lower() and define(term)


def test_the_attack_stops_kinds_of_attacker_are_in_the_glossary():
    # the Attack page offers "(black-box)" attacks and its ladder, which the stop asks the room to climb, a
    # "white-box" one: neither word was defined
    from dpcore.teaching.glossary import define

    assert "white-box" in (ROOT / "dpcore" / "ui" / "audit.py").read_text()
    assert "black-box" in define("Black-box") and "white-box" in define("Black-box")


def test_the_attack_stop_says_a_proven_epsilon_passes_a_correct_claim_only_by_the_audits_chance():
    """A lower bound at 95 % confidence exceeds the true ε with probability up to 5 % (Steinke, Nasr & Jagielski 2023,
    Theorem 5.2, a bound at a significance level): the Attack stop told the room to point at a proven ε "never above
    the claimed ε", which a correct training can show by chance. The stop names the audit's own confidence."""
    from dpcore.audit.run import DEFAULT_CONFIDENCE

    attack = next(s for s in STOPS if s.page == "pages/9_Attack_the_model.py")
    assert "never above" not in attack.point_at
    assert f"{1 - DEFAULT_CONFIDENCE:.0%} chance its {DEFAULT_CONFIDENCE:.0%} confidence".replace("%", " %") \
        in attack.point_at
