"""DP-SGD on the CNN under the memory settings the command line and the app apply, each in fresh processes, one run.

The command line and the app set two things about memory before any work (:mod:`dpcore.runtime.memory`): torch's
huge pages for tensors of 2 MB or more (``THP_MEM_ALLOC_ENABLE=1``) and the C library's allocator keeping freed
memory for the next step (``mallopt``; ``DPCORE_KEEP_FREED_MEMORY=0`` turns it off). This bench trains the same run
(the Train page's CNN on MNIST 5k by default) in fresh ``python -m dpcore train`` processes, round-robin over the
four combinations, and prints for each the median training time the run reports, the median wall time of the
command, the largest peak memory, the median minor page faults of the process, and whether every run gave the same
accuracy and ε (they must: only where memory comes from changes).

Usage: python bench/memory_settings.py [--rounds 3] [--dataset mnist5k] [--model cnn] [--epochs 10]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: (label, THP_MEM_ALLOC_ENABLE, DPCORE_KEEP_FREED_MEMORY); the last is what the command line and the app do
SETTINGS = (("neither", "0", "0"), ("huge pages only", "1", "0"), ("keep freed only", "0", "1"),
            ("both (dpcore's default)", "1", "1"))


def _run(argv: list[str], huge: str, keep: str) -> tuple[dict, float, int, int]:
    """The command's JSON, its wall seconds, its peak memory in KB and its minor page faults."""
    env = dict(os.environ, THP_MEM_ALLOC_ENABLE=huge, DPCORE_KEEP_FREED_MEMORY=keep)
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "dpcore", *argv], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = proc.stdout.read()
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)  # reaped here, for this child's own peak memory and faults
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t
    if proc.returncode:
        raise SystemExit(f"python -m dpcore {' '.join(argv)} failed (exit {proc.returncode})")
    return json.loads(out), wall, usage.ru_maxrss, usage.ru_minflt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dataset", default="mnist5k")
    ap.add_argument("--model", default="cnn")
    ap.add_argument("--epochs", type=int, default=10)
    a = ap.parse_args(argv)
    cmd = ["train", "--dataset", a.dataset, "--algorithm", "dpsgd", "--model", a.model, "--epsilon", "1",
           "--epochs", str(a.epochs), "--json"]
    seen: dict[str, list] = {label: [] for label, *_ in SETTINGS}
    for _ in range(a.rounds):
        for label, huge, keep in SETTINGS:
            seen[label].append(_run(cmd, huge, keep))
    print(f"python -m dpcore {' '.join(cmd)}: {a.rounds} fresh processes each, round-robin")
    print(f"{'memory settings':26s} {'training s (median)':>20s} {'command wall s':>15s} {'peak MB (max)':>14s} "
          f"{'page faults (median)':>21s}")
    med = {}
    for label, *_ in SETTINGS:
        runs = seen[label]
        med[label] = statistics.median(r[0]["seconds"] for r in runs)
        print(f"{label:26s} {med[label]:20.2f} {statistics.median(r[1] for r in runs):15.2f} "
              f"{max(r[2] for r in runs) / 1024:14.0f} {statistics.median(r[3] for r in runs):21,.0f}")
    results = {(r[0]["accuracy"], r[0]["epsilon"]) for runs in seen.values() for r in runs}
    base = med["neither"]
    print("training time / neither: " + ", ".join(f"{label} {med[label] / base:.2f}" for label, *_ in SETTINGS[1:])
          + f"; every run the same accuracy and epsilon: {'yes' if len(results) == 1 else f'NO ({sorted(results)})'}")
    return 0 if len(results) == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
