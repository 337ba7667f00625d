"""The code keeps the project's lint rules (pyproject.toml: pycodestyle, pyflakes, import order, bugbear)."""
from __future__ import annotations

import subprocess
import sys


def test_ruff_finds_nothing(root):
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
                          cwd=root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
