"""The core is useful without Streamlit: importing it never imports streamlit."""
from __future__ import annotations

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_importing_dpcore_does_not_import_streamlit():
    code = (
        "import sys, pathlib, importlib, dpcore\n"
        "root = pathlib.Path(dpcore.__file__).parent\n"
        "for f in sorted(root.rglob('*.py')):\n"
        "    parts = f.relative_to(root.parent).with_suffix('').parts\n"
        "    if parts[1:2] == ('ui',) or parts[-1] == '__main__':\n"
        "        continue\n"
        "    importlib.import_module('.'.join(p for p in parts if p != '__init__'))\n"
        "from dpcore.learners import learners; learners()\n"
        "print('streamlit' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_no_core_source_mentions_streamlit_import():
    offenders = []
    for path in (ROOT / "dpcore").rglob("*.py"):
        if "ui" in path.relative_to(ROOT / "dpcore").parts[:1]:
            continue
        if re.search(r"^\s*(import streamlit|from streamlit)", path.read_text(), re.M):
            offenders.append(str(path))
    assert offenders == []
