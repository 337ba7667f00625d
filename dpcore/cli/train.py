"""``train`` command: run any registered learner headless.

With ``--json`` the last line is a JSON object with at least ``accuracy`` (or
``mse``/``r2``), ``epsilon``, ``delta``, ``noise_multiplier`` and ``seconds``.
"""
from __future__ import annotations

import json
import sys

from ..learners import get_learner, run_learner

# flag -> params key; only passed when given, and only if the learner takes it
_FLAGS = {
    "model": str,
    "kernel": str,
    "aggregator": str,
    "accountant": str,
    "epochs": int,
    "batch_size": int,
    "learning_rate": float,
    "clip_norm": float,
    "noise_multiplier": float,
    "teachers": int,
    "queries": int,
    "clients": int,
    "rounds": int,
    "client_fraction": float,
}


def _parse_value(v: str):
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(v.lower(), v)


def add_parser(sub) -> None:
    p = sub.add_parser("train", help="train a registered learner and print its metrics")
    p.add_argument("--dataset", required=True, help="registry name, e.g. digits")
    p.add_argument("--algorithm", required=True, help="learner name (python -m dpcore train --list shows them)")
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--delta", type=float, default=1e-5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--train-fraction", type=float, default=1.0)
    for flag, typ in _FLAGS.items():
        p.add_argument("--" + flag.replace("_", "-"), dest=flag, type=typ, default=None)
    p.add_argument("--lr", dest="learning_rate", type=float, default=None, help="alias of --learning-rate")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="any other learner parameter")
    p.add_argument("--json", action="store_true", help="print the result as JSON on the last line")
    p.set_defaults(func=_run)


def collect_params(args, spec) -> dict:
    params = {}
    for key in _FLAGS:
        val = getattr(args, key, None)
        if val is not None:
            params[key] = val
    for item in args.set:
        if "=" not in item:
            raise ValueError(f"--set expects KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        params[k.strip().replace("-", "_")] = _parse_value(v.strip())
    return params


def _run(args) -> int:
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
