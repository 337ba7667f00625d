"""The command line and the app ask torch for huge pages for large tensors before it loads, and the C library's
allocator to keep freed memory for the next training step; the environment's own setting wins, and a process that
already imported torch is left as it is."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
THP_MODE = Path("/sys/kernel/mm/transparent_hugepage/enabled")
#: the module's tests read a fresh command-line process and a fresh app process (:func:`started`, a module
#: fixture): one test worker runs them all, so that each is started once
pytestmark = pytest.mark.xdist_group("memory-settings")


def _python(code: str, **env: str) -> str:
    base = {k: v for k, v in os.environ.items() if k not in ("THP_MEM_ALLOC_ENABLE", "DPCORE_KEEP_FREED_MEMORY")}
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


@pytest.fixture(scope="module")
def started() -> dict[str, list[str]]:
    """What a fresh process of the command line (``train --list``) and one of the app (the server loading its
    libraries, torch alone) say once started: the huge-page setting torch read and whether torch was loaded, then,
    on a line of its own, whether the allocator was asked to keep freed memory (``dpcore.runtime.memory`` is
    imported for that only after the first line, so it cannot be what set anything). One process of each for the
    tests that read them."""
    cli = _python("import contextlib, io, os, sys; from dpcore.cli import main\n"
                  "with contextlib.redirect_stdout(io.StringIO()):\n    main(['train', '--list'])\n"
                  "print(os.environ.get('THP_MEM_ALLOC_ENABLE'), 'torch' in sys.modules)\n"
                  "from dpcore.runtime import memory; print(memory._kept)")
    app = _python("import os, sys; from dpcore.runtime import serving; "
                  "serving.SHARED_LIBRARIES = ('torch',); "  # the server's first import of torch, alone
                  "assert 'torch' not in sys.modules; serving.load_libraries(); "
                  "print(os.environ.get('THP_MEM_ALLOC_ENABLE'), 'torch' in sys.modules); "
                  "from dpcore.runtime import memory; print(memory._kept)")
    return {"cli": cli.splitlines(), "app": app.splitlines()}


def test_the_command_line_and_the_app_ask_before_torch_loads(started):
    on = "1" if _thp_in_use() else "None"
    assert started["cli"][0].split()[0] == on
    assert started["app"][0] == f"{on} True"


def test_a_machine_without_huge_pages_is_not_asked_for_them(tmp_path):
    from dpcore.runtime.memory import huge_pages_available

    mode = tmp_path / "enabled"
    mode.write_text("always madvise [never]\n")
    assert not huge_pages_available(mode)
    assert not huge_pages_available(tmp_path / "missing")  # a kernel without them, or not Linux
    mode.write_text("always [madvise] never\n")
    assert huge_pages_available(mode) == sys.platform.startswith("linux")


def _glibc_linux() -> bool:
    import platform

    return sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


#: Ten DP-SGD steps of the small CNN at batch 256 after five to warm up: the minor page faults per step say whether
#: the allocator handed the previous step's buffers back to the kernel (every step then touches fresh pages) or kept
#: them. On glibc's adaptive defaults the private step holds more at once than its trim threshold and faults about
#: thousands of times a step on this project's machine; kept, next to never.
STEP_FAULTS = (
    "import resource, torch\n"
    "from dpcore.training import build_model\n"
    "from dpcore.training.ghost import make_clipper\n"
    "from dpcore.training.step import PrivateGradient\n"
    "torch.set_num_threads(1)\n"
    "g = torch.Generator().manual_seed(0)\n"
    "x, y = torch.rand(256, 784, generator=g), torch.randint(0, 10, (256,), generator=g)\n"
    "m = build_model('cnn', n_features=784, n_outputs=10, image_shape=(28, 28), hidden=128)\n"
    "step = PrivateGradient(m, make_clipper(m), task='classification', clip_norm=1.0, noise_multiplier=1.0,\n"
    "                       expected_batch_size=256.0, generator=torch.Generator().manual_seed(0))\n"
    "for _ in range(5): step(x, y)\n"
    "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
    "for _ in range(10): step(x, y)\n"
    "print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10)\n"
)


@pytest.mark.skipif(not _glibc_linux(), reason="mallopt is glibc's")
def test_a_private_steps_buffers_stay_for_the_next_step_only_when_asked():
    kept = _python("from dpcore.runtime.memory import keep_freed_memory; assert keep_freed_memory()\n" + STEP_FAULTS,
                   THP_MEM_ALLOC_ENABLE="0")
    refused = _python("from dpcore.runtime.memory import keep_freed_memory; assert not keep_freed_memory()\n"
                      + STEP_FAULTS, THP_MEM_ALLOC_ENABLE="0", DPCORE_KEEP_FREED_MEMORY="0")  # the operator's "0"
    # on glibc's adaptive defaults 3,300-10,800 a step, varying with the process's history; kept, 0-314
    assert float(refused) > 1_000 and float(kept) < float(refused) / 5


@pytest.mark.skipif(not _glibc_linux(), reason="mallopt is glibc's")
def test_the_command_line_and_the_app_keep_freed_memory(started):
    assert started["cli"][1] == "True"
    assert started["app"][1] == "True"
