"""``epsilon`` and ``noise`` commands."""
from __future__ import annotations

import argparse

from ..accounting import ACCOUNTANTS, calibrate_noise_multiplier, dpsgd_epsilon


def _positive_float(s: str) -> float:
    try:
        return float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {s!r}") from None


def add_parser(sub) -> None:
    p = sub.add_parser("epsilon", help="epsilon spent by DP-SGD (Poisson-subsampled Gaussian)")
    p.add_argument("--noise-multiplier", type=_positive_float, required=True, help="sigma (noise std / clip norm)")
    p.add_argument("--sample-rate", type=_positive_float, required=True, help="q = expected batch size / n")
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--delta", type=_positive_float, required=True)
    p.add_argument("--accountant", choices=ACCOUNTANTS, default="rdp")
    p.set_defaults(func=_epsilon)

    p = sub.add_parser("noise", help="noise multiplier needed for a target epsilon")
    p.add_argument("--epsilon", type=_positive_float, required=True)
    p.add_argument("--delta", type=_positive_float, required=True)
    p.add_argument("--sample-rate", type=_positive_float, required=True)
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--accountant", choices=ACCOUNTANTS, default="rdp")
    p.set_defaults(func=_noise)


def _epsilon(args) -> int:
    eps = dpsgd_epsilon(
        noise_multiplier=args.noise_multiplier,
        sample_rate=args.sample_rate,
        steps=args.steps,
        delta=args.delta,
        accountant=args.accountant,
    )
    print(
        f"accountant={args.accountant} sigma={args.noise_multiplier} q={args.sample_rate} "
        f"steps={args.steps} delta={args.delta}"
    )
    print(f"{eps:.6g}")
    return 0


def _noise(args) -> int:
    sigma = calibrate_noise_multiplier(
        target_epsilon=args.epsilon,
        delta=args.delta,
        sample_rate=args.sample_rate,
        steps=args.steps,
        accountant=args.accountant,
    )
    print(
        f"accountant={args.accountant} target epsilon={args.epsilon} delta={args.delta} "
        f"q={args.sample_rate} steps={args.steps}"
    )
    print(f"{sigma:.6g}")
    return 0
