"""What a reproduction is: a paper's figure or table, its published numbers, and a live run of ours.

Each :class:`Reproduction` names the paper and where in it the result sits, states what the paper
reports, runs our implementation on the same data (or the closest offline data) and returns a
:class:`ReproductionResult`: a table with the published number beside ours, the curve behind it,
and :class:`Check` s, each a claim with its tolerance written out, that the tests assert. Runs
are seeded, so the same entry gives the same numbers on every machine and in every session.
"""
from __future__ import annotations

import contextvars
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from ..exceptions import DPValueError

#: ``on_progress(done, total, message)``: called as a reproduction's runs finish (a page draws a bar).
Progress = Callable[[int, int, str], None]


#: What a check tests. ``"level"``: our number against the paper's own number, within a tolerance the entry
#: justifies; ``"shape"``: an ordering or trend the paper claims (A beats B, accuracy rises with ε), which must hold
#: whatever the level. A check that would pass whatever the paper said is neither, and is not written.
CHECK_KINDS = ("level", "shape")
#: The statuses a reproduction can have, in the words the page and the command line show.
STATUSES = ("reproduced", "reproduced in shape", "not reproduced")


@dataclass(frozen=True)
class Check:
    """One claim of a reproduction, its number and whether it holds.

    ``claim`` is the sentence a reader sees, with the tolerance written in it, e.g.
    "moments accountant at 100 epochs <= 1.26 + 0.01"; ``kind`` is ``"level"`` or ``"shape"``
    (:data:`CHECK_KINDS`).
    """

    claim: str
    value: float
    holds: bool
    kind: str = "shape"

    def __post_init__(self) -> None:
        if self.kind not in CHECK_KINDS:
            raise DPValueError(f"kind must be one of {CHECK_KINDS}, got {self.kind!r}")


def at_least(claim: str, value: float, target: float, tolerance: float = 0.0, *, kind: str = "shape") -> Check:
    """``value >= target - tolerance``; the claim text states both numbers."""
    tol = f" - {tolerance:g}" if tolerance else ""
    return Check(f"{claim}: {value:.4g} >= {target:.4g}{tol}", float(value), bool(value >= target - tolerance), kind)


def at_most(claim: str, value: float, target: float, tolerance: float = 0.0, *, kind: str = "shape") -> Check:
    """``value <= target + tolerance``; the claim text states both numbers."""
    bound = f"{target:.4g}" + (f" + {tolerance:g}" if tolerance else "")
    if target == 0 and tolerance:  # "<= 0.02", not "<= 0 + 0.02"
        bound = f"{tolerance:g}"
    return Check(f"{claim}: {value:.4g} <= {bound}", float(value), bool(value <= target + tolerance), kind)


def within(claim: str, value: float, published: float, tolerance: float) -> Check:
    """A level check: ``|value - published| <= tolerance``, the tolerance justified by the entry."""
    return Check(f"{claim}: {value:.4g} against the published {published:.4g} ± {tolerance:g}", float(value),
                 bool(abs(value - published) <= tolerance), "level")


@dataclass(frozen=True, eq=False)
class ReproductionResult:
    """What a live run gives back (pandas and plain values, so it pickles for a page's cache).

    Attributes
    ----------
    name : str
    table : DataFrame
        Columns ``quantity``, ``published`` (NaN where the paper shows only a curve) and ``ours``.
    curve : DataFrame or None
        Tidy: ``x``, ``value``, ``series`` (and ``sd`` over seeds where it applies).
    checks : tuple of Check
    gap : str
        Plainly, what we do not reproduce and why ("" when everything is reproduced).
    seconds : float
    published_points : tuple of (x, value, label)
        The paper's own numbers placed on the curve's axes, where the paper gives them.
    releases : tuple of (dataset, identity, release)
        Every private run the entry trained: its dataset, what names the run (learner, dataset, settings) and what
        it released (``event`` as JSON text, ``epsilon``, ``delta``, ``neighbouring``, ``unit``, ``federation``, as a
        sweep's row has them), so a page can count the runs it shows in a visitor's session total.
    """

    name: str
    table: pd.DataFrame
    curve: pd.DataFrame | None
    checks: tuple[Check, ...]
    gap: str
    seconds: float
    published_points: tuple[tuple[float, float, str], ...] = ()
    releases: tuple[tuple[str, tuple, dict], ...] = ()

    @property
    def passed(self) -> bool:
        """Every check holds."""
        return all(c.holds for c in self.checks)

    @property
    def status(self) -> str:
        """"reproduced": every check holds, the paper's own numbers within their tolerances; "reproduced in shape":
        every ordering and trend the paper claims holds but a level check fails (the gap says why, and by how
        much); "not reproduced": an ordering or trend fails, or the entry has only level checks and one fails."""
        shape = [c for c in self.checks if c.kind == "shape"]
        if self.passed:
            return "reproduced"
        if shape and all(c.holds for c in shape):
            return "reproduced in shape"
        return "not reproduced"

    def to_dict(self) -> dict:
        """A JSON-ready summary (NaN published numbers become None)."""
        def _num(v):
            return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)

        return {
            "name": self.name,
            "rows": [{"quantity": r.quantity, "published": _num(r.published), "ours": _num(r.ours)}
                     for r in self.table.itertuples()],
            "checks": [{"claim": c.claim, "value": c.value, "holds": c.holds, "kind": c.kind} for c in self.checks],
            "gap": self.gap,
            "passed": self.passed,
            "status": self.status,
            "seconds": round(self.seconds, 2),
        }


@dataclass(frozen=True)
class Outcome:
    """What an entry's ``run`` returns; :func:`run_reproduction` adds the name and the time."""

    table: pd.DataFrame
    curve: pd.DataFrame | None
    checks: Sequence[Check]
    gap: str = ""
    published_points: Sequence[tuple[float, float, str]] = ()


@dataclass(frozen=True)
class Reproduction:
    """One published result and how we reproduce it.

    Parameters
    ----------
    name : str
        Short slug (``python -m dpcore reproduce NAME``).
    title : str
    citation : str
        Authors, year, title, venue.
    where : str
        The figure, table or section.
    published : str
        What the paper reports, in a sentence or two.
    setup : str
        What we run live.
    difference : str
        One line on any difference in setup.
    x_label, y_label : str
        Axes of the curve.
    run : callable
        ``run(progress) -> Outcome``; ``progress(done, total, message)``.
    log_x : bool
        Whether the curve's x axis is logarithmic.
    epsilon : float or None
        The ε of the paper's headline result (the page judges it with the verdict bands).
    epsilon_note : str
        What that ε covers, when it is not the same for every series (said beside the verdict).
    delta : float
        The δ that ε is stated at (0 for a pure ε guarantee): the verdict of an (ε, δ) result names it, as its odds
        bound holds only up to that additive δ (Dwork & Roth 2014, Definition 2.4).
    log_y : bool
        Whether the curve's y axis is logarithmic.
    url : str
        Where to read the paper: its arXiv or DOI address (or the method's paper, for a course report).
    """

    name: str
    title: str
    citation: str
    where: str
    published: str
    setup: str
    difference: str
    x_label: str
    y_label: str
    run: Callable[[Progress], Outcome] = field(repr=False)
    log_x: bool = True
    epsilon: float | None = None
    log_y: bool = False
    epsilon_note: str = ""
    url: str = ""
    delta: float = 0.0

    @property
    def cite(self) -> str:
        """Short citation: "Abadi et al. 2016", "Tramèr & Boneh 2021"."""
        authors, _, rest = self.citation.partition(",")
        year = re.search(r"\b(19|20)\d\d\b", self.citation)
        names = re.split(r",|&", self.citation[: year.start()] if year else authors)
        names = [n.strip() for n in names if n.strip()]
        if len(names) == 2:
            return f"{names[0]} & {names[1]} {year.group(0) if year else ''}".strip()
        return f"{names[0]}{' et al.' if len(names) > 2 else ''} {year.group(0) if year else ''}".strip()


REPRODUCTIONS: dict[str, Reproduction] = {}


def register(entry: Reproduction) -> Reproduction:
    """Add ``entry`` to :data:`REPRODUCTIONS` (names are unique)."""
    if entry.name in REPRODUCTIONS:
        raise DPValueError(f"a reproduction named {entry.name!r} is already registered")
    REPRODUCTIONS[entry.name] = entry
    return entry


def reproduction_names() -> list[str]:
    """The registered names, in the order they were added."""
    return list(REPRODUCTIONS)


def get_reproduction(name: str) -> Reproduction:
    """The entry called ``name``; a clear error listing the names otherwise."""
    try:
        return REPRODUCTIONS[name]
    except KeyError:
        raise DPValueError(f"no reproduction named {name!r}; choose one of {', '.join(REPRODUCTIONS)} "
                           "(python -m dpcore reproduce --list)") from None


#: The private runs of the reproduction running in this thread (:func:`note_release`), None outside one.
_RELEASES: contextvars.ContextVar[list | None] = contextvars.ContextVar("dpcore_reproduction_releases", default=None)


def note_release(learner: str, dataset: str, settings: Mapping[str, Any], result) -> None:
    """Keep what a private run of the reproduction running now released (nothing for a run without a guarantee, or
    outside :func:`run_reproduction`): ``result`` is the learner's :class:`~dpcore.learners.RunResult`, or what it
    released (:meth:`~dpcore.learners.RunResult.release`, a sweep's row), ``settings`` what it was run with
    (epsilon, delta, seed, params)."""
    out = _RELEASES.get()
    release = result if isinstance(result, Mapping) else result.release()
    if out is None or not release.get("neighbouring"):
        return
    dataset = dataset if isinstance(dataset, str) else getattr(dataset, "name", str(dataset))
    out.append((dataset, (learner, dataset, repr(sorted(settings.items()))), release))


def run_reproduction(name: str, *, on_progress: Progress | None = None) -> ReproductionResult:
    """Run the entry ``name`` live and return the published numbers beside ours (and what its private runs
    released: :attr:`ReproductionResult.releases`)."""
    entry = get_reproduction(name)
    t0 = time.perf_counter()
    token = _RELEASES.set([])
    try:
        out = entry.run(on_progress or (lambda done, total, message: None))
        releases = tuple(_RELEASES.get())
    finally:
        _RELEASES.reset(token)
    return ReproductionResult(name=name, table=out.table.reset_index(drop=True), curve=out.curve,
                              checks=tuple(out.checks), gap=out.gap, seconds=time.perf_counter() - t0,
                              published_points=tuple((float(x), float(v), str(label))
                                                     for x, v, label in out.published_points),
                              releases=releases)
