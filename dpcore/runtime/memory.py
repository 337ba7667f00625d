"""Large tensors on transparent huge pages, asked of torch before it loads.

A network's activations and their gradients are fresh tensors at every step; the C library's allocator gives
tensors of tens of megabytes (a CNN's first layer at the Train page's batch of about 940 MNIST images: 47 MB)
memory straight from the kernel and hands it back when they are freed, so each step touches them anew, one 4 KB
page fault at a time. torch's CPU allocator can align tensors of 2 MB or more to 2 MB and advise the kernel to back
them with huge pages (``THP_MEM_ALLOC_ENABLE=1``): 512 times fewer faults. On this project's 2-core Linux machine a
DP-SGD run of the CNN on MNIST 5k (10 epochs) took 9.6-9.7 s with it against 11.2-12.8 s without, and its process
peaked lower (1.16 GB against 1.41 GB); sweeps of the smaller models were unchanged. ``bench/huge_pages.py``
measures it.

torch reads the switch once, the first time it allocates, which importing it already does: so the command line
(:func:`dpcore.cli.main`) and the app (:func:`dpcore.runtime.serving.load_libraries`) set it before torch loads,
and the processes they start inherit it. ``THP_MEM_ALLOC_ENABLE=0`` in the environment turns it off. A library user
who wants it sets the variable before importing torch; dpcore does not change a process it did not start. It is
set only on Linux with transparent huge pages in ``madvise`` or ``always`` mode (:data:`THP_MODE`): elsewhere
torch would ignore it, or, on a kernel without them, warn that its advice failed.
"""
from __future__ import annotations

import ctypes
import os
import platform
import sys
from pathlib import Path

#: The environment variable torch's CPU allocator reads (``c10/core/alloc_cpu.cpp``): ``1`` aligns allocations of
#: 2 MB or more to 2 MB and advises them as huge pages, ``0`` leaves them as they are.
HUGE_PAGES = "THP_MEM_ALLOC_ENABLE"
#: Where Linux says whether transparent huge pages are used: ``always [madvise] never``, the mode in brackets.
THP_MODE = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def huge_pages_available(mode_file: Path = THP_MODE) -> bool:
    """Whether this machine backs memory advised as huge with huge pages (Linux, mode ``always`` or ``madvise``)."""
    try:
        mode = mode_file.read_text()
    except OSError:
        return False
    return sys.platform.startswith("linux") and ("[always]" in mode or "[madvise]" in mode)


def prefer_huge_pages() -> bool:
    """Ask torch for huge pages for large tensors, unless the environment already says either way; return whether
    this process has them.

    Effective only before torch is imported, and only where the machine has huge pages
    (:func:`huge_pages_available`); otherwise it changes nothing and says whether the variable is on.

    Examples
    --------
    >>> isinstance(prefer_huge_pages(), bool)
    True
    """
    if "torch" not in sys.modules and HUGE_PAGES not in os.environ and huge_pages_available():
        os.environ[HUGE_PAGES] = "1"
    return os.environ.get(HUGE_PAGES) == "1"


#: mallopt(3)'s parameters (glibc's malloc.h): free memory at the top of the heap above ``M_TRIM_THRESHOLD`` bytes
#: goes back to the kernel; a request of ``M_MMAP_THRESHOLD`` bytes or more gets its own mapping.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: What :func:`keep_freed_memory` sets: glibc's largest mmap threshold on 64-bit systems
#: (``DEFAULT_MMAP_THRESHOLD_MAX``, 32 MB), and 256 MB of freed memory a heap may hold before it hands any back.
KEPT_MMAP_THRESHOLD = 32 * 1024 * 1024
KEPT_TRIM_THRESHOLD = 256 * 1024 * 1024
#: Set to ``0`` in the environment, the command line and the app leave the C library's allocator as it is.
KEEP_FREED = "DPCORE_KEEP_FREED_MEMORY"
_kept: bool | None = None


def keep_freed_memory() -> bool:
    """Let the C library's allocator keep the memory a training step frees for the next step; return whether it does.

    A DP-SGD step allocates and frees the same large buffers every step (activations, their gradients, per-example
    gradients, im2col copies). By default glibc's malloc adapts two thresholds as a program runs: requests above
    the mmap threshold (at most 32 MB) get a fresh mapping, and free memory above the trim threshold (twice the
    other, at most 64 MB) at the top of a heap goes back to the kernel. Either way the next step touches new pages,
    and the kernel zero-fills each one on its first touch. A private step holds more at once than a non-private one
    (each example's gradients beside the activations), so it crosses the trim threshold where the non-private
    step does not, and pays the faults again at every step: on this project's 2-core machine, the small CNN's
    private step at batch 256 spent about as long in page faults as in its clipping.

    Fixing both thresholds (mmap at 32 MB, trim at 256 MB, through ``mallopt``) keeps the buffers in the heap from
    one step to the next. The cost: a process keeps up to 256 MB of freed memory per malloc arena instead of
    handing it back. The command line (:func:`dpcore.cli.main`) and the app
    (:func:`dpcore.runtime.serving.load_libraries`) call it, as they ask for huge pages; ``DPCORE_KEEP_FREED_MEMORY=0``
    turns it off. A library user may call it; dpcore does not change a process it did not start. Only glibc has
    ``mallopt``: elsewhere (macOS, Windows, musl) nothing changes and it returns False.

    Examples
    --------
    >>> isinstance(keep_freed_memory(), bool)
    True
    """
    global _kept
    if _kept is None:
        _kept = False
        if os.environ.get(KEEP_FREED, "1") != "0" and sys.platform.startswith("linux") \
                and platform.libc_ver()[0] == "glibc":
            try:
                libc = ctypes.CDLL(None)  # the process's own symbols, libc's among them (find_library may run
                # ldconfig or a compiler: a CLI command would wait for it)
                _kept = bool(libc.mallopt(M_MMAP_THRESHOLD, KEPT_MMAP_THRESHOLD)) \
                    and bool(libc.mallopt(M_TRIM_THRESHOLD, KEPT_TRIM_THRESHOLD))
            except (OSError, AttributeError):
                _kept = False
    return _kept
