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
who wants it sets the variable before importing torch; dpcore does not change a process it did not start. It only
matters on Linux with transparent huge pages in ``madvise`` or ``always`` mode (``cat
/sys/kernel/mm/transparent_hugepage/enabled``); elsewhere torch ignores it.
"""
from __future__ import annotations

import os
import sys

#: The environment variable torch's CPU allocator reads (``c10/core/alloc_cpu.cpp``): ``1`` aligns allocations of
#: 2 MB or more to 2 MB and advises them as huge pages, ``0`` leaves them as they are.
HUGE_PAGES = "THP_MEM_ALLOC_ENABLE"


def prefer_huge_pages() -> bool:
    """Ask torch for huge pages for large tensors, unless the environment already says either way; return whether
    this process has them.

    Effective only before torch is imported (then it returns True when on); afterwards it changes nothing and says
    whether the setting torch read was on.

    Examples
    --------
    >>> isinstance(prefer_huge_pages(), bool)
    True
    """
    if "torch" not in sys.modules:
        os.environ.setdefault(HUGE_PAGES, "1")
    return os.environ.get(HUGE_PAGES) == "1"
