"""``epsilon`` and ``noise`` commands."""
from __future__ import annotations

import argparse
import math
import sys

from ..accounting import ACCOUNTANTS, DEFAULT_ACCOUNTANT, calibrate_noise_multiplier, dpsgd_accounting, steps_for
from ..accounting.accountants import pld_discretization_for
from ..accounting.calibration import NOISE_SEARCH_RANGE
from ..defaults import DELTA
from ..teaching.verdict import round_epsilon, zero_epsilon_note
from ..validation import check_epsilon
from . import JSON_CONVENTION, command_help, print_json, said


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
    p.add_argument("--accountant", choices=ACCOUNTANTS, default=DEFAULT_ACCOUNTANT,
                   help="rdp: Renyi DP (Mironov 2017; the moments accountant of Abadi et al. 2016), as Opacus; pld: "
                        f"privacy loss distributions (tighter); both from dp_accounting (default {DEFAULT_ACCOUNTANT}, "
                        "as on the Accountant page)")
    p.add_argument("--json", action="store_true", help="print the answer and its inputs as one JSON object ("
                   + JSON_CONVENTION.removeprefix("--json prints ") + ")")


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
        passes = args.epochs / args.sample_rate
        if not math.isfinite(passes):  # ceil of infinity raised an OverflowError
            raise DPValueError(f"--epochs {args.epochs:g} at q = {args.sample_rate:g} is more noisy steps than can be "
                               "counted; give fewer --epochs (or --steps)")
        if passes <= 1e-9:  # no whole step: steps_for would count it as the one step a run takes at least
            raise DPValueError(f"--epochs {args.epochs:g} at q = {args.sample_rate:g} is less than one noisy step; "
                               "give more --epochs (or --steps)")
        args.steps = steps_for(epochs=args.epochs, sample_rate=args.sample_rate)  # as training takes them
    elif args.epochs is not None:
        raise DPValueError("give --steps or --epochs, not both")
    elif args.steps < 1:  # no step trains nothing and releases nothing: no run to account (noise has none to
        # calibrate either), so both commands refuse it rather than one printing epsilon 0
        raise DPValueError(f"--steps must be at least 1 (the noisy steps of the run), got {args.steps}")


def add_parser(sub) -> None:
    p = sub.add_parser("epsilon", help=command_help("epsilon"))
    _run_arguments(p, ("noise-multiplier", "sigma (noise std / clip norm)"))
    p.set_defaults(func=_epsilon)
    p = sub.add_parser("noise", help=command_help("noise"))
    _run_arguments(p, ("epsilon", "target epsilon"))
    p.set_defaults(func=_noise)


def _report(args, given: str, value: float, key: str, *, accountant: str, extra: dict | None = None) -> int:
    """One line saying what was asked, one with the answer (the only line a script needs to read); with --json one
    object holding both (strict JSON: an infinite epsilon is "inf"). ``accountant`` is the one that answered."""
    from . import said

    if args.json:
        asked = {"target_epsilon": args.epsilon} if key == "noise_multiplier" else {
            "noise_multiplier": args.noise_multiplier}
        print_json({key: value, **asked, **(extra or {}), "accountant": accountant, "delta": args.delta,
                    "sample_rate": args.sample_rate, "steps": args.steps,
                    **({"warnings": list(dict.fromkeys(said))} if said else {})})
        return 0
    shown = "rdp (PLD could not)" if accountant != args.accountant else accountant
    print(f"accountant={shown} {given} delta={args.delta} q={args.sample_rate:.6g} steps={args.steps}")
    # both round up at the 6 figures shown (round_epsilon): an epsilon spent is never printed below the one computed,
    # and a calibrated sigma never below the noise that meets the target (30.7751 for 30.77514... spent 0.10000015
    # where 0.1 was asked, and `epsilon` given it said so)
    print(f"{round_epsilon(value, 6):.6g}")
    return 0


#: Said on stderr when the epsilon is infinite: the accountant can state no guarantee for this noise.
INFINITE_EPSILON_NOTE = ("note: epsilon is infinite: with this little noise the accountant can state no privacy "
                         "guarantee (or cannot compute one in double precision); use a larger --noise-multiplier")


def _epsilon(args) -> int:
    _sampling(args)
    run = dict(noise_multiplier=args.noise_multiplier, sample_rate=args.sample_rate, steps=args.steps,
               delta=args.delta)
    warned = len(said)
    eps, used = dpsgd_accounting(**run, accountant=args.accountant)
    if used == "pld" and 0 < eps < 1:  # below 1, on the finer grid a run at this budget uses (`noise`)
        eps, used = dpsgd_accounting(**run, accountant="pld", pld_discretization=pld_discretization_for(eps))
    if eps == 0.0:  # finite noise whose epsilon underflowed (steps >= 1: _sampling); why, by the accountant used
        print("note: " + zero_epsilon_note(used), file=sys.stderr)
    elif math.isinf(eps) and len(said) == warned:  # said once: the accountant's own warning says why, if it gave one
        print(INFINITE_EPSILON_NOTE, file=sys.stderr)
    return _report(args, f"sigma={args.noise_multiplier}", eps, "epsilon", accountant=used)


def _noise(args) -> int:
    check_epsilon(args.epsilon, "--epsilon")  # the refusal names this command's flag, not calibration's target_epsilon
    _sampling(args)
    grid = pld_discretization_for(args.epsilon)  # the PLD grid the training would calibrate on (DPSGDConfig)
    sigma = calibrate_noise_multiplier(target_epsilon=args.epsilon, delta=args.delta, sample_rate=args.sample_rate,
                                       steps=args.steps, accountant=args.accountant, pld_discretization=grid)
    reached, used = dpsgd_accounting(noise_multiplier=sigma, sample_rate=args.sample_rate, steps=args.steps,
                                     delta=args.delta, accountant=args.accountant, pld_discretization=grid)
    if reached == 0.0 and args.epsilon > 0:
        print(f"note: no smaller noise reaches epsilon {args.epsilon:g}; this sigma is where the accountant's epsilon "
              "drops to 0. " + zero_epsilon_note(used), file=sys.stderr)
    return _report(args, f"target epsilon={args.epsilon}", sigma, "noise_multiplier", accountant=used,
                   extra={"epsilon_spent": reached, "at_search_bound": sigma <= NOISE_SEARCH_RANGE[0]})
