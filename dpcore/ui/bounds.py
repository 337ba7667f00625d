"""Declared bounds as a table a person can fill in: one row per column with its lower and upper end and where they
come from ("public knowledge", typed by the owner, or "read from the data", which leaks and is flagged).

The text box of the upload (``age=17:90, *=0:1``, the command line's ``--bounds``) stays the one source of truth, so
a link keeps carrying it: the table is filled from the box, and "Use these bounds" writes the box.
"""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from ..datasets.csv_upload import BoundsError, _as_typed, parse_bounds

PUBLIC = "public"  # public knowledge, typed by the owner
FROM_DATA = "data (leaks)"  # read from the rows: their extremes are private values
SOURCES = (PUBLIC, FROM_DATA)


def _number(v) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def table_rows(columns: list[str], text: str) -> pd.DataFrame:
    """One row per column, filled from the bounds box's ``text`` (a ``*`` rule fills the columns it covers).

    >>> table_rows(["age", "income"], "age=18:100").to_dict("records")[0]
    {'column': 'age', 'lower': 18.0, 'upper': 100.0, 'source': 'public'}
    """
    try:
        declared = parse_bounds(text or None)
    except BoundsError:
        declared = {}
    rows = []
    for c in columns:
        lo_hi = declared.get(c, declared.get("*"))
        rows.append({"column": c, "lower": lo_hi[0] if lo_hi else None, "upper": lo_hi[1] if lo_hi else None,
                     "source": PUBLIC if lo_hi else FROM_DATA})
    return pd.DataFrame(rows, columns=["column", "lower", "upper", "source"])


def table_to_text(table: pd.DataFrame) -> tuple[str, list[str]]:
    """The bounds box's text for a filled table, and what is missing (a public row without both ends).

    >>> table_to_text(pd.DataFrame({"column": ["age", "weight, kg", "x"], "lower": [18, 30, None],
    ...                             "upper": [100, 200.5, None], "source": [PUBLIC, PUBLIC, FROM_DATA]}))
    ('age=18:100\\n"weight, kg"=30:200.5', [])
    """
    lines, missing = [], []
    for row in table.itertuples(index=False):
        if row.source != PUBLIC:
            continue
        lo, hi = _number(row.lower), _number(row.upper)
        if lo is None or hi is None:
            missing.append(f"{row.column!r} is marked public but has no "
                           + ("lower or upper end" if lo is None and hi is None else
                              "lower end" if lo is None else "upper end"))
            continue
        lines.append(f"{_as_typed(str(row.column))}={lo:.15g}:{hi:.15g}")
    return "\n".join(lines), missing


def _apply(text_key: str, table: pd.DataFrame, problem_key: str) -> None:
    text, missing = table_to_text(table)
    if missing:
        st.session_state[problem_key] = "; ".join(missing) + ": fill both ends, or mark it read from the data."
        return
    st.session_state.pop(problem_key, None)
    st.session_state[text_key] = text  # a callback runs before the box is drawn again: the box takes it


def bounds_table(columns: list[str], text_key: str, *, container=None) -> None:
    """The table editor of the bounds, in a folded section of ``container`` (the sidebar by default)."""
    c = container or st.sidebar
    problem_key = f"{text_key}.table_problem"
    current = st.session_state.get(text_key, "")
    # a popover, not an expander: it opens wider than the sidebar, so four columns fit
    with c.popover("Declare bounds in a table", width="stretch"):
        st.caption("Source **public**: public knowledge, what the column can hold, typed by you. **data (leaks)**: "
                   "read from the file's own extremes, which leaks and is flagged.")
        edited = st.data_editor(
            table_rows(columns, current), key=f"{text_key}.table.{abs(hash(current)) % 10**8}", hide_index=True,
            disabled=["column"], width="stretch",
            column_config={
                "column": st.column_config.TextColumn("Column", width="small"),
                "lower": st.column_config.NumberColumn("Lower", format="%g", width="small"),
                "upper": st.column_config.NumberColumn("Upper", format="%g", width="small"),
                "source": st.column_config.SelectboxColumn(
                    "Source", options=list(SOURCES), required=True, width="small",
                    help="public: public knowledge, what the column can hold, typed by you; data (leaks): read "
                         "from the file's own smallest and largest value, which leaks privacy"),
            })
        st.button("Use these bounds", key=f"{text_key}.table.apply", on_click=_apply,
                  args=(text_key, edited, problem_key))
        if problem_key in st.session_state:
            st.error(st.session_state[problem_key])


__all__ = ["FROM_DATA", "PUBLIC", "SOURCES", "bounds_table", "table_rows", "table_to_text"]
