"""``audit`` command: attack a learner trained for real and bound its epsilon from below.

``python -m dpcore audit --dataset digits --algorithm dpsgd --epsilon 1 --attack loss --seed 0 --json``
prints, on its last line, a JSON object with ``epsilon`` (claimed), ``epsilon_lower_bound``,
``confidence``, ``auc``, ``tpr_at_fpr`` (keyed "0.001", "0.01") and its interval at that confidence, ``attack``,
``n_members``, ``n_nonmembers``, ``model_accuracy`` and ``seconds``. With the default attack (mislabelled
canaries in the full training set, as on the Attack page) a private learner's non-private twin is attacked on the
same canaries too, under ``contrast`` (``--no-contrast`` skips it).
"""
from __future__ import annotations

import contextlib
import re
import sys

from ..audit import DEFAULT_POOL_SIZE, MIN_POOL_SIZE, pool_capacity
from ..audit.canaries import DEFAULT_CANARIES
from ..audit.membership import LIRA_OWN_VARIANCE_SHADOWS
from ..audit.run import (
    AUDIT_KINDS,
    DEFAULT_ATTACK,
    DEFAULT_CONFIDENCE,
    DEFAULT_SHADOWS,
    STORY_CANARIES,
    contrast_learner,
    run_audit,
)
from ..defaults import DELTA, EPSILON, LEARNER
from ..exceptions import DPValueError
from ..rng import noise_mode
from . import JSON_HELP, command_help, print_json
from .data import add_data_flags, add_noise_flags, dataset_from_args, noise_from_args
from .train import parse_set, text_line


def add_parser(sub) -> None:
    p = sub.add_parser(
        "audit", help=command_help("audit"),
        description="Train a registered learner for real, attack it, and print what the attack certifies: a "
                    "lower bound on epsilon at the given confidence beside the epsilon the learner claims.")
    add_data_flags(p)
    p.add_argument("--algorithm", default=LEARNER,
                   help=f"learner name (default {LEARNER}, as on the Attack page; python -m dpcore train --list)")
    p.add_argument("--epsilon", type=float, default=EPSILON,
                   help=f"the learner's privacy budget (default {EPSILON:g} for every learner, as on the Attack page)")
    p.add_argument("--delta", type=float, default=DELTA, help=f"delta of (epsilon, delta)-DP (default {DELTA:g})")
    p.add_argument("--attack", choices=AUDIT_KINDS, default=DEFAULT_ATTACK,
                   help="canaries: mislabelled canaries in the full training set, scored by their loss (default, as "
                        "on the Attack page); loss: loss threshold on models trained on half a pool (Yeom et al. "
                        "2018); lira / lira-offline: likelihood ratio with shadow models (Carlini et al. 2022); "
                        "one-run: gradient or input canaries in one training run (Steinke et al. 2023)")
    p.add_argument("--no-contrast", action="store_true",
                   help="with --attack canaries: do not also attack the learner's non-private twin")
    p.add_argument("--shadows", type=int, default=None,
                   help=f"LiRA's shadow models, an even number from 4 to 256 (default {DEFAULT_SHADOWS}, as on the "
                        f"Attack page); from {LIRA_OWN_VARIANCE_SHADOWS} on, each record's IN and OUT variances are "
                        "its own, not pooled "
                        "(Carlini et al. 2022)")
    p.add_argument("--canaries", type=int, default=None,
                   help=f"canaries (--attack canaries: default {STORY_CANARIES}, at most 40%% of the test rows; "
                        f"one-run: default {DEFAULT_CANARIES}, input canaries at most one per test row)")
    p.add_argument("--canary-kind", choices=("gradient", "input"), default=None,
                   help="one-run canaries: gradient (white-box, DP-SGD; its default) or input (mislabelled "
                        "records, any learner)")
    p.add_argument("--pool-size", type=int, default=None,
                   help=f"records in the membership attacker's pool, half of them members (default "
                        f"{DEFAULT_POOL_SIZE}, as on the Attack page; at least {MIN_POOL_SIZE}; a pool larger than "
                        "the training rows holds them all)")
    p.add_argument("--confidence", type=float, default=DEFAULT_CONFIDENCE,
                   help=f"confidence of the lower bound (default {DEFAULT_CONFIDENCE:g}, as on the Attack page)")
    add_noise_flags(p, seed_help="seed of the split, the membership coins and the noise")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a learner knob (repeatable)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=_run)


#: The flags that only some attacks read, and those attacks.
_ATTACK_FLAGS = {"shadows": ("lira", "lira-offline"), "canaries": ("canaries", "one-run"),
                 "canary_kind": ("one-run",),
                 "pool_size": ("loss", "lira", "lira-offline")}


def _refuse_unused_flags(args) -> None:
    for key, attacks in _ATTACK_FLAGS.items():
        if getattr(args, key) is not None and args.attack not in attacks:
            flag = "--" + key.replace("_", "-")
            raise DPValueError(f"{flag} is read by the {' and '.join(attacks)} attack(s), not by --attack "
                               f"{args.attack}; drop it or choose --attack {attacks[0]}")


@contextlib.contextmanager
def _settings_named_by_their_flags():
    """The library's refusals of ``canaries``, ``shadows`` and ``pool_size`` (too many or too few for the data),
    naming the flags --canaries, --shadows and --pool-size as the user typed them."""
    try:
        yield
    except DPValueError as exc:
        text = re.sub(r"\b(?<!-)(canaries|shadows) (must|\d)", r"--\1 \2", str(exc))
        if text == str(exc) and "pool_size" not in text:
            raise
        raise DPValueError(re.sub(r"\bpool_size\b", "--pool-size", text)) from None


def _run(args) -> int:
    _refuse_unused_flags(args)

    def progress(info):
        if not args.json:
            print(f"{info['stage']}: {info['done']}/{info['total']}", file=sys.stderr)

    given = {key: getattr(args, key) for key in _ATTACK_FLAGS if getattr(args, key) is not None}
    if args.attack in _ATTACK_FLAGS["pool_size"]:
        given.setdefault("pool_size", DEFAULT_POOL_SIZE)  # the page's default pool, so both give the same audit
    data = dataset_from_args(args)
    if "pool_size" in given and given["pool_size"] > (capacity := pool_capacity(data)):
        if args.pool_size is not None:  # said only when asked for: the default pool is capped without a word
            print(f"note: --pool-size {args.pool_size} is more than the {capacity} training rows; the pool holds "
                  f"all {capacity} (about half of them members)", file=sys.stderr)
        given["pool_size"] = capacity
    seed, secure = noise_from_args(args)
    # secure mode: the trained models' noise, batches and coins from the OS (the attack's own coins are seed 0)
    twin = contrast_learner(args.algorithm) if args.attack == "canaries" and not args.no_contrast else None
    with noise_mode(secure), _settings_named_by_their_flags():
        audit = run_audit(args.algorithm, data, epsilon=args.epsilon, delta=args.delta, attack=args.attack,
                          params=parse_set(args.set), confidence=args.confidence, seed=seed or 0,
                          on_progress=progress, **given)
        # the same canaries and coins (the same seed), the twin trained as without privacy (run_audit's default)
        other = None if twin is None else run_audit(twin, data, epsilon=args.epsilon, delta=args.delta,
                                                     attack=args.attack, confidence=args.confidence, seed=seed or 0,
                                                     on_progress=progress, **given)
    # the attacked model's accuracy on records it never saw: a model that learnt nothing has nothing to leak, so a
    # lower bound of 0 there says nothing about what epsilon protects (the Attack page says the same)
    out = {"learner": audit.learner, "dataset": audit.dataset, **audit.result.to_json_dict(),
           "model_accuracy": audit.target_accuracy, **_balanced(audit), "seed": seed,
           "noise": "secure" if secure else "seeded"}
    if other is not None:
        out["contrast"] = {"learner": other.learner, **other.result.to_json_dict(),
                           "model_accuracy": other.target_accuracy, **_balanced(other)}
    from ..teaching.verdict import confidence_text, epsilon_text
    from . import said

    if not audit.result.epsilon_lower_bound > 0:  # the Attack page's "could not prove any leak", said here too
        note = (f"epsilon_lower_bound 0 means this attack proved no leak at {confidence_text(out['confidence'])} "
                "confidence; it does not show the model is safe (a stronger attack, more canaries or a larger pool "
                "may prove more), and against a non-private model it says the attack was too weak (on these "
                f"{out['n_members'] + out['n_nonmembers']:,} records the most any attack can prove is "
                f"{epsilon_text(out['most_provable'])}: most_provable)")
        print(f"note: {note}", file=sys.stderr)
        said.append(note)  # in the JSON's warnings too, for a script that reads only the JSON

    if said:  # what stderr said, for a script that reads only the JSON
        out["warnings"] = list(dict.fromkeys(said))
    if args.json:
        print_json(out)
    else:
        for k, v in out.items():
            if v != "":  # claim_note is empty where the claim is the run's own epsilon: no line for it
                print(text_line(k, v))
    return 0


def _balanced(audit) -> dict:
    """``model_balanced_accuracy`` where the audit measured it (input canaries: on the same unseen rows as
    ``model_accuracy``, by the same answers; with declared class shares, the answers follow them)."""
    value = getattr(audit, "balanced_accuracy", None)
    return {} if value is None else {"model_balanced_accuracy": value}
