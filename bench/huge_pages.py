"""DP-SGD on the CNN with and without torch's huge pages for large tensors, each in fresh processes, in one run.

The command line and the app ask torch to back tensors of 2 MB or more with transparent huge pages
(``THP_MEM_ALLOC_ENABLE=1``, :mod:`dpcore.runtime.memory`). This bench trains the same run (the Train page's CNN on
MNIST 5k by default) in fresh ``python -m dpcore train`` processes, alternately with the variable at 0 and at 1, and
prints for each the median training time the run reports, the median wall time of the command, the largest peak
memory, and whether every run gave the same accuracy and ε (they must: only where memory comes from changes).

Usage: python bench/huge_pages.py [--rounds 3] [--dataset mnist5k] [--model cnn] [--epochs 10]
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


def _run(argv: list[str], huge: str) -> tuple[dict, float, int]:
    """The command's JSON, its wall seconds and its peak memory in KB, with ``THP_MEM_ALLOC_ENABLE=huge``."""
    env = dict(os.environ, THP_MEM_ALLOC_ENABLE=huge)
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "dpcore", *argv], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = proc.stdout.read()
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)  # reaped here, for this child's own peak memory
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t
    if proc.returncode:
        raise SystemExit(f"python -m dpcore {' '.join(argv)} failed (exit {proc.returncode})")
    return json.loads(out), wall, usage.ru_maxrss


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dataset", default="mnist5k")
    ap.add_argument("--model", default="cnn")
    ap.add_argument("--epochs", type=int, default=10)
    a = ap.parse_args(argv)
    cmd = ["train", "--dataset", a.dataset, "--algorithm", "dpsgd", "--model", a.model, "--epsilon", "1",
           "--epochs", str(a.epochs), "--json"]
    seen = {"0": [], "1": []}
    for _ in range(a.rounds):
        for huge in ("0", "1"):
            seen[huge].append(_run(cmd, huge))
    print(f"python -m dpcore {' '.join(cmd)}: {a.rounds} fresh processes each, alternated")
    print(f"{'THP_MEM_ALLOC_ENABLE':22s} {'training s (median)':>20s} {'command wall s':>15s} {'peak MB (max)':>14s}")
    med = {}
    for huge, label in (("0", "0 (off)"), ("1", "1 (dpcore's default)")):
        runs = seen[huge]
        med[huge] = statistics.median(r[0]["seconds"] for r in runs)
        print(f"{label:22s} {med[huge]:20.2f} {statistics.median(r[1] for r in runs):15.2f} "
              f"{max(r[2] for r in runs) / 1024:14.0f}")
    results = {(r[0]["accuracy"], r[0]["epsilon"]) for runs in seen.values() for r in runs}
    print(f"training time with huge pages / without: {med['1'] / med['0']:.2f}; "
          f"every run the same accuracy and epsilon: {'yes' if len(results) == 1 else f'NO ({sorted(results)})'}")
    return 0 if len(results) == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
