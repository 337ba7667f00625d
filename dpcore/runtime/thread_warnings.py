"""Warnings caught per thread: one visitor's page never shows, nor loses, the warnings of another's run.

Python's ``warnings.catch_warnings`` (before 3.14) is process-wide: ``record=True`` sends every warning of
every thread to the list of whichever thread entered last, and each block puts back, on leaving, the hook and
filters it found on entering, even when another thread changed them meanwhile. A Streamlit server runs each
visitor's page in a thread of its own and the shared runs (:mod:`dpcore.runtime.serving`) in others, so with those
blocks a student waiting on the Clustering page was shown the "no more accurate than the most common class"
warnings of another visitor's Trade-off sweep, and that sweep lost them; a block's late exit could even leave
another's recording hook in place for good, so that no page showed a warning again.

Here, while any :func:`caught` or :func:`ignored` block is open in any thread, one hook, :func:`_route`,
stands in Python's last step (``warnings._showwarnmsg_impl``, called after its filters) and hands each
warning to the innermost block *of the thread that raised it*. A warning no block of its thread takes goes
where it would have gone (written to stderr once per text and place, and not at all for the kinds Python
ignores by default: deprecations, imports, resources; or to pytest's recorder in a test). So that the same
warning reaches every run that raises it (as ``simplefilter("always")`` made ``record=True`` blocks see
repeats), an ``always`` filter stands first among the filters while a block is open. A block opened after
another ``catch_warnings`` took the hook away puts it back. The last block to close gives back what the hook
and the filter replaced, so outside the blocks Python's warnings behave as usual.

>>> import warnings
>>> with caught() as seen:
...     warnings.warn("noise drowned the signal")
>>> [str(w.message) for w in seen]
['noise drowned the signal']
"""
from __future__ import annotations

import contextlib
import re
import threading
import warnings
from dataclasses import dataclass
from typing import Iterator

__all__ = ["caught", "ignored"]

_ALWAYS = ("always", None, Warning, None, 0)
#: what Python shows nobody by default (its own default filters ignore them outside ``__main__``)
_QUIET_BY_DEFAULT = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)
_MAX_SEEN = 10_000

_local = threading.local()
_lock = threading.Lock()
_open_blocks = 0  # in every thread: the hook and the filter stay while any is open
_fallback = None  # where a warning that no block of its thread takes goes (what the hook replaced)
_added_filter = False  # whether the "always" filter first among the filters is ours to take away
_seen: set = set()


@dataclass(eq=False)  # blocks are told apart by identity: two empty ones are not the same block
class _Block:
    records: list | None = None  # caught(): the warnings go here
    category: type[Warning] = Warning  # ignored(): the warnings it drops...
    message: re.Pattern | None = None  # ...whose text matches, from the start


def _writes_to_stderr(impl) -> bool:
    """Whether ``impl`` is Python's own last step (it writes the warning to stderr), not someone's recorder."""
    return getattr(impl, "__module__", None) == "warnings" and getattr(impl, "__name__", "") == "_showwarnmsg_impl"


def _route(msg: warnings.WarningMessage) -> None:
    """The one hook: the warning goes to the innermost block of its own thread that takes it."""
    for block in reversed(getattr(_local, "frames", ())):
        if block.records is not None:
            block.records.append(msg)
            return
        if issubclass(msg.category, block.category) and (
                block.message is None or block.message.match(str(msg.message))):
            return  # ignored here
    fallback = _fallback or warnings._showwarnmsg_impl
    if fallback is _route:  # cannot happen while the hook is installed by _open; never loop
        return
    if _writes_to_stderr(fallback):  # the "always" filter lets repeats through: show each once, as Python would
        if issubclass(msg.category, _QUIET_BY_DEFAULT):
            return
        key = (msg.category, str(msg.message), msg.filename, msg.lineno)
        with _lock:
            if key in _seen:
                return
            if len(_seen) < _MAX_SEEN:
                _seen.add(key)
    fallback(msg)


def _enter() -> None:
    """Put the hook and the ``always`` filter in place (again, if another ``catch_warnings`` took them away)."""
    global _fallback, _open_blocks, _added_filter
    with _lock:
        _open_blocks += 1
        current = warnings._showwarnmsg_impl
        if current is not _route:
            _fallback = current  # Python's writer to stderr in a server; pytest's recorder in a test
            warnings._showwarnmsg_impl = _route
        if not warnings.filters or warnings.filters[0] != _ALWAYS:
            warnings.filters.insert(0, _ALWAYS)
            warnings._filters_mutated()
            _added_filter = True


def _leave() -> None:
    """The last open block of the process gives back what the hook and the filter replaced."""
    global _fallback, _open_blocks, _added_filter
    with _lock:
        _open_blocks -= 1
        if _open_blocks:
            return
        if warnings._showwarnmsg_impl is _route and _fallback is not None:
            warnings._showwarnmsg_impl = _fallback
        _fallback = None
        if _added_filter and warnings.filters and warnings.filters[0] == _ALWAYS:
            del warnings.filters[0]
            warnings._filters_mutated()
        _added_filter = False


@contextlib.contextmanager
def _open(block: _Block) -> Iterator[_Block]:
    frames = getattr(_local, "frames", None)
    if frames is None:
        frames = _local.frames = []
    _enter()
    frames.append(block)
    try:
        yield block
    finally:
        for i in range(len(frames) - 1, -1, -1):  # the innermost is this one, unless blocks closed out of order
            if frames[i] is block:
                del frames[i]
                break
        _leave()


@contextlib.contextmanager
def caught() -> Iterator[list[warnings.WarningMessage]]:
    """Every warning this thread raises inside the block, repeats included, in a list (others' are not in it)."""
    with _open(_Block(records=[])) as block:
        yield block.records


@contextlib.contextmanager
def ignored(category: type[Warning] = Warning, message: str = "") -> Iterator[None]:
    """Drop this thread's warnings of ``category`` whose text matches the regular expression ``message`` (from its
    start, as ``warnings.filterwarnings``); other threads' warnings are not touched."""
    with _open(_Block(category=category, message=re.compile(message, re.I) if message else None)):
        yield
