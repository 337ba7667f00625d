"""``report`` command: the ε advisor's answer as a decision report a data owner can take away.

``python -m dpcore report --data customers.csv --label churned --need "within 2 points" --epsilon-range 0.1,10
--out report.html`` sweeps ε over the range with several seeds, answers with the smallest ε that meets the need
(:mod:`dpcore.decision.advisor`) and writes one self-contained HTML file (:mod:`dpcore.decision.report`) that opens
offline. ``--json``
prints the recommendation as JSON on stdout. For a print or a PDF, open the file in a browser and print it: no PDF
library the project can rely on is installed without a browser of its own.

The runs of a ``--data`` file are not written to the sweeps' cache unless ``--cache-dir`` is given: results computed
from one's own file stay off the disk.
"""
from __future__ import annotations

import os
import sys
import warnings

from ..decision.advisor import ADVISOR_CONFIDENCE, ADVISOR_GAP, ADVISOR_POINTS, ADVISOR_RANGE, ADVISOR_SEEDS
from ..defaults import DELTA
from ..exceptions import DPValueError, PrivacyLeakWarning
from ..sweep import DEFAULT_JOBS, JOBS_HELP
from . import JSON_HELP, command_help, print_json
from .data import add_data_flags, add_noise_flags, dataset_from_args, noise_from_args


def add_parser(sub) -> None:
    p = sub.add_parser("report", help=command_help("report"),
                       description="Sweep epsilon over a range you accept, answer with the smallest epsilon that "
                                   "meets what you need (with its uncertainty over seeds, the attack at that epsilon, "
                                   "its verdict band and published deployments), and write a self-contained HTML "
                                   "report.")
    add_data_flags(p)
    p.add_argument("--need", default=None,
                   help="what the model must do: 'within=0.05' or 'within 5 points' (of the non-private model; the "
                        f"default is within {ADVISOR_GAP * 100:g} points), 'accuracy>=0.8' (or 80%%), 'balanced>=0.7' "
                        "(balanced accuracy: each class's share found "
                        "right, averaged), 'r2>=0.5', 'mse<=3000'. A need naming no metric is in accuracy, or in "
                        "balanced accuracy where one class is at least 80%% of the rows")
    p.add_argument("--epsilon-range", default=None, metavar="LOW,HIGH",
                   help=f"the epsilon you could accept (default {ADVISOR_RANGE[0]:g},{ADVISOR_RANGE[1]:g})")
    p.add_argument("--points", type=int, default=ADVISOR_POINTS,
                   help=f"epsilon values tried in the range, log-spaced (default {ADVISOR_POINTS})")
    p.add_argument("--seeds", type=int, default=ADVISOR_SEEDS, help=f"runs per epsilon (default {ADVISOR_SEEDS})")
    p.add_argument("--algorithms", "--algorithm", default=None,  # train and audit spell it singular
                   help="comma-separated learners (default: the Trade-off explorer's selection for the data)")
    p.add_argument("--confidence", type=float, default=ADVISOR_CONFIDENCE,
                   help=f"how often a fresh run must meet the need (default {ADVISOR_CONFIDENCE:g})")
    p.add_argument("--delta", type=float, default=DELTA, help=f"delta of (epsilon, delta)-DP (default {DELTA:g})")
    add_noise_flags(p, seed_help="first seed")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a fixed knob, given to every learner that takes it (repeatable), as the Trade-off page's "
                        "Fixed knobs")
    p.add_argument("--no-attack", action="store_true",
                   help="skip the membership attack at the recommended epsilon (it trains one more model)")
    p.add_argument("--jobs", type=int, default=DEFAULT_JOBS, help=JOBS_HELP)
    p.add_argument("--cache-dir", default=None,
                   help="run cache (default: the sweeps' cache for a registry dataset, none for --data)")
    p.add_argument("--out", default=None, metavar="FILE.html", help="where to write the HTML report")
    p.add_argument("--json", action="store_true", help=JSON_HELP.replace("the result", "the recommendation"))
    p.set_defaults(func=_run)


def _range(text: str | None) -> tuple[float, float]:
    if text is None:
        return ADVISOR_RANGE
    parts = [t.strip() for t in text.split(",") if t.strip()]
    try:
        lo, hi = (float(t) for t in parts)
    except ValueError:
        raise DPValueError(f"--epsilon-range expects LOW,HIGH (two numbers), got {text!r}") from None
    if not (0 < lo <= hi) or hi == float("inf"):
        raise DPValueError(f"--epsilon-range must be 0 < LOW ≤ HIGH, finite, got {text!r}")
    return lo, hi


def _check_out(path: str | None) -> None:
    if path is None:
        return
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise DPValueError(f"--out: the directory {parent!r} does not exist")
    if os.path.isdir(path):
        raise DPValueError(f"--out: {path!r} is a directory; give a file name such as {path}/report.html")


def _run(args) -> int:
    from ..decision.advisor import advise, parse_need
    from ..decision.report import report_html, report_json
    from .train import parse_set

    if args.out is None and not args.json:
        raise DPValueError("give --out FILE.html for the report, or --json for the recommendation (or both)")
    _check_out(args.out)
    lo_hi = _range(args.epsilon_range)
    with warnings.catch_warnings(record=True) as caught:  # the loader's warnings go in the report too
        warnings.simplefilter("always")
        data = dataset_from_args(args)
    load_warnings = [(str(w.message), issubclass(w.category, PrivacyLeakWarning)) for w in caught]
    for w in caught:
        warnings.warn(str(w.message), w.category, stacklevel=1)
    from ..datasets import load_dataset

    ds = load_dataset(data) if isinstance(data, str) else data
    need = parse_need(args.need or "", ds.task, ds.y)
    seed, secure = noise_from_args(args)
    learners = [a.strip() for a in args.algorithms.split(",") if a.strip()] if args.algorithms else None
    upload = not isinstance(data, str)
    use_cache = args.cache_dir is not None or not upload
    if upload and args.cache_dir is None:
        print("note: the runs on your file are not cached on disk (give --cache-dir to keep them)", file=sys.stderr)
    advice = advise(data, need, epsilon_range=lo_hi, points=args.points, seeds=args.seeds, learners=learners,
                    base_seed=seed or 0, secure=secure, delta=args.delta, confidence=args.confidence,
                    attack=not args.no_attack, n_jobs=args.jobs, use_cache=use_cache, cache_dir=args.cache_dir,
                    params=parse_set(args.set))
    print(advice.headline(), file=sys.stderr)
    # what the answer cost, on the terminal too: every run behind it was trained and scored on the rows
    print(advice.selection["note"].split("\n\n")[0], file=sys.stderr)
    if advice.recommended is None and advice.instead:  # what to change next, on the terminal too (not only in the file)
        print("What would meet it:\n" + "\n".join(f"  - {t}" for t in advice.instead), file=sys.stderr)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(report_html(advice, load_warnings=load_warnings))
        print(f"wrote the report to {args.out}", file=sys.stderr)
    if args.json:
        print_json(report_json(advice, load_warnings=load_warnings))
    return 0
