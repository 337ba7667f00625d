"""``epsilon`` and ``noise`` commands."""
from __future__ import annotations

import argparse
import json
import math
import sys

from ..accounting import ACCOUNTANTS, calibrate_noise_multiplier, dpsgd_epsilon
from ..accounting.accountants import pld_discretization_for
from ..defaults import DELTA
from ..verdict import ZERO_EPSILON
from . import command_help


def _positive_float(s: str) -> float:
    try:
        return float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {s!r}") from None


def _run_arguments(p, first: tuple[str, str]) -> None:
    """The flags both commands take: ``first`` (what is given: sigma or epsilon), then delta, the sampling (q and
    steps, or a batch size, a data size and epochs as Opacus takes them), the accountant and --json."""
    p.add_argument(f"--{first[0]}", type=_positive_float, required=True, help=first[1])
    p.add_argument("--delta", type=_positive_float, default=DELTA,
                   help=f"delta of (epsilon, delta)-DP (default {DELTA:g}, as on the Accountant page and in train)")
    p.add_argument("--sample-rate", type=_positive_float, default=None,
                   help="q = expected batch size / n (or give --batch-size and --dataset-size)")
    p.add_argument("--steps", type=int, default=None, help="noisy steps (or give --epochs)")
    p.add_argument("--batch-size", type=int, default=None, help="expected batch size (with --dataset-size: q)")
    p.add_argument("--dataset-size", type=int, default=None, help="training records n (with --batch-size: q)")
    p.add_argument("--epochs", type=_positive_float, default=None,
                   help="passes over the data: steps = ceil(epochs / q)")
    p.add_argument("--accountant", choices=ACCOUNTANTS, default="rdp",
                   help="rdp: Renyi DP (Mironov 2017; the moments accountant of Abadi et al. 2016), as Opacus; pld: "
                        "privacy loss distributions (tighter); both from dp_accounting (default rdp)")
    p.add_argument("--json", action="store_true", help="print the answer and its inputs as one JSON object")


def _sampling(args) -> None:
    """Fill ``args.sample_rate`` and ``args.steps`` from whichever way they were given; refuse a mix or a gap."""
    from ..exceptions import DPValueError

    if args.sample_rate is None:
        if args.batch_size is None or args.dataset_size is None:
            raise DPValueError("give --sample-rate q, or --batch-size and --dataset-size (q = batch size / n)")
        if not 1 <= args.batch_size <= args.dataset_size:
            raise DPValueError(f"--batch-size {args.batch_size} must be from 1 to --dataset-size {args.dataset_size}")
        args.sample_rate = args.batch_size / args.dataset_size
    elif args.batch_size is not None or args.dataset_size is not None:
        raise DPValueError("give --sample-rate or --batch-size with --dataset-size, not both")
    if args.steps is None:
        if args.epochs is None:
            raise DPValueError("give --steps, or --epochs (steps = ceil(epochs / q))")
        if not args.epochs > 0:
            raise DPValueError(f"--epochs must be > 0, got {args.epochs:g}")
        args.steps = math.ceil(args.epochs / args.sample_rate - 1e-9)
    elif args.epochs is not None:
        raise DPValueError("give --steps or --epochs, not both")


def add_parser(sub) -> None:
    p = sub.add_parser("epsilon", help=command_help("epsilon"))
    _run_arguments(p, ("noise-multiplier", "sigma (noise std / clip norm)"))
    p.set_defaults(func=_epsilon)
    p = sub.add_parser("noise", help=command_help("noise"))
    _run_arguments(p, ("epsilon", "target epsilon"))
    p.set_defaults(func=_noise)


def _report(args, given: str, value: float, key: str) -> int:
    """One line saying what was asked, one with the answer (the only line a script needs to read); with --json one
    object holding both."""
    if args.json:
        asked = {"target_epsilon": args.epsilon} if key == "noise_multiplier" else {
            "noise_multiplier": args.noise_multiplier}
        from . import said

        fell_back = any("comes from the RDP accountant instead" in w for w in said)
        print(json.dumps({key: value, **asked, "accountant": "rdp" if fell_back else args.accountant,
                          "delta": args.delta, "sample_rate": args.sample_rate, "steps": args.steps,
                          **({"warnings": list(dict.fromkeys(said))} if said else {})}))
        return 0
    from . import said

    fell_back = any("comes from the RDP accountant instead" in w for w in said)
    accountant = "rdp (PLD could not)" if fell_back else args.accountant
    print(f"accountant={accountant} {given} delta={args.delta} q={args.sample_rate:.6g} steps={args.steps}")
    print(f"{value:.6g}")
    return 0


#: Said on stderr when the accountant's epsilon is exactly 0 for finite noise.
ZERO_EPSILON_NOTE = "note: " + ZERO_EPSILON


def _epsilon(args) -> int:
    _sampling(args)
    eps = dpsgd_epsilon(noise_multiplier=args.noise_multiplier, sample_rate=args.sample_rate, steps=args.steps,
                        delta=args.delta, accountant=args.accountant)
    if args.accountant == "pld" and 0 < eps < 1:  # below 1, on the finer grid a run at this budget uses (`noise`)
        eps = dpsgd_epsilon(noise_multiplier=args.noise_multiplier, sample_rate=args.sample_rate, steps=args.steps,
                            delta=args.delta, accountant="pld", pld_discretization=pld_discretization_for(eps))
    if eps == 0.0 and args.steps > 0:  # no step released nothing: that 0 is exact
        print(ZERO_EPSILON_NOTE, file=sys.stderr)
    return _report(args, f"sigma={args.noise_multiplier}", eps, "epsilon")


def _noise(args) -> int:
    _sampling(args)
    grid = pld_discretization_for(args.epsilon)  # the PLD grid the training would calibrate on (DPSGDConfig)
    sigma = calibrate_noise_multiplier(target_epsilon=args.epsilon, delta=args.delta, sample_rate=args.sample_rate,
                                       steps=args.steps, accountant=args.accountant, pld_discretization=grid)
    reached = dpsgd_epsilon(noise_multiplier=sigma, sample_rate=args.sample_rate, steps=args.steps, delta=args.delta,
                            accountant=args.accountant, pld_discretization=grid)
    if reached == 0.0 and args.epsilon > 0:
        print(f"note: no smaller noise reaches epsilon {args.epsilon:g}; this sigma is where the accountant's epsilon "
              "drops to 0. " + ZERO_EPSILON_NOTE.removeprefix("note: "), file=sys.stderr)
    return _report(args, f"target epsilon={args.epsilon}", sigma, "noise_multiplier")
