"""Privacy noise is drawn only inside dpcore.mechanisms, so one place decides how it is sampled.

The scan covers numpy generators' draws (``rng.laplace(...)``) and torch's (``torch.normal``, ``torch.randn``,
``tensor.normal_(...)`` and the other in-place samplers): DP-SGD's and DP-FedAvg's Gaussian is
:class:`dpcore.mechanisms.gaussian_sum.GaussianSum`, as Opacus draws all its noise in one function.
"""
from __future__ import annotations

import ast
import pathlib

import dpcore

#: numpy Generator methods that draw continuous or count noise
NOISE_METHODS = {"laplace", "normal", "standard_normal", "gamma", "standard_gamma", "exponential",
                 "standard_exponential", "gumbel", "logistic", "binomial", "poisson", "geometric"}
#: torch functions that sample (``torch.<name>(...)``)
TORCH_SAMPLERS = {"normal", "randn", "randn_like", "rand", "rand_like", "randint", "randint_like", "poisson",
                  "bernoulli", "multinomial", "randperm", "normal_", "standard_gamma", "binomial"}
#: in-place tensor samplers (``t.normal_(...)``)
TORCH_INPLACE = {"normal_", "uniform_", "exponential_", "cauchy_", "log_normal_", "geometric_", "bernoulli_",
                 "random_"}
#: draws that are not privacy noise: (file relative to dpcore/, method) -> why
NOT_PRIVACY_NOISE = {
    ("models/erm.py", "normal"): "random Fourier features' frequencies W (Rahimi & Recht 2007): data-independent",
    ("training/models.py", "uniform_"): "initial weights (PyTorch's Kaiming-uniform), drawn before any data is seen",
    ("federated/models.py", "torch.rand"): "the global model's initial weights, drawn before any data is seen",
    ("datasets/shares.py", "normal"): "the features of a synthetic example table (example_rare_class_table)",
}


def _noise_calls(path: pathlib.Path):
    """``(name, line)`` of every numpy or torch draw in ``path`` (torch functions named ``torch.<name>``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        attr, owner = node.func.attr, node.func.value
        if isinstance(owner, ast.Name) and owner.id == "torch":
            if attr in TORCH_SAMPLERS:
                yield f"torch.{attr}", node.lineno
            continue
        if isinstance(owner, ast.Name) and owner.id == "stats":
            continue  # scipy.stats objects give densities, not draws
        if attr in NOISE_METHODS or attr in TORCH_INPLACE:
            yield attr, node.lineno


def test_no_numpy_or_torch_noise_is_drawn_outside_the_mechanisms():
    root = pathlib.Path(dpcore.__file__).parent
    found, allowed_seen = [], set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("mechanisms/") or rel == "rng.py":  # rng.py is the secure source the mechanisms draw from
            continue
        for method, line in _noise_calls(path):
            if (rel, method) in NOT_PRIVACY_NOISE:
                allowed_seen.add((rel, method))
            else:
                found.append(f"dpcore/{rel}:{line} calls {method}(...)")
    assert not found, "draw privacy noise through a dpcore.mechanisms class instead:\n" + "\n".join(found)
    assert allowed_seen == set(NOT_PRIVACY_NOISE)  # the exceptions still exist (remove stale ones)


def test_the_scan_sees_a_numpy_draw_written_in_a_model(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x, rng):\n    return x + rng.laplace(0.0, 1.0, size=x.shape)\n", encoding="utf-8")
    assert list(_noise_calls(bad)) == [("laplace", 2)]


def test_the_scan_sees_torch_draws_written_in_a_trainer(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\n"
                   "def f(g, gen):\n"
                   "    a = torch.normal(0.0, 1.0, size=g.shape, generator=gen)\n"
                   "    b = torch.randn(3)\n"
                   "    g.normal_(0.0, 1.0, generator=gen)\n"
                   "    c = torch.empty(3).normal_(0.0, 2.0)\n"
                   "    return a + b + c + torch.randn_like(g)\n", encoding="utf-8")
    assert sorted(_noise_calls(bad)) == [("normal_", 5), ("normal_", 6), ("torch.normal", 3), ("torch.randn", 4),
                                         ("torch.randn_like", 7)]
