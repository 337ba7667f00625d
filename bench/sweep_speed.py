"""DP-SGD sweep on MNIST 5k (8 epsilons x 3 seeds): dpcore's sweep engine, cold and cached, beside Opacus.

    python bench/sweep_speed.py [--model mlp] [--jobs 2] [--opacus-runs 24] [--epsilons 8] [--seeds 3]

dpcore: ``run_sweep`` over the registered ``dpsgd`` learner, 2 worker processes
with one thread each (the default), into a fresh temporary cache ("cold"), then
the same sweep again ("cached reopen": every run read back from disk).

Opacus 1.6 runs the same runs one after the other in this process (torch using
every core): the same split (``train_test_split(seed)``), the same features
(whatever the dpsgd learner's preset computes: HOG for mnist5k), the same model (``dpcore.training.models.build_model``
with the dpsgd learner's preset for mnist5k, or ``--model``), the same Poisson
sample rate, epochs, learning rate, momentum and clip norm, and sigma from
``make_private_with_epsilon`` (Opacus's own RDP accountant) for each target epsilon.
Opacus has no parameter averaging (dpsgd's preset uses an EMA of the iterates), so
accuracies are indicative; the comparison is wall time. ``--opacus-runs N`` times
only the first N of the 24 runs and extrapolates to all 24; the table says so.

The machine is shared: the load average is printed, and timings are noisy.
Targets: cold sweep <= 20 s, cached reopen <= 0.3 s.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys
import tempfile
import time
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

COLD_TARGET, CACHED_TARGET = 20.0, 0.3
ALPHAS = [1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [80, 128, 256, 512, 1024]


def _split(name: str):
    from dpcore.datasets import train_test_split

    return train_test_split(name)


def _dpsgd_settings(split, model: str | None) -> dict:
    """The dpsgd learner's preset for this split, as plain settings (model overridable)."""
    from dpcore.training.presets import preset_for

    pre = preset_for(split.dataset)
    n = split.X_train.shape[0]
    return dict(model=model or pre.model, hidden=pre.hidden, activation=pre.activation, epochs=pre.epochs,
                batch_size=pre.batch_size(n), learning_rate=pre.learning_rate, momentum=pre.momentum,
                clip_norm=pre.clip_norm)


def opacus_run(epsilon: float, seed: int, *, delta: float, model: str | None, epochs: int | None) -> dict:
    """One DP-SGD run with Opacus on the same split, features, model and hyper-parameters as dpsgd."""
    import torch
    from opacus import PrivacyEngine
    from opacus.accountants.utils import get_noise_multiplier
    from torch.utils.data import DataLoader, TensorDataset

    from dpcore.datasets import train_test_split
    from dpcore.training.learners import _features
    from dpcore.training.models import build_model

    t0 = time.perf_counter()
    split = train_test_split("mnist5k", seed=seed)
    s = _dpsgd_settings(split, model)
    if epochs is not None:
        s["epochs"] = epochs
    feats_tr, feats_te, image_shape = _features(split, {"model": s["model"]})  # the dpsgd learner's own features
    X_tr = torch.from_numpy(np.ascontiguousarray(feats_tr, dtype=np.float32))
    X_te = torch.from_numpy(np.ascontiguousarray(feats_te, dtype=np.float32))
    y_tr = torch.from_numpy(np.array(split.y_train, dtype=np.int64))
    net = build_model(s["model"], n_features=X_tr.shape[1], n_outputs=10, hidden=s["hidden"],
                      activation=s["activation"], image_shape=image_shape, seed=seed)
    opt = torch.optim.SGD(net.parameters(), lr=s["learning_rate"], momentum=s["momentum"])
    gen = torch.Generator().manual_seed(seed)
    loader = DataLoader(TensorDataset(X_tr, y_tr), batch_size=s["batch_size"], generator=gen)
    engine = PrivacyEngine(accountant="rdp")
    q = s["batch_size"] / X_tr.shape[0]
    steps = int(s["epochs"] / q)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Opacus's default RDP orders stop at 63, which cannot certify epsilon below ~log(1/delta)/62;
        # its own calibration with a wider list of orders reaches every epsilon of the sweep.
        sigma = get_noise_multiplier(target_epsilon=epsilon, target_delta=delta, sample_rate=q, steps=steps,
                                     accountant="rdp", alphas=ALPHAS)
        net, opt, loader = engine.make_private(
            module=net, optimizer=opt, data_loader=loader, noise_multiplier=sigma,
            max_grad_norm=s["clip_norm"], poisson_sampling=True, noise_generator=gen)
        loss_fn = torch.nn.CrossEntropyLoss()
        net.train()
        for _ in range(s["epochs"]):
            for xb, yb in loader:
                if len(xb) == 0:
                    continue
                opt.zero_grad()
                loss_fn(net(xb), yb).backward()
                opt.step()
        net.eval()
        with torch.no_grad():
            pred = net(X_te).argmax(1).numpy()
        eps_spent = engine.accountant.get_epsilon(delta, alphas=ALPHAS)
    return {"accuracy": float(np.mean(pred == split.y_test)), "epsilon": float(eps_spent),
            "sigma": float(opt.noise_multiplier), "seconds": time.perf_counter() - t0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=None, help="linear / mlp (default: the dpsgd preset for mnist5k)")
    ap.add_argument("--epochs", type=int, default=None, help="override the preset's epochs (both libraries)")
    ap.add_argument("--epsilons", type=int, default=8, help="log-spaced epsilons from 0.1 to 10")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--jobs", type=int, default=2, help="dpcore worker processes")
    ap.add_argument("--opacus-runs", type=int, default=None,
                    help="time only this many Opacus runs and extrapolate to all (default: all)")
    args = ap.parse_args()

    from dpcore.learners import learners
    from dpcore.sweep import SweepConfig, run_sweep, value_range

    if "dpsgd" not in learners():
        print("the 'dpsgd' learner is not registered (dpcore.training missing?); nothing to time", file=sys.stderr)
        return 1
    params = {k: v for k, v in (("model", args.model), ("epochs", args.epochs)) if v is not None}
    eps = value_range("epsilon", 0.1, 10.0, args.epsilons)
    cfg = SweepConfig(dataset="mnist5k", learners=["dpsgd"], values=eps, seeds=args.seeds, delta=args.delta,
                      params=params, include_baselines=False)
    n_runs = len(cfg.runs())
    print(f"# DP-SGD on mnist5k: {len(eps)} epsilons x {args.seeds} seeds = {n_runs} runs; "
          f"settings {_dpsgd_settings(_split('mnist5k'), args.model) | params}")
    print(f"# load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores "
          "(machine shared: timings are noisy)")

    with tempfile.TemporaryDirectory() as cache:
        t0 = time.perf_counter()
        cold = run_sweep(cfg, n_jobs=args.jobs, cache_dir=cache,
                         on_result=lambda p: print(f"  {p.done}/{p.total} eps={p.row['value']:g} seed={p.row['seed']} "
                                                   f"acc={p.row['accuracy']:.3f} ({p.row['seconds']:.1f} s)",
                                                   file=sys.stderr))
        t_cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        cached = run_sweep(cfg, n_jobs=args.jobs, cache_dir=cache)
        t_cached = time.perf_counter() - t0
        assert cached.n_computed == 0
        # the engine's own cost: the same grid of trivial runs, on the now-warm worker pool
        trivial = SweepConfig(dataset="mnist5k", learners=["majority"], axis="train_fraction",
                              values=value_range("train_fraction", 0.3, 1.0, len(eps)), seeds=args.seeds,
                              include_baselines=False)
        t0 = time.perf_counter()
        run_sweep(trivial, n_jobs=args.jobs, cache_dir=cache)
        t_trivial = time.perf_counter() - t0
    run_sum = float(cold.table.seconds.sum())

    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    todo = [(e, s) for s in cfg.seed_list for e in eps]
    k = len(todo) if args.opacus_runs is None else max(1, min(args.opacus_runs, len(todo)))
    op = []
    t0 = time.perf_counter()
    for e, s in todo[:k]:
        r = opacus_run(e, s, delta=args.delta, model=args.model, epochs=args.epochs)
        print(f"  opacus eps={e:g} seed={s} acc={r['accuracy']:.3f} eps_spent={r['epsilon']:.3g} "
              f"({r['seconds']:.1f} s)", file=sys.stderr)
        op.append(r)
    t_op = time.perf_counter() - t0
    t_op_all = t_op * len(todo) / k
    dp_acc = cold.table.accuracy.mean()
    op_acc = float(np.mean([r["accuracy"] for r in op]))
    dp_acc_same = cold.table.set_index(["value", "seed"]).loc[[(e, s) for e, s in todo[:k]]].accuracy.mean()

    print()
    print(f"{'what':50s} {'runs':>5s} {'wall s':>9s} {'s/run':>7s} {'mean acc':>9s}")
    print(f"{'dpcore run_sweep, cold (' + str(args.jobs) + ' processes)':50s} {n_runs:5d} {t_cold:9.2f} "
          f"{t_cold / n_runs:7.2f} {dp_acc:9.3f}")
    print(f"{'dpcore run_sweep, cached reopen':50s} {n_runs:5d} {t_cached:9.3f} {t_cached / n_runs:7.4f} {dp_acc:9.3f}")
    print(f"{'dpcore engine overhead: trivial runs, warm pool':50s} {n_runs:5d} {t_trivial:9.2f} "
          f"{t_trivial / n_runs:7.3f} {'':>9s}")
    label = f"Opacus 1.6, sequential, {k} of {len(todo)} runs timed"
    print(f"{label:50s} {k:5d} {t_op:9.2f} {t_op / k:7.2f} {op_acc:9.3f}")
    if k < len(todo):
        print(f"{'Opacus, EXTRAPOLATED to all ' + str(len(todo)) + ' runs':50s} {len(todo):5d} {t_op_all:9.2f} "
              f"{t_op / k:7.2f} {'':>9s}")
    print()
    print(f"dpcore on the same {k} run(s): mean accuracy {dp_acc_same:.3f} (Opacus {op_acc:.3f}); "
          f"sum of dpcore's per-run seconds {run_sum:.1f} s, i.e. {run_sum / args.jobs:.1f} s of the cold wall "
          f"time is training split over {args.jobs} processes, the rest is worker start-up and dispatch")
    print(f"Opacus / dpcore cold wall time: {t_op_all / t_cold:.1f}x"
          + (" (Opacus extrapolated)" if k < len(todo) else ""))
    print(f"target cold <= {COLD_TARGET:g} s: {'met' if t_cold <= COLD_TARGET else 'NOT met'} ({t_cold:.1f} s); "
          f"target cached <= {CACHED_TARGET:g} s: {'met' if t_cached <= CACHED_TARGET else 'NOT met'} "
          f"({t_cached:.3f} s)")
    print(f"# load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
