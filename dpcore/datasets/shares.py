"""Declared class shares: how common each class of a label is, stated by the data's owner as public knowledge.

A classifier trained on an imbalanced label (88 % "ok", 7 % "fraud", 5 % "review") learns class probabilities
p(y | x) that lean on the common class; answering their argmax, a private model answers "ok" for every row. Divided
by the classes' shares before the argmax, the same probabilities answer the class that is most likely *relative to
how common it is*: the Bayes decision for balanced accuracy (Elkan 2001; Saerens, Latinne & Decaestecker 2002).
That is post-processing of the released model, and costs no privacy only if the shares are not read from the
private rows: like feature bounds, they are declared from what is known outside the data (a published fraud
rate), never estimated from its labels. :func:`parse_class_shares` reads such a declaration.

References
----------
C. Elkan, "The foundations of cost-sensitive learning", IJCAI 2001.
M. Saerens, P. Latinne, C. Decaestecker, "Adjusting the outputs of a classifier to new a priori probabilities: a
simple procedure", Neural Computation 14(1), 2002.
"""
from __future__ import annotations

import math
import re
from typing import Mapping, Sequence

from ..exceptions import DatasetError

#: How declared class shares are written, on the command line (``--class-shares``) and on the pages.
CLASS_SHARES_SYNTAX = ("CLASS=SHARE for every class of the label, separated by commas or new lines, the shares "
                       "summing to 1 (e.g. fraud=0.07, review=0.05, ok=0.88); a class name with a comma goes in "
                       "double quotes")
#: The shares must sum to 1 within this much (published rates are rounded); they are then scaled to sum to 1.
SUM_TOLERANCE = 0.05
#: One entry: anything up to a comma, semicolon or new line that is not inside double quotes.
_ENTRY = re.compile(r'(?:"[^"\n]*"|[^,;\n"])+|"[^"\n]*$')


def _entries(text: str, mistakes: list[str], parameter: str) -> dict[str, object]:
    items: dict[str, object] = {}
    for entry in (e.strip() for e in _ENTRY.findall(text)):
        if not entry:
            continue
        name, eq, value = entry.rpartition("=")
        name = name.strip()
        if not eq or not name:
            mistakes.append(f"{parameter}: cannot read {entry!r}; write {CLASS_SHARES_SYNTAX}")
            continue
        if len(name) >= 2 and name[0] == name[-1] == '"':
            name = name[1:-1]
        if name in items:
            mistakes.append(f"{parameter}: the class {name!r} is given twice")
            continue
        items[name] = value.strip()
    return items


def parse_class_shares(spec: "str | Mapping | None", classes: Sequence, *,
                       parameter: str = "class_shares", named: bool = True) -> tuple[float, ...]:
    """Declared class shares, checked against the label's ``classes`` and scaled to sum to 1.

    Parameters
    ----------
    spec : str, mapping or None
        ``"fraud=0.07, review=0.05, ok=0.88"`` or ``{"fraud": 0.07, ...}``: a share for every class, each > 0,
        together about 1 (within :data:`SUM_TOLERANCE`). ``None`` or blank text declares nothing.
    classes : sequence
        The label's classes in the order of its class indices (a Dataset's ``target_names``); a class is named as
        it is written there (numbers as text: ``"0"``, ``"1"``).
    parameter : str
        How the caller's users call this setting (``--class-shares`` on the command line), for the messages.
    named : bool
        Whether the messages may name the classes the caller did not type. False where the classes were read from
        a private table's rows (an uploaded label whose classes were not declared): a class only a rare record holds
        would give that record away, so a mistake is then said with the names typed and the number of classes only.

    Returns
    -------
    tuple of float
        One share per class, in the order of ``classes``, summing to 1; empty when nothing is declared.

    Raises
    ------
    DatasetError
        Naming ``parameter`` and what to change: an unknown or missing class, a share that is not a number, is not
        above 0, or shares that do not sum to about 1.

    Examples
    --------
    >>> parse_class_shares("fraud=0.07, review=0.05, ok=0.88", ("fraud", "ok", "review"))
    (0.07, 0.88, 0.05)
    >>> parse_class_shares({0: 0.9, 1: 0.1}, ("0", "1"))
    (0.9, 0.1)
    >>> parse_class_shares("a=0.5", ("a", "b"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpcore.exceptions.DatasetError: class_shares: no share for the class 'b'; declare one for every class of ...
    """
    if spec is None or (isinstance(spec, str) and not spec.strip()):
        return ()
    names = [str(c) for c in classes]
    listed = ", ".join(repr(n) for n in names)
    mistakes: list[str] = []
    if isinstance(spec, str):
        items = _entries(spec, mistakes, parameter)
    elif isinstance(spec, Mapping):
        items = {str(k): v for k, v in spec.items()}
    else:
        raise DatasetError(f"{parameter} must be text such as 'fraud=0.07, ok=0.93' or a mapping {{class: share}}, "
                           f"got {type(spec).__name__}")
    shares: dict[str, float] = {}
    for name, value in items.items():
        if name not in names:
            mistakes.append(f"{parameter}: {name!r} is not a class of the label"
                            + (f"; its classes are {listed}" if named else ""))
            continue
        try:
            share = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            mistakes.append(f"{parameter}: the share of {name!r}, {value!r}, is not a number; write {name}=0.07")
            continue
        if not math.isfinite(share) or share <= 0:
            mistakes.append(f"{parameter}: the share of {name!r} must be above 0, got {value}; every class the "
                            "label holds has some share (a rate of 0 would make the class impossible)")
            continue
        shares[name] = share
    missing = [n for n in names if n not in items]
    if missing:
        which = (f"the class{'es' if len(missing) > 1 else ''} {', '.join(repr(n) for n in missing)}" if named else
                 f"{len(missing)} of the label's {len(names)} classes")
        mistakes.append(f"{parameter}: no share for {which}; declare one for every class of the label"
                        + (f" ({listed})" if named else ""))
    if not mistakes:
        total = math.fsum(shares.values())
        if abs(total - 1.0) > SUM_TOLERANCE:
            hint = (" (percentages? divide each by 100)" if abs(total - 100.0) <= 100 * SUM_TOLERANCE else "")
            mistakes.append(f"{parameter}: the shares sum to {total:g}, not 1{hint}; declare each class's share of "
                            "the rows as a fraction, the fractions summing to 1")
    unnamed = ("" if named or not (missing or set(items) - set(names)) else
               f". The label's {len(names)} classes were read from the rows, so they are not named here: declare them "
               "as categories (categories= in load_csv, --categories on the command line, 'Declared categories' on "
               "the pages), LABEL=CLASS|CLASS|..., from what the label means")
    if len(mistakes) == 1:
        raise DatasetError(mistakes[0] + unnamed)
    if mistakes:
        raise DatasetError(f"{len(mistakes)} mistakes in {parameter}: "
                           + " ".join(f"({i}) {m.removeprefix(parameter + ': ')}." for i, m in enumerate(mistakes, 1))
                           + (" " + unnamed.removeprefix(". ") + "." if unnamed else ""))
    total = math.fsum(shares.values())
    return tuple(shares[n] / total for n in names)


#: The shares the example table below is drawn near, written as a data owner would declare them.
EXAMPLE_SHARES = "fraud=0.07, review=0.05, ok=0.88"


def example_rare_class_table(n: int = 3000, seed: int = 0):
    """A synthetic table whose label has two rare classes, to try declared class shares on: five N(0, 1) features
    ``f0``..``f4`` (declare their bounds as ``'*=-5:5'``), and ``status`` drawn from a multinomial logistic model,
    about 88 % "ok", 7 % "fraud" and 5 % "review" (:data:`EXAMPLE_SHARES`). The rare classes depend on the features,
    so a model can find them; a private one answering the argmax of its probabilities answers "ok" for every row.

    Examples
    --------
    >>> t = example_rare_class_table(1000, seed=1)
    >>> sorted(t["status"].unique()), t.shape
    (['fraud', 'ok', 'review'], (1000, 6))
    """
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    W = np.array([[0, 0, 0, 0, 0], [2.4, -1.6, 1.2, 0, 0.8], [-1.2, 2.0, 0, 1.6, -1.0]])
    logits = X @ W.T + np.array([0.0, -5.35, -5.7])
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    y = (rng.random(n)[:, None] > np.cumsum(p, 1)).sum(1)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(5)])
    frame["status"] = np.array(["ok", "fraud", "review"])[y]
    return frame


__all__ = ["CLASS_SHARES_SYNTAX", "EXAMPLE_SHARES", "SUM_TOLERANCE", "example_rare_class_table", "parse_class_shares"]
