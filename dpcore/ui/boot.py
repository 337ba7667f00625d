"""Imported first by every page and by the router: loads every library and every dpcore module once per server
process, in one thread, before any page imports or computes anything.

Why: a server runs each visitor's page in its own thread, and imports that interleave across threads can fail (see
:func:`dpcore.runtime.serving.load_libraries` for what three to six browsers opening pages at once on a fresh server
hit).
Importing this module holds Python's lock on it until everything is loaded, so a page that imports it while another
page is loading simply waits; once loaded, importing it again costs nothing. A page must import it before any
other library (``ruff`` keeps it first: its own import section in ``pyproject.toml``; a test checks every page).
"""
from __future__ import annotations

from ..runtime.serving import load_libraries

load_libraries(packages=("dpcore",))
