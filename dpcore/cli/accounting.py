"""``epsilon`` and ``noise`` commands."""
from __future__ import annotations

import argparse
import sys

from ..accounting import ACCOUNTANTS, calibrate_noise_multiplier, dpsgd_epsilon
from ..defaults import DELTA
from ..verdict import ZERO_EPSILON
from . import command_help


def _positive_float(s: str) -> float:
    try:
        return float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {s!r}") from None


def _run_arguments(p, first: tuple[str, str]) -> None:
    """The flags both commands take: ``first`` (what is given: sigma or epsilon), then delta, q, steps, accountant."""
    p.add_argument(f"--{first[0]}", type=_positive_float, required=True, help=first[1])
    p.add_argument("--delta", type=_positive_float, default=DELTA,
                   help=f"delta of (epsilon, delta)-DP (default {DELTA:g}, as on the Accountant page and in train)")
    p.add_argument("--sample-rate", type=_positive_float, required=True, help="q = expected batch size / n")
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--accountant", choices=ACCOUNTANTS, default="rdp")


def add_parser(sub) -> None:
    p = sub.add_parser("epsilon", help=command_help("epsilon"))
    _run_arguments(p, ("noise-multiplier", "sigma (noise std / clip norm)"))
    p.set_defaults(func=_epsilon)
    p = sub.add_parser("noise", help=command_help("noise"))
    _run_arguments(p, ("epsilon", "target epsilon"))
    p.set_defaults(func=_noise)


def _report(args, given: str, value: float) -> int:
    """One line saying what was asked, one with the answer (the only line a script needs to read)."""
    print(f"accountant={args.accountant} {given} delta={args.delta} q={args.sample_rate} steps={args.steps}")
    print(f"{value:.6g}")
    return 0


#: Said on stderr when the accountant's epsilon is exactly 0 for finite noise.
ZERO_EPSILON_NOTE = "note: " + ZERO_EPSILON


def _epsilon(args) -> int:
    eps = dpsgd_epsilon(noise_multiplier=args.noise_multiplier, sample_rate=args.sample_rate, steps=args.steps,
                        delta=args.delta, accountant=args.accountant)
    if eps == 0.0 and args.steps > 0:  # no step released nothing: that 0 is exact
        print(ZERO_EPSILON_NOTE, file=sys.stderr)
    return _report(args, f"sigma={args.noise_multiplier}", eps)


def _noise(args) -> int:
    sigma = calibrate_noise_multiplier(target_epsilon=args.epsilon, delta=args.delta, sample_rate=args.sample_rate,
                                       steps=args.steps, accountant=args.accountant)
    reached = dpsgd_epsilon(noise_multiplier=sigma, sample_rate=args.sample_rate, steps=args.steps, delta=args.delta,
                            accountant=args.accountant)
    if reached == 0.0 and args.epsilon > 0:
        print(f"note: no smaller noise reaches epsilon {args.epsilon:g}; this sigma is where the accountant's epsilon "
              "drops to 0. " + ZERO_EPSILON_NOTE.removeprefix("note: "), file=sys.stderr)
    return _report(args, f"target epsilon={args.epsilon}", sigma)
