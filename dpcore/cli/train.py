"""``train`` command: run any registered learner headless.

With ``--json`` the last line is a JSON object with at least ``accuracy`` (or
``mse``/``r2``), ``epsilon``, ``delta``, ``noise_multiplier`` and ``seconds``.
"""
from __future__ import annotations

import json
import re
import sys

from ..exceptions import DPValueError
from ..learners import get_learner, run_learner

# flag -> (params key type, help); only passed when given, and only if the learner takes it
_FLAGS = {
    "model": (str, "network or model family: linear, mlp or cnn (DP-SGD); softmax or mlp (federated); logreg or "
                   "svm (DP-ERM; also accepted: logistic, huber-svm)"),
    "kernel": (str, "DP-ERM kernel: none or rff (random Fourier features of an RBF kernel; also accepted: linear, "
                    "rbf)"),
    "aggregator": (str, "PATE vote aggregator, e.g. gnmax or lnmax"),
    "accountant": (str, "privacy accountant: rdp or pld"),
    "epochs": (int, "passes over the training data"),
    "batch_size": (int, "expected minibatch size (DP-SGD: Poisson sampling rate = batch size / n)"),
    "learning_rate": (float, "step size"),
    "clip_norm": (float, "per-example (or per-client) L2 clipping norm C"),
    "noise_multiplier": (float, "Gaussian noise std / C; omitted: calibrated from --epsilon"),
    "teachers": (int, "PATE: number of teachers (disjoint partitions of the private data)"),
    "queries": (int, "PATE: labels the student asks the teachers for"),
    "clients": (int, "federated: number of clients the data is split across"),
    "rounds": (int, "federated: communication rounds"),
    "client_fraction": (float, "federated: expected share of clients sampled per round"),
}


def _parse_value(v: str):
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(v.lower(), v)


def parse_set(items: list[str]) -> dict:
    """Parse ``--set KEY=VALUE`` items (``-`` in KEY read as ``_``); values become int, float or bool when they can."""
    params = {}
    for item in items:
        if "=" not in item:
            raise DPValueError(f"--set expects KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        key, value = k.strip().replace("-", "_"), _parse_value(v.strip())
        if key == "regularization" and isinstance(value, str) and value != "auto":
            raise DPValueError(f"--set regularization={value}: regularization takes a number > 0 or 'auto'; "
                               f"{_tune_hint()}")
        params[key] = value
    return params


def add_parser(sub) -> None:
    p = sub.add_parser(
        "train", help="train a registered learner and print its metrics",
        description="Train one registered learner on one dataset and print its test metrics and the privacy it "
                    "spent. Options a learner does not take are an error. 'train --list' lists the learners.",
    )
    p.add_argument("--list", action="store_true", help="list the registered learners with a one-line description "
                                                       "and exit")
    p.add_argument("--dataset", help="registry name, e.g. digits (python -m dpcore datasets lists them)")
    p.add_argument("--algorithm", help="learner name, e.g. dpsgd (python -m dpcore train --list shows them)")
    p.add_argument("--epsilon", type=float, default=1.0, help="privacy budget epsilon (default 1.0; ignored by "
                                                              "non-private learners)")
    p.add_argument("--delta", type=float, default=1e-5, help="delta of (epsilon, delta)-DP (default 1e-5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the train/test split and of the noise (default 0)")
    p.add_argument("--train-fraction", type=float, default=1.0,
                   help="share of the training rows kept, in (0, 1] (default 1.0)")
    for flag, (typ, text) in _FLAGS.items():
        p.add_argument("--" + flag.replace("_", "-"), dest=flag, type=typ, default=None, help=text)
    p.add_argument("--lr", dest="learning_rate", type=float, default=None, help="alias of --learning-rate")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="any other learner parameter, e.g. --set preprocess=standardize (repeatable)")
    p.add_argument("--json", action="store_true", help="print the result as JSON on the last line")
    p.set_defaults(func=_run)


def list_learners(stream=None) -> None:
    """Print every registered learner: name, tasks, private or not, and the first sentence of its description."""
    from ..learners import learners

    out = stream if stream is not None else sys.stdout
    regs = learners()
    width = max(len(n) for n in regs)
    for name, spec in regs.items():
        desc = re.split(r"(?<!\bal)\.\s+(?=[A-Z])", spec.description or spec.title)[0].rstrip(".")
        kind = "private" if spec.private else "non-private"
        print(f"{name:<{width}}  [{kind}; {'/'.join(spec.tasks)}]  {spec.title}: {desc}.", file=out)


def _tune_hint() -> str:
    """Where private tuning of the regularisation lives: ``--set tune=true`` and the learners that take it."""
    from ..learners import learners

    names = [n for n, spec in learners().items() if spec.private and "tune" in spec.params]
    return (f"to choose it privately use --set tune=true ({', '.join(names)} take it; "
            "python -m dpcore train --list describes every learner)")


def collect_params(args, spec) -> dict:
    params = {}
    for key in _FLAGS:
        val = getattr(args, key, None)
        if val is not None:
            params[key] = val
    params.update(parse_set(args.set))
    return params


def _run(args) -> int:
    if args.list:
        list_learners()
        return 0
    missing = [f"--{k}" for k in ("dataset", "algorithm") if not getattr(args, k)]
    if missing:
        raise DPValueError(f"train needs {' and '.join(missing)}, e.g. --dataset digits --algorithm dpsgd "
                           "(python -m dpcore train --list shows the learners)")
    spec = get_learner(args.algorithm)
    params = collect_params(args, spec)

    def on_epoch(info):
        if not args.json:
            parts = [f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in info.items()]
            print(" ".join(parts), file=sys.stderr)

    res = run_learner(
        args.algorithm,
        args.dataset,
        epsilon=args.epsilon,
        delta=args.delta,
        seed=args.seed,
        params=params,
        train_fraction=args.train_fraction,
        on_epoch=on_epoch,
    )
    print_result(res, as_json=args.json)
    return 0


def print_result(res, *, as_json: bool) -> None:
    """Print a RunResult: one JSON object on the last line, or ``key: value`` lines."""
    out = res.to_json_dict()
    if as_json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")
