"""``reproduce`` command: run a paper's result live and print the published numbers beside ours.

``python -m dpcore reproduce --list`` lists the entries; ``python -m dpcore reproduce NAME`` runs one
(progress on stderr); ``python -m dpcore reproduce --all`` runs every entry; ``--json`` prints one JSON
object per entry (``name``, ``rows`` of ``quantity``/``published``/``ours``, ``checks``, ``gap``,
``passed``, ``status``, ``url``, ``seconds``) on the last line. Each entry's status is "reproduced" (every claim
holds, the paper's numbers within their tolerances), "reproduced in shape" (its orderings and trends hold, its
level does not: the gap says by how much) or "not reproduced"; the exit status is 1 when an entry is not
reproduced, 0 otherwise.
"""
from __future__ import annotations

import math
import sys

from ..exceptions import DPValueError
from ..reproduce import get_reproduction, reproduction_names, run_reproduction
from . import JSON_HELP, command_help, print_json


def add_parser(sub) -> None:
    p = sub.add_parser(
        "reproduce", help=command_help("reproduce"),
        description="Run a published result live (Abadi et al. 2016, Chaudhuri et al. 2011, Papernot et al. 2017, "
                    "...) and print the paper's numbers beside ours, the checks with their tolerances and any "
                    "difference in setup. The exit status is 1 when an entry run is not reproduced (so a script "
                    "notices), 0 when every one is reproduced or reproduced in shape.")
    p.add_argument("name", nargs="?", help="the entry to run (see --list)")
    p.add_argument("--list", action="store_true", help="list the entries and exit")
    p.add_argument("--all", action="store_true", help="run every entry")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=_run)


def _fmt(v: float) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.4g}"


def _progress(done: int, total: int, message: str) -> None:
    print(f"[{done}/{total}] {message}", file=sys.stderr, flush=True)


def _print(result, entry) -> None:
    print(f"{entry.title}  ({entry.name})")
    print(f"  {entry.citation}; {entry.where}" + (f"; {entry.url}" if entry.url else ""))
    print(f"  published: {entry.published}")
    print(f"  ours:      {entry.setup}")
    print(f"  setup differs: {entry.difference}")
    width = max(len(q) for q in result.table.quantity)
    print(f"\n  {'quantity':<{width}}  {'published':>10}  {'ours':>10}")
    for row in result.table.itertuples():
        print(f"  {row.quantity:<{width}}  {_fmt(row.published):>10}  {_fmt(row.ours):>10}")
    print()
    for c in result.checks:
        what = "the paper's number" if c.kind == "level" else "ordering or trend"
        print(f"  [{'ok' if c.holds else 'FAILS'}] ({what}) {c.claim}")
    if result.gap:
        print(f"  gap: {result.gap}")
    print(f"  status: {result.status} ({result.seconds:.1f} s)\n")


def _entry_dict(entry) -> dict:
    """What the text output says about an entry besides its numbers: the paper, what it reports, what runs."""
    return {"name": entry.name, "title": entry.title, "citation": entry.citation, "where": entry.where,
            "published_text": entry.published, "setup": entry.setup, "setup_differs": entry.difference,
            "url": entry.url}


def _run(args) -> int:
    if args.list:
        names = reproduction_names()
        if args.json:
            print_json([_entry_dict(get_reproduction(n)) for n in names])
            return 0
        width = max(map(len, names))  # the titles line up whatever the longest name
        for name in names:
            e = get_reproduction(name)
            print(f"{name:<{width}}  {e.cite}: {e.title}")
        return 0
    if args.all and args.name:
        raise DPValueError(f"give an entry's name ({args.name}) or --all, not both")
    if args.all:
        names = reproduction_names()
    elif args.name:
        names = [get_reproduction(args.name).name]
    else:
        raise DPValueError("name an entry to run (python -m dpcore reproduce --list shows them), or give --all")
    results = []
    for name in names:
        r = run_reproduction(name, on_progress=_progress)
        results.append(r)
        if not args.json:
            _print(r, get_reproduction(name))
    if args.json:
        docs = [{**_entry_dict(get_reproduction(r.name)), **r.to_dict()} for r in results]
        print_json(docs[0] if len(docs) == 1 and not args.all else docs)
    return 0 if all(r.status != "not reproduced" for r in results) else 1
