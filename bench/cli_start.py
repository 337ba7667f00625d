"""Wall time of ``python -m dpcore`` commands that should answer at once: ``--help``, ``epsilon``, cached sweeps, and
a k-means run, which trains no network.

Usage:

    python bench/cli_start.py [--repeat 5] [--cache-dir DIR] [--baseline OTHER_CHECKOUT]

Each command runs ``--repeat`` times in a fresh interpreter (the median wall time is printed), beside the
figure issue 44 measured on main and its target. A sweep is first run once untimed to fill the cache (the 24-run
MNIST 5k sweep takes a minute or so on 2 cores), so the timed runs all answer from the disk cache. ``--baseline``
times the same commands in another checkout (e.g. ``git archive main | tar -x -C /tmp/main``) interleaved with
this one, so both columns see the same load on a shared machine. The last column lists the heavy libraries the
command imported (torch, scikit-learn, SciPy, dp_accounting).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
MNIST = ("sweep --dataset mnist5k --algorithms dpsgd --axis epsilon --values 0.5,0.7,1,1.5,2,3,5,8 --seeds 3 "
         "--out {out}")
#: (label, arguments, issue 44's figure on main in s or None, the target in s or None)
COMMANDS = [
    ("--help", "--help", None, None),
    ("train --help (every learner's knobs)", "train --help", None, None),
    ("cluster iris dplloyd (k-means, no network)", "cluster --dataset iris --algorithm dplloyd --seeds 1", None, None),
    ("epsilon", "epsilon --noise-multiplier 1 --sample-rate 0.01 --steps 100", None, None),
    ("sweep breast_cancer (cached)", "sweep --dataset breast_cancer --out {out}", None, None),
    ("sweep mnist5k 24 runs (cached)", MNIST, 3.4, 1.0),
]
HEAVY = ("torch", "sklearn", "scipy", "dp_accounting")
# the command's own main(): ``python -m dpcore`` leaves with os._exit, before anything after it could look
_PROBE = ("import sys\nfrom dpcore.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
          "print('HEAVY', *[m for m in %r if m in sys.modules], file=sys.stderr)\n" % (HEAVY,))


def _argv(args: str, out: str) -> list[str]:
    return args.format(out=out).split()


def _wall(tree: Path, argv: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "dpcore", *argv], cwd=tree, env=env, capture_output=True,
                          text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed in {tree}:\n{proc.stderr[-2000:]}")
    return seconds


def _heavy(tree: Path, argv: list[str], env: dict) -> str:
    proc = subprocess.run([sys.executable, "-c", _PROBE, *argv], cwd=tree, env=env, capture_output=True, text=True)
    line = next((ln for ln in proc.stderr.splitlines() if ln.startswith("HEAVY")), "HEAVY ?")
    return ",".join(line.split()[1:]) or "none"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cache-dir", default=None, help="sweep cache to fill and read (default: a temporary one)")
    ap.add_argument("--baseline", default=None, help="another checkout to time beside this one")
    args = ap.parse_args()
    trees = {"this tree": HERE}
    if args.baseline:
        trees = {"baseline": Path(args.baseline).resolve(), **trees}
    with tempfile.TemporaryDirectory() as tmp:
        cache = args.cache_dir or os.path.join(tmp, "cache")
        out = os.path.join(tmp, "out.csv")
        env = {**os.environ, "DPCORE_CACHE_DIR": cache}
        env.pop("PYTHONPATH", None)
        for name, tree in trees.items():
            for label, cmd, _, _ in COMMANDS:
                if cmd.startswith("sweep"):
                    print(f"filling the cache: {label} in {name} ...", file=sys.stderr, flush=True)
                    _wall(tree, _argv(cmd, out), env)
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.repeat):  # interleaved: every tree and command sees the same background load
            for label, cmd, _, _ in COMMANDS:
                for name, tree in trees.items():
                    times.setdefault((label, name), []).append(_wall(tree, _argv(cmd, out), env))
        heavy = {(label, name): _heavy(tree, _argv(cmd, out), env)
                 for label, cmd, _, _ in COMMANDS for name, tree in trees.items()}
    print(f"python -m dpcore wall time, median of {args.repeat} fresh interpreters (s); load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    head = f"{'command':44s} {'issue 44 (main)':>15s} {'target':>7s}" + "".join(f" {n:>10s}" for n in trees)
    print(head + "  heavy imports (" + " / ".join(trees) + ")")
    for label, _, today, target in COMMANDS:
        cells = "".join(f" {statistics.median(times[(label, n)]):10.2f}" for n in trees)
        fig = f"{today:.1f}" if today is not None else "-"
        goal = f"<= {target:g}" if target is not None else "-"
        print(f"{label:44s} {fig:>15s} {goal:>7s}{cells}  " + " / ".join(heavy[(label, n)] for n in trees))


if __name__ == "__main__":
    main()
