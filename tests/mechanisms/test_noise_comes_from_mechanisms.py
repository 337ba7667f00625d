"""Privacy noise is drawn only inside dpcore.mechanisms, so one place decides how it is sampled."""
from __future__ import annotations

import ast
import pathlib

import dpcore

#: numpy Generator methods that draw continuous or count noise
NOISE_METHODS = {"laplace", "normal", "standard_normal", "gamma", "standard_gamma", "exponential",
                 "standard_exponential", "gumbel", "logistic", "binomial", "poisson", "geometric"}
#: draws that are not privacy noise: (file relative to dpcore/, method) -> why
NOT_PRIVACY_NOISE = {
    ("models/erm.py", "normal"): "random Fourier features' frequencies W (Rahimi & Recht 2007): data-independent",
}


def _numpy_noise_calls(path: pathlib.Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in NOISE_METHODS:
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id in ("torch", "stats"):
                continue  # torch tensors' noise is the DP-SGD engine's; scipy.stats objects give densities, not draws
            yield node.func.attr, node.lineno


def test_no_numpy_noise_is_drawn_outside_the_mechanisms():
    root = pathlib.Path(dpcore.__file__).parent
    found, allowed_seen = [], set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("mechanisms/") or rel == "rng.py":  # rng.py is the secure source the mechanisms draw from
            continue
        for method, line in _numpy_noise_calls(path):
            if (rel, method) in NOT_PRIVACY_NOISE:
                allowed_seen.add((rel, method))
            else:
                found.append(f"dpcore/{rel}:{line} calls .{method}(...)")
    assert not found, "draw privacy noise through a dpcore.mechanisms class instead:\n" + "\n".join(found)
    assert allowed_seen == set(NOT_PRIVACY_NOISE)  # the exceptions still exist (remove stale ones)


def test_the_scan_sees_a_draw_written_in_a_model(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x, rng):\n    return x + rng.laplace(0.0, 1.0, size=x.shape)\n", encoding="utf-8")
    assert list(_numpy_noise_calls(bad)) == [("laplace", 2)]
