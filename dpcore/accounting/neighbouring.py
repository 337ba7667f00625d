"""Who counts as a neighbour: the one typed name for the privacy unit's relation.

A guarantee "epsilon-DP" means nothing until it says which pairs of data sets
must be indistinguishable. dpcore names the two relations it uses once, here,
and maps them to dp_accounting's ``NeighboringRelation``; every function that
lets a caller choose accepts a :class:`Neighbouring` (or, for compatibility,
one of the spellings the code used before, converted once by
:meth:`Neighbouring.of`).

References
----------
Dwork and Roth, "The Algorithmic Foundations of Differential Privacy", 2014,
Definition 2.4 (add/remove); Vadhan, "The Complexity of Differential Privacy",
2017, Section 1.1 (replace-one). Under add/remove a mechanism that is epsilon-DP
is 2 epsilon-DP under replace-one (replacing is removing then adding), not the
other way round.
"""
from __future__ import annotations

import enum
import math

import dp_accounting

from ..exceptions import DPCoreWarning, DPTypeError, DPValueError

__all__ = ["UNITS", "UNIT_SAID", "Neighbouring", "common_unit", "compose_guarantees", "covers", "replace_one_guarantee",
           "replace_one_within", "restated_for_replaced"]


class Neighbouring(enum.Enum):
    """The neighbouring relation a privacy guarantee refers to.

    Examples
    --------
    >>> Neighbouring.of("replace-one") is Neighbouring.REPLACE_ONE
    True
    >>> Neighbouring.of("add_remove").relation
    <NeighboringRelation.ADD_OR_REMOVE_ONE: 1>
    >>> Neighbouring.ADD_REMOVE.spelling
    'add-remove'
    """

    #: Two data sets are neighbours if one is the other with one record added or removed
    #: (Abadi et al. 2016 for DP-SGD; Su et al. 2016 for DPLloyd; the unit of user-level FedAvg).
    ADD_REMOVE = "add_remove"
    #: Two data sets of the same size are neighbours if one record's values differ
    #: (Chaudhuri et al. 2011; randomized response; label DP, where only the label changes).
    REPLACE_ONE = "replace_one"

    @property
    def relation(self) -> dp_accounting.NeighboringRelation:
        """dp_accounting's name for the same relation."""
        return _RELATIONS[self]

    @property
    def spelling(self) -> str:
        """The hyphenated word the pages and estimators show (``"add-remove"``, ``"replace-one"``)."""
        return self.value.replace("_", "-")

    @property
    def description(self) -> str:
        """A phrase for captions: what a neighbouring data set is."""
        return "one record added or removed" if self is Neighbouring.ADD_REMOVE else "one record replaced"

    @classmethod
    def of(cls, value: "Neighbouring | dp_accounting.NeighboringRelation | str", name: str = "neighbouring"
           ) -> "Neighbouring":
        """Convert any accepted spelling once, at the boundary; unknown spellings get a clear error.

        Accepted: a :class:`Neighbouring`; dp_accounting's ``ADD_OR_REMOVE_ONE`` / ``REPLACE_ONE``;
        the strings ``"add_remove"``, ``"add-remove"``, ``"add/remove"``, ``"add_or_remove_one"``,
        ``"replace_one"``, ``"replace-one"``, ``"replace"`` (any case).
        """
        if isinstance(value, cls):
            return value
        if isinstance(value, dp_accounting.NeighboringRelation):
            for member, rel in _RELATIONS.items():
                if rel is value:
                    return member
            raise DPValueError(f"{name}: dpcore uses ADD_OR_REMOVE_ONE or REPLACE_ONE, got {value!r}")
        if not isinstance(value, str):
            raise DPTypeError(f"{name} must be a Neighbouring or a string such as 'add-remove', got "
                              f"{type(value).__name__}")
        key = value.strip().lower().replace("-", "_").replace("/", "_").replace(" ", "_")
        if key in _SPELLINGS:
            return _SPELLINGS[key]
        raise DPValueError(f"{name} must be 'add-remove' (a record added or removed) or 'replace-one' "
                           f"(a record replaced), got {value!r}")


_RELATIONS = {
    Neighbouring.ADD_REMOVE: dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
    Neighbouring.REPLACE_ONE: dp_accounting.NeighboringRelation.REPLACE_ONE,
}
_SPELLINGS = {
    "add_remove": Neighbouring.ADD_REMOVE,
    "add_or_remove": Neighbouring.ADD_REMOVE,
    "add_or_remove_one": Neighbouring.ADD_REMOVE,
    "replace_one": Neighbouring.REPLACE_ONE,
    "replace": Neighbouring.REPLACE_ONE,
}


#: What of each record a guarantee protects (a run's ``unit``, a :class:`~dpcore.accounting.PrivacyLedger`'s): the
#: whole record; its label alone (label DP: the features are used in the clear); its image alone (noisy images whose
#: labels are used in the clear); a client's whole data (user-level federated learning, McMahan et al. 2018).
UNITS = ("records", "labels", "images", "clients")
#: Each unit in words: "ε = 3 for {UNIT_SAID[unit]}".
UNIT_SAID = {"records": "each record", "labels": "each record's label", "images": "each record's image",
             "clients": "each client's whole data"}
#: The units a guarantee of each unit protects. A whole record's covers its label and its image (changing either
#: changes the record). A label's or an image's covers only itself. A client's covers no record as it is: a record
#: added changes what its client holds (a client replaced, not added or removed), and which client holds which
#: record was dealt out from the data itself, so a records total may not take it.
_COVERS = {"records": ("records", "labels", "images"), "labels": ("labels",), "images": ("images",),
           "clients": ("clients",)}


def _unit(unit, name: str = "unit") -> str:
    unit = "records" if unit is None or unit == "" else unit
    if unit not in _COVERS:
        raise DPValueError(f"{name} must be one of {', '.join(map(repr, UNITS))} (what of each record an ε protects), "
                           f"got {unit!r}")
    return unit


def covers(unit: str, of: str) -> bool:
    """Whether a guarantee protecting ``unit`` protects ``of`` too.

    >>> covers("records", "labels"), covers("labels", "records"), covers("clients", "records")
    (True, False, False)
    """
    return _unit(of) in _COVERS[_unit(unit)]


def common_unit(units) -> str | None:
    """The unit that every guarantee of ``units`` protects (the widest such, in the order of :data:`UNITS`), or None
    when there is none: runs of label DP and of noisy images protect no one thing together. No units at all (or ``""``
    and None, a run that does not say) count as whole records.

    >>> common_unit(["records", "records"]), common_unit(["records", "labels"]), common_unit(["labels", "images"])
    ('records', 'labels', None)
    >>> common_unit(["clients", "records"]) is None
    True
    """
    if isinstance(units, str):
        raise DPTypeError(f"units must be a list of units such as ['records', 'labels'], got the string {units!r}: "
                          f"give [{units!r}] for one")
    shared = set(UNITS)
    for unit in units:
        shared &= set(_COVERS[_unit(unit)])
    return next((unit for unit in UNITS if unit in shared), None)


def replace_one_guarantee(epsilon: float, delta: float) -> tuple[float, float]:
    """What an (epsilon, delta) guarantee under add/remove says under replace-one: (2 epsilon, (1 + e^epsilon) delta).

    Replacing a record is removing it and then adding another, so the add/remove inequality is applied twice:
    P[M(D) in S] <= e^eps (e^eps P[M(D') in S] + delta) + delta (group privacy for a group of two, Dwork and Roth
    2014, Theorem 2.2 and its (epsilon, delta) form). A delta of 1 or more says nothing: it is returned as 1, with an
    infinite epsilon, never as a smaller bound.

    Examples
    --------
    >>> replace_one_guarantee(1.0, 1e-5)
    (2.0, 3.718281828459048e-05)
    >>> replace_one_guarantee(800.0, 1e-5)
    (inf, 1.0)
    """
    epsilon, delta = float(epsilon), float(delta)
    if not (epsilon >= 0 and 0 <= delta):
        raise DPValueError(f"replace_one_guarantee: epsilon >= 0 and delta >= 0 are needed, got {epsilon!r}, "
                           f"{delta!r}")
    try:
        stretched = delta * (1.0 + math.exp(epsilon)) if delta > 0 else 0.0
    except OverflowError:
        stretched = math.inf
    for _ in range(4 if 0 < stretched < math.inf else 0):  # exp, the sum and the product each round: a few units up
        stretched = math.nextafter(stretched, math.inf)
    if not stretched < 1 or not math.isfinite(epsilon):
        return math.inf, 1.0
    return 2.0 * epsilon, stretched


def replace_one_within(epsilon_at, delta: float, *, per_decade: int = 4, decades: int = 60) -> tuple[float, float]:
    """The replace-one guarantee, with a δ of at most ``delta``, of an add/remove composition whose ε at any δ′ is
    ``epsilon_at(δ′)`` (a ledger's privacy curve).

    :func:`replace_one_guarantee` holds at every point (ε(δ′), δ′) of the curve, as (2 ε(δ′), (1 + e^ε(δ′)) δ′).
    Read at ``delta`` itself, its δ is 1 + e^ε times larger (at ε = 10, about 22,000 times: past 1, no bound); read
    at a smaller δ′ whose stretched δ stays within ``delta``, the bound keeps the runs' own δ at a somewhat larger
    ε. δ′ is searched downwards from ``delta``, ``per_decade`` points a decade over ``decades`` decades, then
    refined by bisection between the first point that fits and the one before it: the largest δ′ found that fits,
    hence the smallest ε. Every point returned is :func:`replace_one_guarantee` of one point of the curve, so it
    holds whatever the search finds; none fits (an infinite or huge curve): ``(inf, 1.0)``.

    >>> curve = lambda d: 0.5 + math.sqrt(2 * math.log(1.25 / d))  # an add/remove total's epsilon at delta d
    >>> e, d = replace_one_guarantee(curve(1e-5), 1e-5)  # read at 1e-5: a delta 211 times larger
    >>> round(e, 2), round(d, 5)
    (10.69, 0.00211)
    >>> e, d = replace_one_within(curve, 1e-5)  # read at a delta' near 1.5e-8: the runs' own delta
    >>> round(e, 2), d <= 1e-5
    (13.09, True)
    """
    delta = float(delta)
    if not 0 < delta < 1:
        return replace_one_guarantee(float(epsilon_at(delta)), delta) if delta == 0 else (math.inf, 1.0)

    def at(log_d: float) -> tuple[float, float] | None:
        """The guarantee read at δ′ = e^log_d if it fits within ``delta``; None if not; ``(inf, 1.0)`` if the
        curve is infinite there (and so at every smaller δ′)."""
        e = float(epsilon_at(math.exp(log_d)))
        if not math.isfinite(e):
            return math.inf, 1.0
        eps, stretched = replace_one_guarantee(e, math.exp(log_d))
        return (eps, stretched) if stretched <= delta else None

    top, step = math.log(delta), math.log(10.0) / per_decade
    above = None  # the last point tried that did not fit
    for k in range(per_decade * decades + 1):
        x = top - k * step
        if math.exp(x) <= 0.0:
            break
        best = at(x)
        if best is None:
            above = x
            continue
        if not math.isfinite(best[0]) or above is None:
            return best
        lo, hi = x, above  # lo fits, hi does not
        for _ in range(12):
            tried = at((lo + hi) / 2)
            if tried is None:
                hi = (lo + hi) / 2
            elif math.isfinite(tried[0]):
                lo, best = (lo + hi) / 2, min(best, tried)
            else:
                break
        return best
    return math.inf, 1.0


def restated_for_replaced(epsilon_at, epsilon: float, delta: float, relation) -> tuple[float, float, "Neighbouring"]:
    """One total of runs under ``relation`` (their composition's ε at any δ′ is ``epsilon_at(δ′)``; at their own
    ``delta`` it is ``epsilon``, which may be the basic sum, below the curve there), ready for
    :func:`compose_guarantees` beside totals under the other relation: a replace-one (or infinite) total as it is;
    an add/remove one for a record replaced by :func:`replace_one_within` on its curve, or, where no smaller δ′
    fits, as it stands (``compose_guarantees`` then restates it at its own δ).

    The search probes the curve below ``delta``, where a ledger whose (ε, δ) runs spend more δ than the point read
    says so (and answers infinity, where the search stops): those probes' warnings are not the caller's.
    """
    rel = Neighbouring.of(relation)
    epsilon, delta = float(epsilon), float(delta)
    if rel is Neighbouring.REPLACE_ONE or not math.isfinite(epsilon):
        return epsilon, delta, rel

    def curve(d: float) -> float:
        return epsilon if d == delta else epsilon_at(d)

    from ..runtime.thread_warnings import ignored  # this thread's only: a server runs other visitors' beside it

    with ignored(DPCoreWarning):
        e, d = replace_one_within(curve, delta)
    return (e, d, Neighbouring.REPLACE_ONE) if math.isfinite(e) else (epsilon, delta, rel)


def compose_guarantees(guarantees) -> tuple[float, float, bool]:
    """``(epsilon, delta, replaced)`` of ``(epsilon, delta, relation)`` guarantees on the same data released
    together, by basic composition (Dwork and Roth 2014, Theorem 3.16: the epsilons add up at the sum of the deltas).

    Under one relation (or none said) they add up as they are. Under both, a guarantee for a record replaced says
    nothing of one added or removed, so the total is stated for a record replaced (``replaced`` True): each other
    guarantee restated by :func:`replace_one_guarantee`. A total whose delta reaches 1 says nothing: infinity.

    >>> compose_guarantees([(1.0, 0.0, "replace-one"), (0.5, 1e-5, "add-remove")])[::2]
    (2.0, True)
    >>> compose_guarantees([(1.0, 1e-5, None), (2.0, 1e-5, "add-remove")])
    (3.0, 2e-05, False)
    """
    rows = [(float(e), float(d), None if r is None or r == "" else Neighbouring.of(r)) for e, d, r in guarantees]
    for e, d, _ in rows:  # a negative part would take privacy back from the others: (-1, 0) and (1, 0) summed to 0
        if e < 0 or d < 0:
            raise DPValueError(f"compose_guarantees: every epsilon and delta must be >= 0 (a guarantee never takes "
                               f"privacy back), got epsilon={e!r}, delta={d!r}")
    replaced = len({r for _, _, r in rows if r is not None}) > 1
    pairs = [replace_one_guarantee(e, d) if replaced and r is not Neighbouring.REPLACE_ONE else (e, d)
             for e, d, r in rows]
    from .events import added_up

    epsilon = delta = 0.0
    for e, d in pairs:  # added exactly, rounded up (in floating point the sums fell below about half the time)
        epsilon, delta = added_up(epsilon, 1, e), added_up(delta, 1, d)
    return (epsilon, delta, replaced) if delta < 1 else (math.inf, 1.0, replaced)
