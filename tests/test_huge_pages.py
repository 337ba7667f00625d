"""The command line and the app ask torch for huge pages for large tensors before it loads; the environment's own
setting wins, and a process that already imported torch is left as it is."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
THP_MODE = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def _python(code: str, **env: str) -> str:
    base = {k: v for k, v in os.environ.items() if k != "THP_MEM_ALLOC_ENABLE"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**base, **env}, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def _thp_in_use() -> bool:
    mode = THP_MODE.read_text() if THP_MODE.exists() else ""
    return sys.platform.startswith("linux") and ("[madvise]" in mode or "[always]" in mode)


ALLOCATE = ("import torch; x = torch.empty(64 * 2**20 // 4); x.fill_(1.0); "
            "print(next(int(l.split()[1]) for l in open('/proc/self/smaps_rollup') if l.startswith('AnonHugePages')))")


@pytest.mark.skipif(not _thp_in_use() or "[always]" in (THP_MODE.read_text() if THP_MODE.exists() else ""),
                    reason="needs Linux with transparent huge pages in madvise mode (where only an advice gets them)")
def test_a_large_tensor_gets_huge_pages_only_when_asked_before_torch_loads():
    asked = _python("from dpcore.runtime.memory import prefer_huge_pages; assert prefer_huge_pages(); " + ALLOCATE)
    assert int(asked) >= 32 * 1024  # KB of the 64 MB tensor on huge pages
    not_asked = _python(ALLOCATE)
    assert int(not_asked) == 0
    too_late = _python("import torch; from dpcore.runtime.memory import prefer_huge_pages; "
                       "assert not prefer_huge_pages(); " + ALLOCATE)
    assert int(too_late) == 0  # torch read the setting when it loaded: nothing claims otherwise


def test_the_environment_setting_wins():
    code = ("import os; from dpcore.runtime.memory import prefer_huge_pages; "
            "print(prefer_huge_pages(), os.environ.get('THP_MEM_ALLOC_ENABLE'))")
    assert _python(code, THP_MEM_ALLOC_ENABLE="0") == "False 0"
    assert _python(code) == ("True 1" if _thp_in_use() else "False None")  # asked for only where the machine has them


def test_the_command_line_and_the_app_ask_before_torch_loads():
    cli = _python("import contextlib, io, os, sys; from dpcore.cli import main\n"
                  "with contextlib.redirect_stdout(io.StringIO()):\n    main(['train', '--list'])\n"
                  "print(os.environ.get('THP_MEM_ALLOC_ENABLE'), 'torch' in sys.modules)")
    on = "1" if _thp_in_use() else "None"
    assert cli.split()[0] == on
    app = _python("import os, sys; from dpcore.runtime import serving; "
                  "serving.SHARED_LIBRARIES = ('torch',); "  # the server's first import of torch, alone
                  "assert 'torch' not in sys.modules; serving.load_libraries(); "
                  "print(os.environ.get('THP_MEM_ALLOC_ENABLE'), 'torch' in sys.modules)")
    assert app == f"{on} True"


def test_a_machine_without_huge_pages_is_not_asked_for_them(tmp_path):
    from dpcore.runtime.memory import huge_pages_available

    mode = tmp_path / "enabled"
    mode.write_text("always madvise [never]\n")
    assert not huge_pages_available(mode)
    assert not huge_pages_available(tmp_path / "missing")  # a kernel without them, or not Linux
    mode.write_text("always [madvise] never\n")
    assert huge_pages_available(mode) == sys.platform.startswith("linux")
