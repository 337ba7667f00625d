"""dpcore's modules import one another without circles, counting imports inside functions too.

An import written inside a function to break a loop still leaves the loop (the two modules cannot be understood,
tested or moved apart); the shared piece belongs a layer down (STYLE.md, "One path for each privacy-relevant
act"). The graph is read from the source: every ``import`` and ``from ... import`` anywhere in a module, resolved
to dpcore's modules (``from .pkg import name`` counts as an import of ``pkg``, or of ``pkg.name`` when that is a
module).
"""
from __future__ import annotations

import ast
import pathlib
import sys

import dpcore

ROOT = pathlib.Path(dpcore.__file__).parent

#: Import circles allowed to stand (none now). Each entry is a strongly connected set of modules; the
#: test fails if one disappears too, so the list cannot go stale.
KNOWN_CIRCLES: list[frozenset[str]] = []


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, pathlib.Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def import_graph() -> dict[str, set[str]]:
    """``{module: modules of dpcore it imports}`` from every import statement in its source."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                # ``from pkg import mod`` imports the module; ``from pkg import name`` imports pkg
                targets = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in mods else stem for a in node.names]
            for t in targets:
                while t and t not in mods:  # a name inside a module: the module that holds it
                    t = t.rpartition(".")[0]
                if t and t != name:
                    graph[name].add(t)
    return graph


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected sets of two or more modules (Tarjan 1972)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[frozenset[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_dpcore_has_no_import_circles_beyond_the_known_ones():
    found = circles(import_graph())
    new = [sorted(c) for c in found if c not in KNOWN_CIRCLES]
    assert not new, "import circles (move the shared piece down a layer):\n" + "\n".join(map(str, new))
    gone = [sorted(c) for c in KNOWN_CIRCLES if c not in found]
    assert not gone, f"these known circles are gone: remove them from KNOWN_CIRCLES: {gone}"


def test_the_scan_sees_a_circle_hidden_inside_a_function():
    graph = {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert circles(graph) == [frozenset({"a", "b"})]
