"""Registers ``pate`` with the shared learner registry (CLI, sweeps, pages).

``params`` (all optional, declared in :data:`PATE_KNOBS`): ``aggregator`` ("gnmax" | "lnmax" | "confident"),
``threshold`` and ``threshold_noise`` (Confident-GNMax's check, as shares of the teachers), ``teachers``,
``query_mode`` ("points" | "clusters"), ``queries`` (defaults: a rule in the dataset's sizes, see the
``default_*`` functions), ``noise_multiplier`` (the noise on each vote count: GNMax sigma or LNMax Laplace scale
1/gamma, in votes; without it the noise is calibrated so the answered queries cost ``epsilon``),
``public_fraction``, ``features`` ("pixels" | "hog"), ``teacher_model`` / ``student_model`` ("knn" | "logreg" |
"mlp"), ``data_dependent`` (GNMax and Confident-GNMax; reported in ``extras``: the exact value, not itself
private, and the value released with smooth sensitivity, whose own cost the run's epsilon and event then include,
``extras["epsilon_answers"]`` being the answers' alone), ``accountant`` ("rdp" |
"pld"), ``baseline``.
"""
from __future__ import annotations

from ..learners import register
from ..learners.base import LearnerSpec, RunResult, TestOutputs
from ..learners.knobs import ACCOUNTANT_LABELS, ACCOUNTANT_PAGE_HELP, Knob, config_defaults
from .aggregation import AGGREGATORS
from .analysis import PATE_NEIGHBOURING
from .pipeline import FEATURES, QUERY_MODES, PateConfig, run_pate
from .teachers import MODELS

#: PateConfig's defaults: the knobs declare the same (one source for the library, the command line and the pages)
_CONFIG = config_defaults(PateConfig)
PUBLIC_FRACTION = _CONFIG["public_fraction"]
#: Most teachers by default (each teacher's predictions are computed on every public row).
MAX_TEACHERS = 250
#: Most queries by default, and the public rows per k-means cluster the default aims at.
MAX_CLUSTERS, ROWS_PER_CLUSTER = 100, 20
#: Cluster queries by default from this many public rows per class.
MIN_PUBLIC_PER_CLASS = 10


def _sizes(split, public_fraction: float) -> tuple[int, int, int]:
    """Private rows, public rows and classes of ``split``'s training part.

    The classes are the dataset's declared ones (its target names), never those the private labels happen to hold:
    a class with a single training row would otherwise change the default number of teachers, and with it every
    teacher's partition, when that one label is replaced, which the vote sensitivity (one teacher's vote moves,
    Papernot et al. 2018) does not cover."""
    n = split.X_train.shape[0]
    n_pub = int(round(public_fraction * n))
    return n - n_pub, n_pub, max(2, int(split.n_classes))


def default_query_mode(split, public_fraction: float = PUBLIC_FRACTION) -> str:
    """"clusters" when the public pool holds at least ``MIN_PUBLIC_PER_CLASS`` rows per class, else "points": on a
    handful of public rows (iris, wine) a mislabelled cluster mislabels a large share of the student's data at
    once, and single-example queries did better on validation rows at epsilon = 1."""
    _, n_pub, k = _sizes(split, public_fraction)
    return "clusters" if n_pub >= MIN_PUBLIC_PER_CLASS * k else "points"


def default_teachers(split, public_fraction: float = PUBLIC_FRACTION) -> int:
    """About two private rows per class for each teacher, at most ``MAX_TEACHERS``: the vote margin grows with the
    number of teachers while a nearest-neighbour teacher stays useful on very few rows.

    It reads the number of private rows, taken as public here as DP-SGD's expected batch size takes it: the
    epsilon (add/remove of a record) holds for the teachers the run had, and a record added where the count crosses
    a multiple of 2 k would give another number of teachers. Set ``teachers`` to fix it in advance."""
    n_priv, _, k = _sizes(split, public_fraction)
    return max(1, min(MAX_TEACHERS, n_priv // (2 * k)))


def default_queries(split, public_fraction: float = PUBLIC_FRACTION) -> int:
    """Clusters: one per ``ROWS_PER_CLUSTER`` public rows, at least two per class, at most ``MAX_CLUSTERS``. Points:
    at most 50 answered queries. Never more than the public pool."""
    _, n_pub, k = _sizes(split, public_fraction)
    if default_query_mode(split, public_fraction) == "clusters":
        return max(1, min(n_pub, max(2 * k, min(MAX_CLUSTERS, n_pub // ROWS_PER_CLUSTER))))
    return max(1, min(50, n_pub))


def default_features(split) -> str:
    """HOG where the dataset's DP-SGD preset uses it (MNIST 5k: 28 x 28 strokes, after Tramèr & Boneh 2021), the
    scaled inputs elsewhere: on 8 x 8 digits and on faces HOG made the teachers worse on validation rows."""
    from ..training.presets import preset_for  # lazily: the training package brings torch

    return "hog" if preset_for(split.dataset).features == "hog" else "pixels"


#: How the teacher and student models are named on the page.
MODEL_LABELS = {"knn": "Nearest neighbour", "logreg": "Logistic regression", "mlp": "Small neural network"}

#: PATE's knobs. The defaults (a rule in the private rows, public rows and classes of each dataset: see the
#: default_* functions) were chosen on validation rows of every classification dataset at epsilon 1, 2 and 5
#: (``python bench/pate_defaults.py``), never on test rows; at epsilon = 1 they beat the most common class on each.
PATE_KNOBS = (
    Knob("aggregator", "choice", default=_CONFIG["aggregator"], choices=AGGREGATORS, privacy=True, label="Aggregator",
         choice_labels={"gnmax": "GNMax — Gaussian noise (Papernot et al. 2018)",
                        "lnmax": "LNMax — Laplace noise (Papernot et al. 2017)",
                        "confident": "Confident-GNMax — answers only when the teachers agree (2018)"},
         help="gnmax (Gaussian noise on the vote counts, Papernot et al. 2018), lnmax (Laplace, 2017) or confident "
              "(Confident-GNMax, 2018: GNMax answers only the queries whose noisy largest count reaches a threshold)",
         page_help="Which noise the teachers' vote counts get before the winner is read: Gaussian (GNMax) or "
                   "Laplace (LNMax). Confident-GNMax first checks, with noise, that enough teachers agree and leaves "
                   "the other queries unanswered: fewer labels, more of them right, and a much smaller data-dependent "
                   "ε when the teachers agree."),
    Knob("teachers", "int", low=1, high=10_000, privacy=True, label="Teachers", default_from=default_teachers,
         help="teachers on disjoint private partitions (default: about 2 rows per class each, at most 250)"),
    Knob("query_mode", "choice", choices=QUERY_MODES, label="Each query labels", default_from=default_query_mode,
         choice_labels={"points": "One public example", "clusters": "One cluster of public examples"},
         page_help="One example: the student learns the answered examples only. One cluster: the public pool is cut "
                   "into k-means clusters (public data, no privacy cost), every teacher votes once per cluster for "
                   "the class it predicts most there, and the student learns every public example with its "
                   "cluster's noisy label. Each query costs the same either way.",
         help="points: one public example per query; clusters: one k-means cluster of the public pool per query, "
              "each teacher voting once per cluster, the student learning every public row (default when the "
              "public pool has 10 rows per class or more)"),
    Knob("queries", "int", low=1, high=100_000, privacy=True, label="Queries asked",
         default_from=default_queries,
         page_help="Public examples (or clusters) put to the teachers; each one spends privacy. GNMax and LNMax "
                   "answer every one, Confident-GNMax only those whose teachers agree.",
         help="public examples (or clusters) put to the teachers, each one spending privacy (Confident-GNMax answers "
              "only those that pass its check)"),
    Knob("noise_multiplier", "float", low=0.0, low_open=True, high=1e6, log=True, privacy=True,
         label="Noise scale in votes: σ (GNMax), σ₂ (Confident-GNMax), 1/γ (LNMax)",
         help="GNMax sigma (Confident-GNMax: sigma2, the answers' noise) or LNMax 1/gamma, in votes; omitted: "
              "calibrated from epsilon"),
    # Confident-GNMax's defaults, 0.5 and 0.5, were chosen on validation rows of every classification dataset at
    # epsilon = 2 (python bench/confident_gnmax.py): better than the paper's 0.8 and 0.6 wherever it runs, whose weaker
    # teachers (a few rows each) rarely reach 80 % agreement.
    Knob("threshold", "float", default=_CONFIG["threshold"], low=0.0, low_open=True, high=1.0, privacy=True,
         label="Consensus threshold (share of teachers)", when={"aggregator": ("confident",)},
         page_help="Confident-GNMax answers a query only when its largest vote count plus noise reaches this share "
                   "of the teachers (Papernot et al. used 200 of 250 teachers on MNIST, 0.8; our teachers hold far "
                   "fewer rows and agree less).",
         help="Confident-GNMax: the threshold T as a share of the teachers (default 0.5; the paper's MNIST setting "
              "was 200 of 250, 0.8)"),
    Knob("threshold_noise", "float", default=_CONFIG["threshold_noise"], low=0.0, low_open=True, high=100.0,
         privacy=True,
         label="Noise on the consensus check σ₁ (share of teachers)", when={"aggregator": ("confident",)},
         page_help="The standard deviation of the noise added to the largest vote count before it is compared with "
                   "the threshold, as a share of the teachers (the paper: 150 of 250 teachers, 0.6). Every examined "
                   "query pays for this check.",
         help="Confident-GNMax: sigma1, the noise on the consensus check, as a share of the teachers (default 0.5; "
              "the paper's was 150 of 250, 0.6)"),
    Knob("public_fraction", "float", default=_CONFIG["public_fraction"], low=0.0, low_open=True, high=0.9,
         label="Public share of the training part", help="share of the training rows used as the student's "
                                                         "unlabelled public data"),
    Knob("features", "choice", choices=FEATURES, label="Features (teachers and student)",
         default_from=default_features, images=True,
         choice_labels={"pixels": "Pixels", "hog": "HOG (gradient histograms)"},
         page_help="HOG: histograms of oriented gradients, computed from each image alone (no privacy cost); they "
                   "make few-row teachers much better.",
         help="pixels, or hog (histograms of oriented gradients, image datasets only): what teachers and student "
              "see; a per-image transform, no privacy cost"),
    Knob("teacher_model", "choice", default=_CONFIG["teacher_model"], choices=tuple(MODELS), label="Teacher model",
         choice_labels=MODEL_LABELS, page_help="Nearest neighbour stays useful on the few rows each teacher holds.",
         help="knn (1-nearest neighbour: the best on a few rows each), logreg or mlp"),
    Knob("student_model", "choice", default=_CONFIG["student_model"], choices=tuple(MODELS), label="Student model",
         choice_labels=MODEL_LABELS, page_help="The model trained on the public examples and their noisy labels.",
         help="logreg, mlp or knn"),
    Knob("data_dependent", "bool", default=_CONFIG["data_dependent"], advanced=True,
         label="Also show the data-dependent ε",
         when={"aggregator": ("gnmax", "confident")},
         page_help="Papernot et al. 2018's data-dependent ε: far smaller when the teachers agree. It is computed from "
                   "the private votes, so the page releases it with smooth sensitivity (its own noise and cost "
                   "included) and shows the exact value along the queries only as an analysis not to publish. "
                   "That release is a second use of the private votes: the ε spent includes its cost.",
         help="also report the data-dependent epsilon of Papernot et al. 2018 (Theorem 6), released privately with "
              "smooth sensitivity (Section 4.2; the run's epsilon then includes that release's cost), and the exact "
              "values along the queries (not private)"),
    Knob("accountant", "choice", default=_CONFIG["accountant"], choices=("rdp", "pld"), privacy=True, advanced=True,
         label="Accountant", help="rdp or pld", choice_labels=ACCOUNTANT_LABELS, page_help=ACCOUNTANT_PAGE_HELP),
    Knob("baseline", "bool", default=_CONFIG["baseline"], advanced=True, label="Non-private baseline",
         help="also train one non-private model on all private rows, for comparison"),
)


#: The knobs :func:`pate_config` fills by a rule on the split (or, the noise, under another name); every other knob
#: is the :class:`PateConfig` field of its own name, handed on as its declaration reads it: a knob is added to
#: PateConfig and PATE_KNOBS, nowhere else.
RULED_KNOBS = ("teachers", "queries", "noise_multiplier", "features", "query_mode")


def pate_config(split, *, epsilon, delta, seed, params, secure: bool = False) -> PateConfig:
    """The :class:`PateConfig` for ``params`` (knob values; a missing or None one takes the knob's default on
    ``split``). With ``noise_multiplier`` set the noise is fixed and ``epsilon`` is not used; without it the noise
    is calibrated to ``epsilon``. The command line, sweeps and the PATE page all build their runs here."""
    p = {k.name: k.default for k in PATE_KNOBS} | {k: v for k, v in dict(params).items() if v is not None}
    public = p["public_fraction"]
    noise = p["noise_multiplier"]
    same = {k.name: k.check(p[k.name]) for k in PATE_KNOBS if k.name not in RULED_KNOBS}
    return PateConfig(
        **same,
        teachers=p["teachers"] or default_teachers(split, public),
        queries=p["queries"] or default_queries(split, public),
        noise_scale=noise,
        target_epsilon=None if noise is not None else epsilon,
        delta=delta,
        features=str(p["features"] or default_features(split)),
        query_mode=str(p["query_mode"] or default_query_mode(split, public)),
        seed=seed,
        secure=secure,
    )


def _run_pate(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
    cfg = pate_config(split, epsilon=epsilon, delta=delta, seed=seed, params=params)
    r = run_pate(split, cfg, on_epoch=on_epoch)
    metrics = {
        "accuracy": r.student_accuracy,
        "teacher_accuracy": r.teacher_mean_accuracy,
        "ensemble_accuracy": r.ensemble_accuracy,
        "label_accuracy": r.label_accuracy,
    }
    if cfg.baseline:
        metrics["nonprivate_accuracy"] = r.nonprivate_accuracy
    extras = {
        "aggregator": cfg.aggregator,
        "teachers": cfg.teachers,
        "queries": cfg.queries,
        "query_mode": cfg.query_mode,
        "features": cfg.features,
        "epsilon_pure": r.epsilon_pure,
        "epsilon_data_dependent": r.epsilon_data_dependent,
        "epsilon_data_dependent_released": None if r.released is None else r.released.epsilon,
        "epsilon_data_dependent_released_std": None if r.released is None else r.released.noise_std,
        "epsilon_answers": None if r.released is None else r.epsilon_answers,  # epsilon less the release
        "answered": r.answered_count,
        "split_sizes": r.split_sizes,
        "teacher_seconds": r.teacher_seconds,
        "predictions": r.student_predictions,
    }
    return RunResult("pate", split.dataset.name, split.task, metrics, r.epsilon, r.delta,
                     noise_multiplier=r.noise_scale, seconds=r.seconds, history=r.history, extras=extras,
                     event=r.dp_event, neighbouring=PATE_NEIGHBOURING,
                     test_outputs=TestOutputs.from_labels(r.student_predictions, split.n_classes))


register(
    LearnerSpec(
        "pate",
        "PATE (teachers, noisy votes, student)",
        ("classification",),
        True,
        _run_pate,
        knobs=PATE_KNOBS, config=PateConfig,
        baseline=None,
        default_epsilon=5.0,
        description="Private Aggregation of Teacher Ensembles (Papernot et al. 2017/2018): teachers on disjoint "
                    "private partitions, GNMax/LNMax noisy votes label public queries, a student learns from them.",
    )
)
