"""Speed of the federated trainers and of PATE's teachers on MNIST 5k.

Prints two tables:

1. Federated averaging: seconds per round of this project's batched trainer (every
   sampled client's local SGD in one batched torch computation) against a reference
   written the usual way (a Python loop over clients, each with its own nn.Linear and
   torch.optim.SGD, then the same clipping and server noise), same data, same local
   epochs / batch size; plus the wall time of a whole 20-client, 30-round DP-FedAvg
   run (calibration of sigma to a target epsilon and the per-round accounting included).
2. PATE: seconds per teacher (logistic regression and the small MLP) with one BLAS
   thread per fit, as dpcore does, against scikit-learn's default threading; and the
   time of the aggregation + data-independent + data-dependent accounting.

Run: python bench/federated_pate_speed.py [--rounds 30] [--teachers 50]
The machine is shared: timings are noisy; compare the ratios of the same run.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from dpcore.datasets import train_test_split  # noqa: E402
from dpcore.datasets.transforms import scale_to_unit_interval  # noqa: E402
from dpcore.federated import FedAvgConfig, partition_clients, train_fedavg_split  # noqa: E402


def reference_fedavg(split, *, clients, rounds, q, clip, sigma, lr, batch, seed=0) -> tuple[float, float]:
    """A straightforward per-client loop (the reference): returns (seconds per round, final accuracy)."""
    X = torch.tensor(scale_to_unit_interval(split.X_train, split.dataset.bounds), dtype=torch.float32)
    y = torch.tensor(np.asarray(split.y_train))
    Xv = torch.tensor(scale_to_unit_interval(split.X_test, split.dataset.bounds), dtype=torch.float32)
    yv = torch.tensor(np.asarray(split.y_test))
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    shards = partition_clients(np.asarray(split.y_train), clients=clients, rng=rng)
    glob = torch.nn.Linear(X.shape[1], 10)
    torch.nn.init.zeros_(glob.weight), torch.nn.init.zeros_(glob.bias)
    t0 = time.perf_counter()
    for _ in range(rounds):
        total = [torch.zeros_like(p) for p in glob.parameters()]
        for k in np.flatnonzero(rng.random(clients) < q):
            local = torch.nn.Linear(X.shape[1], 10)
            local.load_state_dict(glob.state_dict())
            opt = torch.optim.SGD(local.parameters(), lr=lr)
            idx = rng.permutation(shards[k])
            for s in range(0, idx.size, batch):
                b = idx[s:s + batch]
                opt.zero_grad()
                torch.nn.functional.cross_entropy(local(X[b]), y[b]).backward()
                opt.step()
            upd = [lp.detach() - gp.detach() for lp, gp in zip(local.parameters(), glob.parameters())]
            norm = math.sqrt(sum(float((u**2).sum()) for u in upd))
            f = min(1.0, clip / max(norm, 1e-12))
            total = [t + f * u for t, u in zip(total, upd)]
        with torch.no_grad():
            for p, t in zip(glob.parameters(), total):
                p += (t + torch.normal(0.0, sigma * clip, size=t.shape, generator=gen)) / (q * clients)
    per_round = (time.perf_counter() - t0) / rounds
    with torch.no_grad():
        acc = float((glob(Xv).argmax(1) == yv).float().mean())
    return per_round, acc


def bench_federated(split, rounds: int) -> None:
    print(f"\n== Federated averaging on mnist5k: 20 clients, q = 0.5, {rounds} rounds, 1 local epoch, batch 32 ==")
    print(f"{'implementation':<52}{'s/round':>10}{'accuracy':>10}{'total s':>10}")
    sigma = 1.0
    for mode in ("none", "central", "local"):
        cfg = FedAvgConfig(mode=mode, clients=20, rounds=rounds, client_fraction=0.5, clip_norm=1.0,
                           noise_multiplier=None if mode == "none" else sigma, learning_rate=0.5)
        t = time.perf_counter()
        r = train_fedavg_split(split, cfg)
        total = time.perf_counter() - t
        print(f"{'dpcore batched, mode=' + mode:<52}{r.seconds_per_round:>10.4f}{r.accuracy:>10.3f}{total:>10.2f}")
    with torch.random.fork_rng():
        torch.set_num_threads(1)
        per, acc = reference_fedavg(split, clients=20, rounds=rounds, q=0.5, clip=1.0, sigma=sigma, lr=0.5, batch=32)
    print(f"{'reference: Python loop over clients (central DP)':<52}{per:>10.4f}{acc:>10.3f}{per * rounds:>10.2f}")
    t = time.perf_counter()
    r = train_fedavg_split(split, FedAvgConfig(mode="central", clients=20, rounds=30, client_fraction=0.5,
                                               clip_norm=1.0, target_epsilon=5.0))
    whole = time.perf_counter() - t
    print(f"\n20-client, 30-round DP-FedAvg on mnist5k, sigma calibrated to eps=5 (delta=1e-5): {whole:.2f} s wall "
          f"({r.seconds_per_round * 1000:.1f} ms/round training; sigma={r.noise_multiplier:.3f}, "
          f"accuracy {r.accuracy:.3f}, eps {r.epsilon:.3f})")


def bench_pate(split, teachers: int) -> None:
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    from dpcore.pate import PateConfig, pate_split, run_pate
    from dpcore.pate.teachers import partition_indices

    print(f"\n== PATE on mnist5k: {teachers} teachers, 100 queries ==")
    print(f"{'step':<60}{'s/teacher':>12}{'total s':>10}")
    d = pate_split(split, seed=0)
    for model in ("logreg", "mlp"):
        t = time.perf_counter()
        r = run_pate(d, PateConfig(teachers=teachers, queries=100, target_epsilon=10.0, teacher_model=model,
                                   student_model=model, baseline=False, data_dependent=True))
        total = time.perf_counter() - t
        print(f"{'dpcore teachers (' + model + ', 1 BLAS thread per fit)':<60}{r.teacher_seconds:>12.4f}{total:>10.2f}"
              f"   student acc {r.student_accuracy:.3f}, eps {r.epsilon:.2f} "
              f"(data-dependent {r.epsilon_data_dependent:.2f})")
    parts = partition_indices(d.y_private.size, teachers, rng=0)
    with threadpool_limits(limits=None):
        t = time.perf_counter()
        for p in parts:
            LogisticRegression(max_iter=200).fit(d.X_private[p], d.y_private[p])
        ref = (time.perf_counter() - t) / teachers
    print(f"{'reference: scikit-learn LogisticRegression, default threading':<60}{ref:>12.4f}{ref * teachers:>10.2f}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--teachers", type=int, default=50)
    a = ap.parse_args()
    split = train_test_split("mnist5k", seed=0)
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs (shared with other work: timings are noisy)")
    bench_federated(split, a.rounds)
    bench_pate(split, a.teachers)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
