"""One lesson from page to page: the dataset, ε and seed a class keeps from "what ε means" to the trade-off.

A teacher walks a room through four stops (:data:`STOPS`): what ε means (the home page), training a network at that
ε, attacking the model it trained, and the trade-off over ε. Every stop starts from the values declared here, and
its "next" link (:mod:`dpcore.ui.lesson`) carries the dataset, ε and seed the visitor has on screen into the next
stop's address (:mod:`dpcore.ui.links` reads them back), so a visitor who changed ε to 2 on the home page trains,
attacks and sweeps at 2.

Where a page must start elsewhere to show its own effect, it keeps its default and :data:`OWN_DEFAULTS` says why.
The docs' lesson plan (``docs/lesson.md``) walks the same stops; the pages and that plan read the same table.

Streamlit-free: the pages reach it through :mod:`dpcore.ui.lesson`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..defaults import EPSILON as _EPSILON
from ..defaults import LEARNER as _LEARNER

#: The dataset the lesson trains on and attacks: 5,000 MNIST digits, pictures a room recognises. DP-SGD's preset
#: (a linear model on HOG features) reaches 0.91 test accuracy at ε = 1 in well under a second of training, against
#: 0.96 without privacy (digits, the Train page's former default, took longer for 0.92).
DATASET = "mnist5k"
#: The lesson's ε: :data:`dpcore.defaults.EPSILON`, the top of the verdict's "strong" band.
EPSILON = _EPSILON
#: The lesson's seed: the same noise, so the same picture, for everyone in the room.
SEED = 0
#: The learner trained at the Train stop and attacked at the Attack stop.
LEARNER = _LEARNER


@dataclass(frozen=True)
class Stop:
    """One stop of the lesson: its page, what to point at, the question for the room, and the names of the page's
    inputs that hold the lesson's dataset, ε and seed (``None``: the page has no such input)."""

    page: str
    title: str
    point_at: str
    ask: str
    #: the label of the button that draws what to point at, where the page waits for one (the Train page's "Train",
    #: the trade-off's "Run"); None where the page draws it on arrival
    press: str | None = None
    dataset_key: str | None = None
    epsilon_key: str | None = None
    seed_key: str | None = None
    #: further inputs a link to this stop sets (input name -> value), beside the dataset, ε and seed; ``{kind}`` in a
    #: name is the carried dataset's kind as the page names its inputs ("classification.img", "regression.tab")
    also: dict = field(default_factory=dict)
    #: the names of the page's swept ε range (its least and its largest), where the page sweeps ε and marks the
    #: carried one: a link widens the range to hold a carried ε outside it (:func:`carried`)
    range_keys: tuple[str, str] | None = None

    @property
    def prefix(self) -> str:
        """The prefix of the page's inputs (``"train."``), as :data:`dpcore.ui.navigation.PAGES` declares it."""
        key = self.dataset_key or self.epsilon_key or self.seed_key or ""
        return key.split(".", 1)[0] + "." if key else ""


#: The stops, in the order the story goes. The Attack stop's names are those of ``pages/9_Attack_the_model.py``:
#: its dataset picker ``audit.dataset``, its ε box ``audit.eps``, its seed ``audit.seed``.
STOPS: tuple[Stop, ...] = (
    Stop("pages/0_What_epsilon_means.py", "What ε means",
         point_at="the two curves of section 2 (the released count on D and on D′; beside the ε slider when "
                  "presenting) and how much they overlap; then move ε and watch the overlap change, and the "
                  "privacy-loss ratio under them (its tab *Their ratio and its band* beside the slider when "
                  "presenting) stay inside its band",
         ask="You see one noisy answer. Can you tell whether Chandler's record says diabetes? What would make you "
             "sure, and what does ε limit?",
         epsilon_key="home.eps", seed_key="home.seed"),
    Stop("pages/2_Train_a_network.py", "Train a network",
         press="Train",
         point_at="the private model's accuracy curve against the dashed non-private line, and the ε spent "
                  "growing epoch by epoch to the dotted budget line",
         ask="The private model is a few points less accurate. What did those points buy?",
         dataset_key="train.dataset", epsilon_key="train.epsilon", seed_key="train.seed"),
    Stop("pages/9_Attack_the_model.py", "Attack the model",
         point_at="the ROC curve of the non-private model above the diagonal, the private one near it, and the "
                  "proven ε lower bound below the claimed ε (a correct training passes it only by the 5 % chance "
                  "its 95 % confidence leaves); then press *Climb the ladder* at the foot of the page: the same "
                  "training attacked at growing ε and without noise",
         ask="Which training records can an attacker tell apart from records the model never saw, and at which ε "
             "does that stop?",
         dataset_key="audit.dataset", epsilon_key="audit.eps", seed_key="audit.seed"),
    Stop("pages/5_Tradeoff_explorer.py", "Trade-off explorer",
         press="Run",
         point_at="accuracy against ε, with the non-private line above and the majority-class (chance) line "
                  "below, where the curve bends, and the dash-dotted line of the ε the class trained and attacked at",
         ask="Which ε would you choose for these digits, and who should get to choose it?",
         # the page sweeps ε: the class's ε is marked on the curve ("Your ε, marked on the chart")
         dataset_key="sweep.dataset", epsilon_key="sweep.mark", seed_key="sweep.seed",
         # the lesson's learner alone: DP-SGD over five ε and three seeds is a minute on a 2-core server, where the
         # page's default pair of learners on MNIST 5k takes several
         also={"sweep.learners.{kind}.epsilon": [_LEARNER]},
         # a room at ε 0.05 (the home page slider's least) found "Your ε = 0.05 lies outside the swept range (0.1 to
         # 10)" and no mark on the chart the stop points at
         range_keys=("sweep.min.epsilon", "sweep.max.epsilon")),
)

#: Pages whose defaults differ from the lesson's, and why (each page reads its own default from its own module).
OWN_DEFAULTS = {
    "pages/5_Tradeoff_explorer.py":
        "opens on breast cancer with DP-SGD and objective perturbation: a sweep runs 39 trainings (five ε, three "
        "seeds, baselines), seconds on breast cancer but several minutes on MNIST 5k on a 2-core class server. The "
        "lesson's link from the Attack stop carries MNIST 5k with DP-SGD alone.",
    "pages/7_PATE.py":
        "ε 5 on digits: PATE's ε counts every noisy vote the student's labels come from; its student reached 0.42 on "
        "validation digits at ε 1, 0.66 at 2 and 0.86 at 5 (bench/pate_defaults.py), and 5 is the learner's own "
        "default on the command line too (default_epsilon, dpcore/pate/learners.py). The lesson's MNIST 5k is one "
        "choice away (0.87 at ε 5, in about the same time).",
    "pages/8_Federated_learning.py":
        "ε 4 on MNIST 5k: its ε is user level, protecting a client's whole data, and 1,000 clients of about four "
        "images reach 0.86 at ε 4 against 0.89 without privacy (McMahan et al. 2018's point that many clients make "
        "user-level DP affordable); at ε 1 the 25 rounds the budget allows reach about 0.79.",
    "pages/6_Noisy_images.py":
        "ε 10 on two colour photographs: the noise goes on the pictures themselves, and at the lesson's ε 1 a picture "
        "protected as a whole is pure noise with any mechanism; at 10 protecting a pixel leaves the picture, "
        "protecting the picture leaves nothing and DP-Pix leaves its blocks.",
}


def stop_of(page: str) -> Stop | None:
    """The stop shown by ``page`` (a path relative to ``app.py``), or None when the page is not a stop."""
    return next((s for s in STOPS if s.page == page), None)


def next_stop(page: str) -> Stop | None:
    """The stop after ``page``'s, or None (the last stop, or a page that is not one)."""
    pages = [s.page for s in STOPS]
    return STOPS[pages.index(page) + 1] if page in pages[:-1] else None


def carried(to: Stop, *, dataset: str | None, epsilon: float | None, seed: int | None) -> dict:
    """The inputs a link to ``to`` sets: the lesson's dataset, ε and seed replaced by the visitor's where given; where
    ``to`` sweeps ε (:attr:`Stop.range_keys`), its range's end widened to a carried ε beyond it, so that the ε is on
    the curve where the page marks it.

    >>> carried(STOPS[1], dataset=None, epsilon=2.0, seed=3)
    {'train.dataset': 'mnist5k', 'train.epsilon': 2.0, 'train.seed': 3}
    >>> carried(STOPS[3], dataset=None, epsilon=0.05, seed=None)["sweep.min.epsilon"]
    0.05
    """
    from ..datasets import REGISTRY
    from ..sweep.axes import DEFAULT_RANGES

    data = REGISTRY[dataset or DATASET]
    kind = f"{data.task}.{'img' if data.image_shape is not None else 'tab'}"
    out = {name.replace("{kind}", kind): value for name, value in to.also.items()}
    if to.dataset_key:
        out[to.dataset_key] = data.name
    if to.epsilon_key:
        out[to.epsilon_key] = float(EPSILON if epsilon is None else epsilon)
    if to.seed_key:
        out[to.seed_key] = int(SEED if seed is None else seed)
    if to.range_keys and epsilon is not None:
        least, largest, _ = DEFAULT_RANGES["epsilon"]
        if epsilon < least:
            out[to.range_keys[0]] = float(epsilon)
        if epsilon > largest:
            out[to.range_keys[1]] = float(epsilon)
    return out


__all__ = ["DATASET", "EPSILON", "LEARNER", "OWN_DEFAULTS", "SEED", "STOPS", "Stop", "carried", "next_stop",
           "stop_of"]
