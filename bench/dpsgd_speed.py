"""Per-step time of this DP-SGD engine vs non-private SGD vs Opacus (hooks and ghost clipping) vs torch.func.

Same model, same batch, same machine, one run. Usage:

    python bench/dpsgd_speed.py [--steps 30] [--batch 256] [--threads 2] [--only cnn] [--processes 5]

Prints milliseconds per optimiser step (the median of ``--rounds`` interleaved
rounds) and two ratios: each method against the non-private step, and against the
*floor*, the non-private step plus the noise draw. Timings on a shared CPU are
noisy; ratios measured in one run are what to compare.

"dpcore (train() default)" is what :func:`dpcore.training.train` runs: a
:class:`~dpcore.training.step.PrivateGradient` over the autograd-free
:class:`~dpcore.training.ghost.DenseStackClipper` for the linear and MLP models
and the hook-based :class:`~dpcore.training.GhostClipper` for the CNN; for the
former the hook path is timed too, and for every model the same step with an
``on_step`` observer (what a white-box privacy audit would attach). The noise
draw row times ``torch.Tensor.normal_`` for as many coordinates as the model has
parameters: every DP step pays it, the non-private step does not, so no DP-SGD
step can be faster than the floor without drawing its noise differently.

The bench runs with the memory settings of the command line and the app
(:func:`dpcore.runtime.memory.keep_freed_memory`: the C library's allocator keeps the memory a step frees for the
next step; ``--system-malloc`` leaves glibc's adaptive defaults, under which the CNN's private step, holding more at
once than the non-private one, gives its buffers back to the kernel and faults them in again at every step).

The same code's ratio differs from one process to the next by more than the timing within a process does (the CNN's
private step ran 1.09 to 1.12 times its floor in separate runs of one commit): where its memory lands decides how
fast its element-wise passes over the 13 MB activations go. ``--processes N`` runs the bench in N fresh processes,
one after the other, and prints each one's ratios and their median.

"dpcore secure mode" is the same step inside :func:`dpcore.rng.secure_noise` (``--secure`` on the command line):
the noisy sum released on a grid with Gaussian noise from ``os.urandom`` (an AES-CTR keystream keyed from it), drawn
in blocks (target: at most 2x the default step).
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpcore.rng import secure_noise  # noqa: E402
from dpcore.runtime.memory import keep_freed_memory  # noqa: E402
from dpcore.training import build_model  # noqa: E402
from dpcore.training.ghost import DenseStackClipper, GhostClipper, make_clipper  # noqa: E402
from dpcore.training.step import PrivateGradient  # noqa: E402

warnings.filterwarnings("ignore")

OURS = "dpcore (train() default)"
OBSERVED = "dpcore + on_step observer"
HOOKS = "dpcore hook path (GhostClipper)"
NOISE = "  of which: noise draw (normal_)"
SECURE = "dpcore secure mode (--secure)"


def _time_interleaved(steps_by_method: dict, rounds: int, per_round: int, slow: set) -> dict:
    """Run the methods round-robin, ``per_round`` steps each per round; per-step ms = median round.

    Interleaving puts every method through the same background load; the median
    of the rounds is robust to the bursts of a CPU shared with other jobs.
    """
    for f in steps_by_method.values():
        for _ in range(3):
            f()
    times = {k: [] for k in steps_by_method}
    for _ in range(rounds):
        for k, f in steps_by_method.items():
            n = max(1, per_round // 10) if k in slow else per_round
            t = time.perf_counter()
            for _ in range(n):
                f()
            times[k].append(1000 * (time.perf_counter() - t) / n)
    return {k: statistics.median(v) for k, v in times.items()}


def bench_model(name, model, x, y, steps, sigma=1.0, C=1.0, rounds=7):
    B = x.shape[0]
    fns = {}

    m = copy.deepcopy(model)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)

    def nonprivate():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(m(x), y).backward()
        opt.step()

    fns["non-private SGD"] = nonprivate

    # train() computes the rows' squared norms once per run and indexes them per step
    x_sq = torch.linalg.vector_norm(x, dim=1).square_()

    def dpcore_step(clipper_of, on_step=None, secure=False):
        m2 = copy.deepcopy(model)
        opt2 = torch.optim.SGD(m2.parameters(), lr=0.1)
        with secure_noise() if secure else contextlib.nullcontext():  # the step reads the mode when it is made
            noisy_gradient = PrivateGradient(m2, clipper_of(m2), task="classification", clip_norm=C,
                                             noise_multiplier=sigma, expected_batch_size=float(B),
                                             generator=torch.Generator().manual_seed(0), on_step=on_step)

        def ours():
            noisy_gradient(x, y, x_sq_norms=x_sq)
            opt2.step()

        return ours

    fns[OURS] = dpcore_step(make_clipper)  # what train() uses: the fast path when the model allows it
    fns[OBSERVED] = dpcore_step(make_clipper, on_step=lambda i, noisy_sum: None)
    fns[SECURE] = dpcore_step(make_clipper, secure=True)
    if DenseStackClipper.supports(model):
        fns[HOOKS] = dpcore_step(GhostClipper)

    # a floor, not a method: the Gaussian noise for every parameter is one serial torch.normal_ draw
    n_params = sum(p.numel() for p in model.parameters())
    noise_buf = torch.empty(n_params)
    noise_gen = torch.Generator().manual_seed(1)
    fns[NOISE] = lambda: noise_buf.normal_(0.0, 1.0, generator=noise_gen)

    from opacus import PrivacyEngine

    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=B)
    for mode in ("hooks", "ghost"):
        m3 = copy.deepcopy(model)
        opt3 = torch.optim.SGD(m3.parameters(), lr=0.1)
        pe = PrivacyEngine(accountant="rdp")
        out = pe.make_private(module=m3, optimizer=opt3, data_loader=loader, noise_multiplier=sigma, max_grad_norm=C,
                              poisson_sampling=False, grad_sample_mode=mode,
                              criterion=torch.nn.CrossEntropyLoss())
        if mode == "ghost":
            gm, gopt, crit, _ = out
        else:
            gm, gopt, _ = out
            crit = torch.nn.CrossEntropyLoss()

        def opacus_step(gm=gm, gopt=gopt, crit=crit):
            gopt.zero_grad(set_to_none=True)
            loss = crit(gm(x), y)
            loss.backward()
            gopt.step()

        fns[f"Opacus {mode}"] = opacus_step

    from torch.func import functional_call, grad, vmap

    m4 = copy.deepcopy(model)
    params = {k: v.detach() for k, v in m4.named_parameters()}

    def loss_one(p, xi, yi):
        return F.cross_entropy(functional_call(m4, p, (xi[None],)), yi[None])

    per_ex = vmap(grad(loss_one), in_dims=(None, 0, 0))

    def vmap_step():
        g = per_ex(params, x, y)
        norms = torch.sqrt(sum(v.flatten(1).pow(2).sum(1) for v in g.values()))
        c = (C / (norms + 1e-6)).clamp(max=1.0)
        for k, v in g.items():
            s = torch.tensordot(c, v, dims=1) + sigma * C * torch.randn(v.shape[1:])
            params[k] = params[k] - 0.1 * s / B

    fns["torch.func vmap (materialised)"] = vmap_step
    slow = {"Opacus hooks", "torch.func vmap (materialised)"}
    return _time_interleaved(fns, rounds, steps, slow)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20, help="steps per method per round")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default="", help="the models whose name contains this (e.g. cnn, mlp, softmax)")
    ap.add_argument("--processes", type=int, default=1,
                    help="run the bench in this many fresh processes and print each one's ratios and their median")
    ap.add_argument("--system-malloc", action="store_true",
                    help="leave the C library's allocator on its defaults (the command line and the app keep freed "
                         "memory for the next step)")
    a = ap.parse_args(argv)
    if a.processes > 1:
        return _in_processes(a.processes, argv if argv is not None else sys.argv[1:])
    kept = False if a.system_malloc else keep_freed_memory()
    torch.set_num_threads(a.threads)
    g = torch.Generator().manual_seed(0)
    x = torch.rand(a.batch, 784, generator=g)
    y = torch.randint(0, 10, (a.batch,), generator=g)
    models = {
        "softmax regression 784-10": build_model("linear", n_features=784, n_outputs=10),
        "MLP 784-128-10": build_model("mlp", n_features=784, n_outputs=10, hidden=128, activation="relu"),
        "small CNN 28x28": build_model("cnn", n_features=784, n_outputs=10, image_shape=(28, 28), hidden=128),
    }
    models = {k: v for k, v in models.items() if a.only.lower() in k.lower()}
    if not models:
        print(f"--only {a.only!r} names no model; use cnn, mlp or softmax", file=sys.stderr)
        return 2
    print(f"batch {a.batch}, torch threads {a.threads}; ms per step = median of {a.rounds} interleaved rounds of "
          f"{a.steps} steps (2 for the slow methods); floor = non-private step + noise draw; shared 2-core CPU: "
          f"timings are noisy, compare the ratios; allocator: "
          f"{'freed memory kept for the next step, as the app and CLI run' if kept else 'glibc defaults'}\n")
    for name, model in models.items():
        rows = bench_model(name, model, x, y, a.steps, rounds=a.rounds)
        base = rows["non-private SGD"]
        floor = base + rows[NOISE]
        ours = rows[OURS]
        path = "fast path: no autograd" if DenseStackClipper.supports(model) else "hook path"
        print(f"## {name} (dpcore {path})")
        print(f"{'method':40s} {'ms/step':>9s} {'x non-private':>14s} {'x floor':>8s}")
        for k, v in rows.items():
            print(f"{k:40s} {v:9.2f} {v / base:14.2f} {'' if k == NOISE else f'{v / floor:8.2f}'}")
        print(f"ratio dpcore / floor: {ours / floor:.2f} (target <= 1.1); dpcore / non-private: {ours / base:.2f}")
        print(f"ratio Opacus ghost / dpcore: {rows['Opacus ghost'] / ours:.2f}; "
              f"Opacus hooks / dpcore: {rows['Opacus hooks'] / ours:.2f}")
        print(f"on_step observer: {rows[OBSERVED] / ours:.3f}x the step without it")
        print(f"ratio secure mode / default: {rows[SECURE] / ours:.2f} (target <= 2)\n")
    return 0


def _in_processes(n: int, args: list[str]) -> int:
    """The bench in ``n`` fresh processes, one after the other: each one's dpcore / floor ratio per model, then their
    median."""
    import re
    import subprocess

    child, skip = [], False
    for x in args:  # the same arguments without --processes
        if skip or x.startswith("--processes"):
            skip = x == "--processes"
            continue
        child.append(x)
    ratios: dict[str, list[float]] = {}
    for i in range(n):
        out = subprocess.run([sys.executable, __file__, *child], capture_output=True, text=True, check=True).stdout
        model = None
        for line in out.splitlines():
            if line.startswith("## "):
                model = line[3:].split(" (")[0]
            elif (m := re.match(r"ratio dpcore / floor: ([\d.]+)", line)) and model is not None:
                ratios.setdefault(model, []).append(float(m.group(1)))
        print(f"process {i + 1}/{n}: " + "; ".join(f"{k} {v[-1]:.2f}" for k, v in ratios.items()), flush=True)
    for model, values in ratios.items():
        print(f"{model}: dpcore / floor in {len(values)} processes: {', '.join(f'{v:.2f}' for v in values)}; "
              f"median {statistics.median(values):.2f} (target <= 1.1)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
