"""Calibration: dpcore's one ``calibrate`` beside dp_accounting's ``calibrate_dp_mechanism`` and Opacus.

    python bench/calibration_speed.py [--repeats 3]

For each case the noise that spends the target epsilon is found three ways, from a cold
cache each time (the pages calibrate whenever a slider moves, so the first call is what a
person waits for):

* dpcore: ``dpcore.accounting.calibrate`` (Brent on log epsilon vs log noise, one RDP curve
  of dp_accounting per trial noise), through the caller's own entry point where it has one;
* dp_accounting: ``calibrate_dp_mechanism`` with a fresh accountant per trial, bracket
  ``LowerEndpointAndGuess(1e-3, 1)``, ``tol=1e-4`` (about dpcore's precision); for the PLD case
  the bracket starts at 0.5 (from 1e-3 the PLD of a tiny sigma asks for tens of GB: dpcore
  seeds its PLD search with the RDP answer for this reason);
* Opacus 1.6 (DP-SGD cases only): ``get_noise_multiplier`` (RDP, ``epsilon_tolerance=0.01``,
  its default).

The best of ``--repeats`` wall times is printed, with the noise found and the epsilon it spends
under dpcore's accountant. The machine is shared: the load average is printed, timings are noisy;
compare ratios within one run.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _cases():
    from dpcore.accounting import calibrate, calibrate_noise_multiplier, dpsgd_event
    from dpcore.federated import dp_fedavg_event, local_dp_event
    from dpcore.pate import calibrate_noise_scale, pate_event

    def dpsgd(eps, q, steps, accountant="rdp"):
        return dict(run=lambda: calibrate_noise_multiplier(target_epsilon=eps, delta=1e-5, sample_rate=q, steps=steps,
                                                           accountant=accountant),
                    event=lambda s: dpsgd_event(noise_multiplier=s, sample_rate=q, steps=steps),
                    eps=eps, accountant=accountant, opacus=(eps, q, steps) if accountant == "rdp" else None)

    return {
        "DP-SGD RDP eps=1 q=0.01 T=1000": dpsgd(1.0, 0.01, 1000),
        "DP-SGD RDP eps=0.5 q=0.04 T=2250": dpsgd(0.5, 0.04, 2250),
        "DP-SGD RDP eps=8 q=0.25 T=240": dpsgd(8.0, 0.25, 240),
        "DP-SGD PLD eps=1 q=0.02 T=500": dpsgd(1.0, 0.02, 500, "pld"),
        "DP-FedAvg RDP eps=4 q=0.2 R=50": dict(
            run=lambda: calibrate(lambda s: dp_fedavg_event(noise_multiplier=s, sample_rate=0.2, rounds=50),
                                  target_epsilon=4.0, delta=1e-5),
            event=lambda s: dp_fedavg_event(noise_multiplier=s, sample_rate=0.2, rounds=50), eps=4.0,
            accountant="rdp", opacus=None),
        "local DP eps=8, 12 updates": dict(
            run=lambda: calibrate(lambda s: local_dp_event(noise_multiplier=s, participations=12), target_epsilon=8.0,
                                  delta=1e-5, neighbouring="replace-one"),
            event=lambda s: local_dp_event(noise_multiplier=s, participations=12), eps=8.0, accountant="rdp",
            opacus=None),
        "PATE GNMax eps=5, 50 queries": dict(
            run=lambda: calibrate_noise_scale(aggregator="gnmax", target_epsilon=5.0, delta=1e-5, queries=50),
            event=lambda s: pate_event(aggregator="gnmax", noise_scale=s, queries=50), eps=5.0, accountant="rdp",
            opacus=None),
    }


def _clear_caches() -> None:
    from dpcore.accounting import ledger

    for fn in (ledger._rdp_curve, ledger._supports, ledger._poisson_gaussian_pld):
        fn.cache_clear()


def _best(fn, repeats: int) -> tuple[float, float]:
    times, value = [], None
    for _ in range(repeats):
        _clear_caches()
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return min(times), float(value)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    import dp_accounting
    from opacus.accountants.utils import get_noise_multiplier

    from dpcore.accounting import epsilon_of_event, make_accountant

    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; best of {a.repeats}, cold caches\n")
    print(f"{'case':34s} {'dpcore s':>9s} {'sigma':>9s} {'eps':>8s} | {'dp_acc s':>9s} {'sigma':>9s} "
          f"| {'opacus s':>9s} {'sigma':>9s}")
    for name, c in _cases().items():
        t_ours, s_ours = _best(c["run"], a.repeats)
        spent = epsilon_of_event(c["event"](s_ours), delta=1e-5, accountant=c["accountant"],
                                 neighbouring="replace-one" if name.startswith("local") else "add-remove")
        t_ref, s_ref = _best(lambda: dp_accounting.calibrate_dp_mechanism(
            lambda: make_accountant(c["accountant"]), c["event"], c["eps"], 1e-5,
            bracket_interval=dp_accounting.LowerEndpointAndGuess(0.5 if c["accountant"] == "pld" else 1e-3, 1.0),
            tol=1e-4), a.repeats)
        if c["opacus"]:
            eps, q, steps = c["opacus"]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t_op, s_op = _best(lambda: get_noise_multiplier(target_epsilon=eps, target_delta=1e-5, sample_rate=q,
                                                                steps=steps, accountant="rdp"), a.repeats)
            op = f"{t_op:9.3f} {s_op:9.5f}"
        else:
            op = f"{'—':>9s} {'—':>9s}"
        print(f"{name:34s} {t_ours:9.3f} {s_ours:9.5f} {spent:8.5f} | {t_ref:9.3f} {s_ref:9.5f} | {op}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
