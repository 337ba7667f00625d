"""`pip install .` installs the dpcore library alone, with the pins of requirements.txt; `import dpcore` is cheap."""
from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import sys
import zipfile

import pytest
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _requirements(path: pathlib.Path) -> dict[str, str]:
    """``{name: specifier}`` of the requirement lines of ``path`` (comments and -r lines dropped)."""
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        m = re.match(r"([A-Za-z0-9_.\-\[\]]+)\s*(.*)", line)
        out[m[1].lower()] = m[2].replace(" ", "")
    return out


def test_package_dependencies_carry_the_same_pins_as_requirements_txt():
    project = PYPROJECT["project"]
    declared = {}
    for spec in project["dependencies"] + project["optional-dependencies"]["app"]:
        m = re.match(r"([A-Za-z0-9_.\-\[\]]+)\s*(.*)", spec)
        declared[m[1].lower()] = m[2].replace(" ", "")
    assert declared == _requirements(ROOT / "requirements.txt")
    assert "torch==2.13.0" in project["dependencies"] and "dp-accounting~=0.6.0" in project["dependencies"]


def test_the_app_extra_holds_only_what_the_core_never_imports():
    app = {re.match(r"[A-Za-z0-9_.\-]+", s)[0] for s in PYPROJECT["project"]["optional-dependencies"]["app"]}
    assert app == {"streamlit", "plotly", "altair"}
    core = [p for p in (ROOT / "dpcore").rglob("*.py") if p.relative_to(ROOT / "dpcore").parts[0] != "ui"]
    pattern = re.compile(r"^\s*(import|from)\s+(streamlit|plotly|altair)\b", re.M)
    assert [str(p) for p in core if pattern.search(p.read_text())] == []


def test_the_wheel_holds_dpcore_alone_with_py_typed(tmp_path):
    pytest.importorskip("setuptools", reason="the build backend (setuptools) is not installed")
    # built from a copy of what the package is made of, so that no build/ folder of an earlier build (which could
    # hold since-deleted modules) is read, and none is left in the checkout
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "dpcore", source / "dpcore", ignore=shutil.ignore_patterns("__pycache__"))
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                          "-w", str(tmp_path), str(source)], capture_output=True, text=True, timeout=300)
    if out.returncode != 0 and "No module named pip" in out.stderr:
        pytest.skip("pip is not available to build the wheel")
    assert out.returncode == 0, out.stderr
    (wheel,) = tmp_path.glob("dpcore-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names if ".dist-info/" not in n} == {"dpcore"}
    assert "dpcore/py.typed" in names
    assert "dpcore/training/engine.py" in names and "dpcore/ui/boot.py" in names
    assert not any(n.startswith(("pages/", "tests/", "bench/", "scripts/", "app.py")) for n in names)
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert "Requires-Dist: torch==2.13.0" in metadata
    assert "Provides-Extra: app" in metadata


def test_import_dpcore_loads_no_torch_until_a_name_needs_it():
    code = ("import sys, dpcore\n"
            "print('torch' in sys.modules, 'pandas' in sys.modules)\n"
            "dpcore.train\n"
            "print('torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False", "True"]


def test_every_top_level_name_resolves_and_unknown_names_are_refused():
    import dpcore

    for name in dpcore.__all__:
        assert getattr(dpcore, name) is not None, name
    assert set(dpcore.__all__) <= set(dir(dpcore))
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        dpcore.no_such_name  # noqa: B018


def _cells(row: str) -> int:
    row = re.sub(r"`[^`]*`", "code", row).replace("\\|", "")  # a pipe inside a code span is not a cell border
    return row.strip().strip("|").count("|") + 1


def test_every_row_of_the_readmes_tables_has_as_many_cells_as_its_header():
    lines = (ROOT / "README.md").read_text().splitlines()
    uneven, tables = [], 0
    for i, line in enumerate(lines[:-1]):
        if line.startswith("|") and re.fullmatch(r"\|[\s:|-]+\|", lines[i + 1]) and not lines[i - 1].startswith("|"):
            tables += 1
            width = _cells(line)
            for j in range(i + 2, len(lines)):
                if not lines[j].startswith("|"):
                    break
                if _cells(lines[j]) != width:  # a renderer drops or shifts the extra cells
                    uneven.append((j + 1, lines[j][:60]))
    assert tables >= 2 and not uneven, uneven
