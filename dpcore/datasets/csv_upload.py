"""Load a user's CSV file as a :class:`Dataset`."""
from __future__ import annotations

import csv
import io
import os
import re
import warnings
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import (
    BoundsError,
    CategoriesError,
    CategoriesWarning,
    DatasetError,
    DPCoreWarning,
    PrivacyLeakWarning,
    user_stacklevel,
)
from ..types import BoundsLike, CategoriesLike, CsvSource
from ..validation import clip_to_bounds
from .registry import Dataset, _freeze

MAX_CSV_BYTES = 50 * 1024 * 1024
#: The largest magnitude a feature or regression label may have: squares and ranges of larger values
#: overflow double precision in the learners (1e308 squared is inf).
MAX_ABS_VALUE = 1e15
#: Delimiters recognised besides the comma (spreadsheets in many locales write semicolons).
_DELIMITERS = (",", ";", "\t", "|")


def _names(columns, *, at_most: int | None = None) -> str:
    """Column names as a message writes them: 'a', 'b' (not a Python list); past ``at_most`` names, the rest are
    counted ("'a', 'b' and 43 more"), so a warning about a wide table stays one line."""
    columns = [str(c) for c in columns]
    shown = columns if at_most is None else columns[:at_most]
    rest = len(columns) - len(shown)
    return ", ".join(repr(c) for c in shown) + (f" and {rest} more" if rest else "")


def read_csv_columns(source: CsvSource) -> list[str]:
    """Column names of an uploaded CSV (for the label-column select box)."""
    return list(_read(source).columns)


def _text_of(source) -> str:
    """The upload as text: bytes, a path, CSV text (with a newline) or a file object."""
    if isinstance(source, str) and "\n" in source:
        return source
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as fh:
            source = fh.read(MAX_CSV_BYTES + 1)
    elif hasattr(source, "read"):
        source = source.read(MAX_CSV_BYTES + 1)
    if isinstance(source, str):
        return source
    if not isinstance(source, (bytes, bytearray)):
        raise DatasetError(f"expected CSV bytes, text, a path or a file, got {type(source).__name__}")
    if len(source) > MAX_CSV_BYTES:
        raise DatasetError(f"the CSV file is over {MAX_CSV_BYTES / 1e6:.0f} MB, the limit; upload a smaller sample")
    try:
        return bytes(source).decode("utf-8-sig")
    except UnicodeDecodeError:
        head = bytes(source[:4096])
        if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # the byte-order mark of UTF-16 ("Unicode text" in Excel)
            raise DatasetError("the file is UTF-16 text (Excel's \"Unicode text\"); save it as \"CSV UTF-8\" and "
                               "upload that") from None
        if b"\x00" not in head and not head.startswith((b"PK", b"\xd0\xcf")):  # text, not a zip or an Excel file
            raise DatasetError("the file is text in another encoding than UTF-8 (Latin-1 or Windows-1252, as Excel "
                               "saves a CSV in many countries); save it as \"CSV UTF-8\" and upload that") from None
        raise DatasetError("the file is not UTF-8 text (is it a spreadsheet, a zip or another binary file?); "
                           "save it as CSV (UTF-8) and upload that") from None


def _delimiter(header: str) -> str:
    """The delimiter of the header line: the comma unless another candidate splits it into more columns."""
    counts = {d: header.count(d) for d in _DELIMITERS}
    best = max(_DELIMITERS, key=lambda d: counts[d])
    return best if counts[best] > counts[","] else ","


def _numeric_columns(df: pd.DataFrame) -> int:
    return sum(pd.api.types.is_numeric_dtype(df[c]) for c in df.columns)


def _read(source) -> pd.DataFrame:
    if isinstance(source, pd.DataFrame):  # a data scientist's own frame: the same checks as a file's
        repeated = sorted({str(c) for c in source.columns[source.columns.duplicated()]})
        if repeated:
            raise DatasetError(f"the DataFrame names the column(s) {_names(repeated)} more than once; give every "
                               "column its own name so the label column is unambiguous")
        if source.shape[0] == 0 or source.shape[1] == 0:
            raise DatasetError("the DataFrame is empty; it needs at least one feature column, a label column and two "
                               "rows")
        return source.rename(columns=str)
    text = _text_of(source)
    header = text.lstrip("\r\n").splitlines()[0] if text.strip() else ""
    sep = _delimiter(header)
    names = next(csv.reader([header], delimiter=sep), []) if header else []
    seen, repeated = set(), []
    for n in (n.strip() for n in names):
        if n in seen and n not in repeated:
            repeated.append(n)
        seen.add(n)
    if repeated:
        raise DatasetError(f"the header names the column(s) {_names(repeated)} more than once; give every column its "
                           "own name so the label column is unambiguous")
    try:
        # skipinitialspace: a file written "age, income, label" ("1.5, 2, yes": UCI's Adult, many exports) has
        # column names and labels without the space after each delimiter, as its writer meant them
        df = pd.read_csv(io.StringIO(text), sep=sep, skipinitialspace=True)
        if sep == ";":  # semicolon files often write decimals with a comma (1,5): keep the reading with more numbers
            alt = pd.read_csv(io.StringIO(text), sep=sep, decimal=",", skipinitialspace=True)
            if _numeric_columns(alt) > _numeric_columns(df):
                df = alt
    except pd.errors.EmptyDataError:
        raise DatasetError(
            "the CSV file is empty: it needs a header row and at least two data rows"
        ) from None
    except pd.errors.ParserError as exc:
        if m := re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc)):
            raise DatasetError(f"line {m[2]} of the file has {m[3]} values, but the rows before it have {m[1]}; every "
                               "row needs one value per column of the header") from None
        if m := re.search(r"EOF inside string starting at row (\d+)", str(exc)):
            raise DatasetError(f"a quoted value that starts on data row {m[1]} is never closed: a double quote (\") "
                               "opens it and no second one ends it, so the rest of the file reads as one value; close "
                               "the quote, or remove the stray \" from that row") from None
        raise DatasetError(f"could not parse the file as CSV: {' '.join(str(exc).split())}") from None
    if df.shape[0] == 0 or df.shape[1] == 0:
        raise DatasetError("the CSV file has no data rows; it needs a header row and at least two data rows")
    return df


#: How declared bounds are written, on the command line (``--bounds``) and on the pages.
BOUNDS_SYNTAX = ("COLUMN=LOW:HIGH, one per line or separated by commas; * stands for every other feature column "
                 "(e.g. age=17:90, *=0:1); a name with a comma goes in double quotes (\"weight, kg\"=30:200)")
#: One entry of a bounds text: anything up to a comma, semicolon or new line that is not inside double quotes.
_ENTRY = re.compile(r'(?:"[^"\n]*"|[^,;\n"])+|"[^"\n]*$')


def parse_bounds(spec) -> dict[str, tuple[float, float]]:
    """Declared bounds from text such as ``"age=17:90, hours=1:99, *=0:1"`` (commas or new lines between entries).

    ``*`` stands for every feature column not named. A mapping ``{column: (low, high)}`` is checked and returned
    as is; ``None`` or blank text declares nothing.

    >>> parse_bounds("age=17:90, *=0:1")
    {'age': (17.0, 90.0), '*': (0.0, 1.0)}
    >>> parse_bounds('"weight, kg"=30:200; age=17:90')
    {'weight, kg': (30.0, 200.0), 'age': (17.0, 90.0)}
    >>> parse_bounds("age=90:17")
    Traceback (most recent call last):
    ...
    dpcore.exceptions.BoundsError: bounds for 'age': the low end 90 is not below the high end 17; write age=LOW:HIGH
    """
    if spec is None:
        return {}
    mistakes: list[str] = []  # every mistake of the box at once, not one per attempt
    if isinstance(spec, str):
        items = {}
        for entry in (e.strip() for e in _ENTRY.findall(spec)):
            if not entry:
                continue
            name, eq, rng = entry.rpartition("=")
            low, colon, high = rng.partition(":")
            if not eq or not colon or not name.strip():
                mistakes.append(f"bounds: cannot read {entry!r}; write {BOUNDS_SYNTAX}")
                continue
            name = name.strip()
            if len(name) >= 2 and name[0] == name[-1] == '"':  # a quoted name: its commas belong to it
                name = name[1:-1]
            elif '"' in name:
                mistakes.append(f"bounds: the double quote in {entry!r} is not closed; write \"NAME, WITH COMMA\"="
                                "LOW:HIGH")
                continue
            if name in items:
                mistakes.append(f"bounds: the column {name!r} is given twice")
                continue
            try:
                items[name] = (float(low), float(high))
            except ValueError:
                mistakes.append(f"bounds for {name!r}: {rng.strip()!r} is not two numbers; write "
                                f"{_as_typed(name)}=LOW:HIGH")
                continue
            if (said := _range_mistake(name, *items[name])) is not None:
                mistakes.append(said)
        spec = items
    out = {}
    for name, pair in dict(spec).items():
        try:
            low, high = (float(v) for v in pair)
        except (TypeError, ValueError):
            mistakes.append(f"bounds for {name!r} must be two numbers (low, high), got {pair!r}")
            continue
        if (said := _range_mistake(name, low, high)) is None:
            out[str(name)] = (low, high)
        elif said not in mistakes:  # text entries were checked as they were read, in the box's order
            mistakes.append(said)
    _refuse_mistakes(mistakes, BoundsError, "bounds")
    return out


#: The forms declared bounds take everywhere (load_csv, as_dataset, run_learner, standardize_with_bounds,
#: BoundedScaler), for error messages.
BOUNDS_FORMS = ("a mapping {column: (low, high)} ('*' for every other feature column), text such as "
                "\"age=17:90, *=0:1\", or a pair (low, high) of numbers or of one number per feature column")


def bounds_by_column(bounds: BoundsLike, columns: Sequence[str]) -> dict[str, tuple[float, float]]:
    """Declared bounds in any of the :data:`BOUNDS_FORMS`, as ``{column: (low, high)}`` over ``columns``.

    A mapping or text is read by :func:`parse_bounds` (columns not named keep no bounds); a pair ``(low, high)``
    of scalars or per-column sequences (what :func:`dpcore.validation.check_bounds` takes) names every column.

    >>> bounds_by_column((0, [1, 2]), ["a", "b"])
    {'a': (0.0, 1.0), 'b': (0.0, 2.0)}
    >>> bounds_by_column({"*": (0, 1)}, ["a"])
    {'*': (0.0, 1.0)}
    """
    if bounds is None or isinstance(bounds, (str, Mapping)):
        return parse_bounds(bounds)
    from ..validation import check_bounds

    try:
        lower, upper = check_bounds(bounds, len(columns))
    except (TypeError, ValueError) as exc:
        raise BoundsError(f"bounds must be {BOUNDS_FORMS}; {exc}") from None
    return {str(c): (float(lo), float(hi)) for c, lo, hi in zip(columns, lower, upper)}


def _as_typed(name: str) -> str:
    """A column name as it is typed in a bounds box or a list: in double quotes when it holds a separator."""
    return f'"{name}"' if any(c in name for c in ",;\n") else name


def _range_mistake(name: str, low: float, high: float) -> str | None:
    """What is wrong with ``name=low:high`` as a declared range, or None."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return f"bounds for {name!r} must be finite numbers, got {low:g}:{high:g}"
    if not low < high:
        return (f"bounds for {name!r}: the low end {low:g} is not below the high end {high:g}; write "
                f"{_as_typed(name)}=LOW:HIGH")
    return None


#: How declared categories are written, on the command line (``--categories``) and on the pages.
CATEGORIES_SYNTAX = ("COLUMN=VALUE|VALUE|..., one column per line or separated by commas (e.g. "
                     "ward=Cardiology|Oncology|Surgery, sex=F|M); spaces around a value are dropped; a value or a name "
                     "with a comma, a | or a ; goes in double quotes (\"Oncology, adult\"), and none may hold a "
                     "double quote or a new line")


def _refuse_mistakes(mistakes: list[str], error: type, what: str) -> None:
    """Raise ``error`` with every mistake of a box (``what``: "bounds", "categories") at once: one as it is, several
    numbered, each without the box's name it starts with."""
    if len(mistakes) == 1:
        raise error(mistakes[0])
    if mistakes:
        raise error(f"{len(mistakes)} mistakes in the {what}: "
                    + " ".join(f"({i}) {m.removeprefix(what + ': ')}." for i, m in enumerate(mistakes, 1)))


def parse_categories(spec) -> dict[str, tuple[str, ...]]:
    """Declared categories from text such as ``"ward=Cardiology|Oncology|Surgery, sex=F|M"`` (commas, semicolons
    or new lines between columns, ``|`` between values), or a mapping ``{column: [value, ...]}``.

    Each column's values are declared by the data's owner from what the column can hold, never read from its rows
    (as ``pandas.get_dummies`` does): a value that only a rare record holds would show that some record holds it,
    as a column's minimum and maximum would (see ``bounds``). :func:`load_csv` makes each declared column one 0/1
    feature per value (:func:`encode_categories`).

    In the text form spaces around a value are dropped, and a value or a column name holding ``,``, ``|`` or ``;``
    goes in double quotes (``ward=Cardiology|"Oncology, adult"``); none may hold a double quote or a new line. The
    values of one column are separated by ``|``: values after a comma with no ``=`` are refused as such, with the
    column they follow (``ward=Cardiology,Oncology``). A mapping's values may be any text or numbers
    (numbers are written as text: ``3``, not ``3.0``); a number declared for a column of numbers matches the cells
    of that number (ward codes 1 to 5). ``None`` or blank text declares nothing. The values are returned as text,
    in the order declared.

    >>> parse_categories("ward=Cardiology|Oncology|Surgery, sex=F|M")
    {'ward': ('Cardiology', 'Oncology', 'Surgery'), 'sex': ('F', 'M')}
    >>> parse_categories({"code": [1, 2, 3]})
    {'code': ('1', '2', '3')}
    >>> parse_categories("sex=F|F")
    Traceback (most recent call last):
    ...
    dpcore.exceptions.CategoriesError: categories for 'sex': the value 'F' is listed twice; list each value once
    """
    if spec is None:
        return {}
    mistakes: list[str] = []  # every mistake of the box at once, not one per attempt
    if isinstance(spec, str):
        items: dict = {}
        column, stray = None, {}  # entries without '=' after a column's: its values, separated by commas
        for entry in (e.strip() for e in _ENTRY.findall(spec)):
            if not entry:
                continue
            if entry.startswith('"'):  # a quoted name: its commas and = belong to it
                close = entry.find('"', 1)
                rest = entry[close + 1:].lstrip() if close > 0 else ""
                name, eq, values = entry[1:close], rest[:1], rest[1:]
                eq = eq if eq == "=" else ""
            else:
                name, eq, values = entry.partition("=")
                name = name.strip()
            if entry.count('"') % 2:
                mistakes.append(f"categories: the double quote in {entry!r} is not closed; put a whole value or a "
                                "whole column name in double quotes: \"NAME, WITH COMMA\"=VALUE|\"VALUE, WITH COMMA\"")
                continue
            if not eq and column is not None:
                stray.setdefault(column, []).append(entry)  # said once for the column, below
                continue
            column = None
            if not eq or not name:
                mistakes.append(f"categories: cannot read {entry!r}; write {CATEGORIES_SYNTAX}")
                continue
            texts = _quoted_values(values)
            if '"' in name or texts is None:
                mistakes.append(f"categories: the double quote in {entry!r} is not closed or is inside a value; "
                                "put a whole value or a whole column name in double quotes: "
                                "\"NAME, WITH COMMA\"=VALUE|\"VALUE, WITH COMMA\"")
                continue
            if name in items:
                mistakes.append(f"categories: the column {name!r} is given twice")
                continue
            items[name], column = texts, name
        for name, entries in stray.items():
            values = "|".join([v for v in items[name] if v] + entries)
            mistakes.append(f"categories for {name!r}: {_names(entries)} come{'s' if len(entries) == 1 else ''} "
                            "after a comma with no COLUMN= before "
                            f"{'it' if len(entries) == 1 else 'them'}: separate the values of one column with |, "
                            f"not commas ({_as_typed(name)}={values}); put a value that holds a comma in double "
                            "quotes (\"Oncology, adult\")")
        spec = items
    elif not isinstance(spec, Mapping):
        raise CategoriesError(f"categories must be a mapping {{column: [value, ...]}} or text such as "
                              f"\"ward=Cardiology|Oncology|Surgery, sex=F|M\", got {type(spec).__name__}")
    out = {}
    for name, values in spec.items():
        name = str(name)
        if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray, pd.Index, set)):
            mistakes.append(f"categories for {name!r} must be a list of the values the column can hold, e.g. "
                            f"{{{name!r}: ['A', 'B']}}, got {type(values).__name__}")
            continue
        said, texts = None, []
        for v in (list(values) if not isinstance(values, set) else sorted(values, key=str)):
            text = _category_text(v)
            if text is None:
                said = f"categories for {name!r}: {v!r} is not a value a cell can hold (text or a finite number)"
            elif not text:
                said = (f"categories for {name!r}: an empty value is declared; write "
                        f"{_as_typed(name)}=VALUE|VALUE with every value named")
            elif text in texts:
                said = f"categories for {name!r}: the value {text!r} is listed twice; list each value once"
            if said:
                break
            texts.append(text)
        if said is None and not texts:
            said = (f"categories for {name!r}: no value is declared; list the values the column can hold "
                    f"({_as_typed(name)}=VALUE|VALUE), or leave the column out of categories")
        if said:
            mistakes.append(said)
            continue
        out[name] = tuple(texts)
    _refuse_mistakes(mistakes, CategoriesError, "categories")
    return out


def _category_text(value) -> str | None:
    """A declared value as text (whole numbers without a decimal point: 3, not 3.0); None for what no cell holds
    (a missing or infinite number)."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return (str(int(v)) if v.is_integer() else f"{v:.17g}") if np.isfinite(v) else None
    if isinstance(value, str):
        return value.strip()
    return None


def _quoted_values(text: str) -> list[str] | None:
    """The values of one column in the text form, ``|`` between them, each stripped of the spaces around it and of
    the double quotes around it (a quoted value may hold ``,``, ``|`` and ``;``); None when a double quote is not
    around a whole value. Blank text gives no value."""
    if not text.strip():
        return []
    parts, current, quoted = [], "", False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == "|" and not quoted:
            parts.append(current)
            current = ""
        else:
            current += ch
    if quoted:
        return None
    out = []
    for value in (p.strip() for p in parts + [current]):
        if value.startswith('"') and value.endswith('"') and len(value) >= 2 and '"' not in value[1:-1]:
            value = value[1:-1].strip()
        elif '"' in value:
            return None
        out.append(value)
    return out


def categories_text(categories) -> str:
    """Declared categories written as :func:`parse_categories` reads them (the command line's ``--categories``,
    the pages' box): one column per line.

    >>> categories_text({"ward": ["Cardiology", "Oncology"], "weight, kg": [1, 2]})
    'ward=Cardiology|Oncology\\n"weight, kg"=1|2'
    """
    lines = []
    for name, values in parse_categories(categories).items():
        bad = [v for v in values if any(c in v for c in '"\n')]
        if bad:
            raise CategoriesError(f"categories for {name!r}: the value {bad[0]!r} holds a double quote or a new "
                                  "line and cannot be written as text; pass the categories as a mapping")
        lines.append(f"{_as_typed(name)}=" + "|".join(f'"{v}"' if any(c in v for c in "|,;") else v for v in values))
    return "\n".join(lines)


def encode_categories(frame: pd.DataFrame, categories) -> tuple[pd.DataFrame, dict[str, int]]:
    """``(frame with each declared column replaced, in its place, by one 0/1 column per declared value, named
    column=value; the number of cells of each declared column that are none of its values)``.

    ``categories`` is read by :func:`parse_categories`. A column of numbers matches a declared value by number
    (a code declared ``1`` matches the cells ``1`` and ``1.0``, and the texts ``"1.0"`` and ``"01"`` in a column of
    text, as new rows from a form may hold it), a column of truth values (a file's ``true`` and
    ``false``, which pandas reads as such in any case) by truth value (``true``, ``True`` or ``TRUE`` declared),
    a column of text by its text, spaces around a cell dropped. A cell that is none of the declared values is
    encoded as 0 in every one of its column's 0/1 columns, as a category of its own (the caller says how many,
    never which). The categories are declared, not read from the rows, so the encoding of a row depends on that row
    alone: the same function encodes the training rows and new rows to predict.

    >>> df = pd.DataFrame({"age": [30, 40], "ward": ["Oncology", "Cardiology"]})
    >>> encoded, unknown = encode_categories(df, {"ward": ["Cardiology", "Oncology", "Surgery"]})
    >>> encoded.columns.tolist(), encoded.to_numpy().tolist(), unknown
    (['age', 'ward=Cardiology', 'ward=Oncology', 'ward=Surgery'], [[30, 0, 1, 0], [40, 1, 0, 0]], {'ward': 0})
    """
    declared = parse_categories(categories)
    columns = [str(c) for c in frame.columns]
    blocks, unknown = [], {}
    for c, column in zip(columns, frame.columns):
        if c not in declared:
            blocks.append(frame[[column]].set_axis([c], axis=1))
            continue
        values, cells = declared[c], frame[column]
        if (missing := int(cells.isna().sum())) > 0:  # new rows to predict (a file's are refused before)
            raise DatasetError(f"{c!r} has missing values ({missing} of {len(cells)} cells): a missing cell is none of "
                               "its categories, nor a value of its own; fill or remove those rows")
        if pd.api.types.is_bool_dtype(cells):  # a file's true/false (any case) is read as truth values, not text
            truth = [{"true": True, "false": False}.get(v.lower()) for v in values]
            if None in truth:
                text = values[truth.index(None)]
                raise CategoriesError(f"categories for {c!r}: {text!r} is not true or false, but the column holds "
                                      f"truth values (true and false, in any case); declare {_as_typed(c)}=true|false")
            if len(set(truth)) < len(truth):
                raise CategoriesError(f"categories for {c!r}: {_names(values)} name the same truth value twice; list "
                                      "each value once")
            hits = cells.to_numpy(dtype=bool)[:, None] == np.array(truth)[None, :]
        elif pd.api.types.is_numeric_dtype(cells):
            try:
                numbers = np.array([float(v) for v in values])
            except ValueError:
                text = next(v for v in values if _number_or_none(v) is None)
                raise CategoriesError(f"categories for {c!r}: {text!r} is not a number, but the column holds "
                                      f"numbers; declare the numbers it can hold ({_as_typed(c)}=1|2|3)") from None
            repeated = [v for v, x in zip(values, numbers) if np.sum(numbers == x) > 1]
            if repeated:
                raise CategoriesError(f"categories for {c!r}: {_names(repeated)} are the same number; list each "
                                      "value once")
            hits = cells.to_numpy(dtype=float)[:, None] == numbers[None, :]
        else:
            text = cells.astype(str).str.strip().to_numpy(dtype=object)
            hits = np.stack([text == v for v in values], axis=1)
            codes = np.array([np.nan if (x := _number_or_none(v)) is None else x for v in values])
            codes[~np.isfinite(codes)] = np.nan
            if (~np.isnan(codes)).any() and len(set(codes[~np.isnan(codes)])) == (~np.isnan(codes)).sum():
                # a code written as text ("3.0", "03": new rows from a form) is the number a file's column of codes
                # holds, and a declared code matches it as it matches that column's cells
                as_numbers = pd.to_numeric(pd.Series(text), errors="coerce").to_numpy(dtype=float)
                hits |= as_numbers[:, None] == codes[None, :]
        names = [f"{c}={v}" for v in values]
        clash = [n for n in names if n in columns]
        if clash:
            raise CategoriesError(f"categories for {c!r}: its 0/1 column {clash[0]!r} would have the name of another "
                                  "column of the file; rename that column")
        unknown[c] = int((~hits.any(axis=1)).sum())
        blocks.append(pd.DataFrame(hits.astype(np.int64), columns=names, index=frame.index))
    return (pd.concat(blocks, axis=1) if blocks else frame.iloc[:, :0]), unknown


def _number_or_none(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def category_columns(categories) -> dict[str, tuple[str, ...]]:
    """``{declared column: its 0/1 feature columns}`` for declared categories (a Dataset's :attr:`categories`).

    >>> category_columns({"sex": ["F", "M"]})
    {'sex': ('sex=F', 'sex=M')}
    """
    return {c: tuple(f"{c}={v}" for v in values) for c, values in dict(categories).items()}


def _warn_of_unknown_categories(unknown: dict[str, int], n_rows: int, *, what: str = "the file") -> None:
    """Say how many cells of each declared column are none of its declared values (never which values)."""
    found = {c: k for c, k in unknown.items() if k}
    if found:
        named = ", ".join(f"{c!r} ({k} of {n_rows} cells)" for c, k in found.items())
        warnings.warn(f"some cells of {what} hold none of their column's declared categories: {named}; each is "
                      "encoded as 0 in all the 0/1 columns of its column, as a value of its own. Declare every value "
                      "the column can hold (categories=, --categories on the command line, 'Declared categories' on "
                      "the pages) if that is not meant; a cell matches a declared value exactly, case and "
                      "spelling included (only the spaces around it are dropped)",
                      CategoriesWarning, stacklevel=user_stacklevel())


#: A column name that says it identifies a row (patient_id, ID, record, row number, ...).
_ID_NAME = re.compile(r"(?i:(^|[^a-z])(id|ids|identifier|uuid|key|index|record|row|no|number)$)|[a-z](Id|ID)$")


def _warn_identifiers(columns: list[str], X: np.ndarray) -> None:
    """Warn about feature columns that look like row identifiers: a different whole number on every row, and a
    name that says so (patient_id, patientId, record) or values that number the rows in order from 0 or 1. A
    model learns nothing general from them, they name people, and their range read from the rows is a row's own
    value."""
    n = X.shape[0]
    if n < 20:
        return
    found = []
    for j, name in enumerate(columns):
        v = X[:, j]
        if not np.all(v == np.round(v)) or np.unique(v).size < n:
            continue
        # named so, or numbering the rows in order from 0 or 1
        if _ID_NAME.search(name.strip()) or (v[0] in (0, 1) and np.all(np.diff(v) == 1)):
            found.append(name)
    if found:
        names = ", ".join(repr(c) for c in found)
        warnings.warn(f"{names} look{'s' if len(found) == 1 else ''} like a row identifier (a different whole number "
                      "on every row): it is used as a feature, from which no model learns anything that holds for "
                      "new rows, and it singles people out; leave it out (drop=, --drop on the command line, Columns "
                      "to leave out on the pages)",
                      DPCoreWarning, stacklevel=user_stacklevel())


def _warn_constant(columns: list[str], X: np.ndarray, categorical: Mapping[str, Sequence[str]] | None = None) -> None:
    """Warn about feature columns holding one value on every row (a country code in a one-country table): no model
    learns anything from them. The value itself is not said: the warning goes into the decision report, which holds
    no cell of the file. A column declared as categories (``categorical``: ``{column: its 0/1 columns}``) is judged
    whole, by its name: one of its 0/1 columns always 0 says only that no row holds that declared value, which the
    report must not say either."""
    if X.shape[0] < 2:
        return
    of = {e: c for c, block in (categorical or {}).items() for e in block}
    constant: dict[str, bool] = {}
    for name, same in zip(columns, np.all(X == X[0], axis=0)):  # a declared column: when all its 0/1 columns are
        column = of.get(name, name)
        constant[column] = constant.get(column, True) and bool(same)
    found = [column for column, same in constant.items() if same]
    if found:
        names = _names(found, at_most=5)
        one = len(found) == 1
        warnings.warn(f"{names} hold{'s' if one else ''} the same value on every row: no model learns anything from "
                      f"{'it' if one else 'them'}; leave {'it' if one else 'them'} out (drop=, --drop on the command "
                      "line, Columns to leave out on the pages)",
                      DPCoreWarning, stacklevel=user_stacklevel())


def _left_out(df: pd.DataFrame, drop: "str | Sequence[str]", label_column: str | None) -> tuple[str, ...]:
    """The columns of ``drop`` (one name or several), each checked to be a column of ``df`` other than the label."""
    if drop is None:
        drop = ()
    if not isinstance(drop, str) and not (isinstance(drop, Iterable) and not isinstance(drop, Mapping)):
        raise DatasetError(f"drop must be a column name or a list of them, such as ['patient_id', 'note'], got "
                           f"{drop!r:.60}")
    names = (drop,) if isinstance(drop, str) else tuple(str(n) for n in drop)  # read as text, as a file's are
    unknown = [n for n in names if n not in df.columns]
    if unknown:
        raise DatasetError(f"drop names column(s) {_names(unknown)} that the file does not have; its columns: "
                           f"{', '.join(_as_typed(str(c)) for c in df.columns)}")
    if label_column is not None and label_column in names:
        raise DatasetError(f"drop names the label column {label_column!r}: it is what the models predict; leave it "
                           "in, or choose another label column")
    return tuple(dict.fromkeys(names))


def _declared(columns: list[str], label_column: str | None, task: str, bounds: dict,
              left_out: tuple[str, ...] = (), categorical: Mapping[str, Sequence[str]] | None = None
              ) -> tuple[dict, tuple | None]:
    """``({feature column: (low, high)}, label range or None)`` from the declared ``bounds``; unknown names are
    refused (bounds of a column ``left_out`` are not used, and not refused: declared before it was left out), and so
    are bounds of a column declared as categories (``categorical``: ``{column: its 0/1 columns}``), whose 0/1
    columns are 0:1 by their declaration. ``label_column`` None: a table without a label, every column a feature."""
    label = [] if label_column is None else [label_column]
    categorical = dict(categorical or {})
    encoded = {e for block in categorical.values() for e in block}
    as_declared = [n for n in bounds if n in categorical or n in encoded]
    if as_declared:
        raise BoundsError(f"bounds name {_names(as_declared)}, declared as categories: each category is one 0/1 "
                          "column, bounded 0:1 by the declaration; remove those bounds")
    known = set(columns) | {*label, "*"} | set(left_out)
    unknown = [n for n in bounds if n not in known]
    if unknown:
        originals = list(dict.fromkeys(next((k for k, v in categorical.items() if c in v), c) for c in columns))
        raise BoundsError(f"bounds name column(s) {_names(unknown)} that the file does not have; its "
                          f"columns: {', '.join(map(_as_typed, originals + label))}")
    if label_column is not None and label_column in bounds and task != "regression":
        raise BoundsError(f"bounds: the label column {label_column!r} holds classes, which need no bounds; "
                          "declare bounds for a regression label only")
    default = bounds.get("*")
    features = {c: bounds.get(c, default) for c in columns}
    return {c: b for c, b in features.items() if b is not None}, bounds.get(label_column) if label else None


#: A declared range this many times wider than its column's values is warned about: scaled onto it, they barely vary.
LOOSE_BOUNDS_RATIO = 20


def _warn_of_loose_bounds(X: np.ndarray, columns: list[str], feature_bounds: dict) -> None:
    """Warn of declared ranges far wider than the values, naming the column and its declared range, never the values'
    own spread: the distance between a column's smallest and largest cell (its largest, where the smallest is 0) is a
    record's value, and the pages show the warning (to a room, in presentation mode) as the report carries it."""
    loose = []
    for j, c in enumerate(columns):
        if c in feature_bounds:
            low, high = feature_bounds[c]
            spread = float(X[:, j].max() - X[:, j].min())
            if 0 < spread and (high - low) > LOOSE_BOUNDS_RATIO * spread:
                loose.append(f"{c!r} ({low:g} to {high:g} declared)")
    if loose:
        shown = "; ".join(loose[:3]) + (f"; and {len(loose) - 3} more" if len(loose) > 3 else "")
        warnings.warn(
            f"declared ranges more than {LOOSE_BOUNDS_RATIO} times wider than the values they hold: {shown}. Scaled "
            "onto such a range a column barely varies and the private learners see little of it; declare the range "
            "the column can really take (a * rule applies one range to columns of different scales)",
            DPCoreWarning,
            stacklevel=user_stacklevel(),
        )


#: Fewer rows than this and an upload is warned that its test accuracy (on a quarter of them) says little.
FEW_ROWS = 40


def _guess_task(labels: pd.Series) -> str:
    """Classification for text labels (they cannot be regression targets) and for whole-number labels with at
    most 20 distinct values; regression otherwise."""
    if not pd.api.types.is_numeric_dtype(labels):
        return "classification"
    whole = pd.api.types.is_integer_dtype(labels) or np.allclose(labels, np.round(labels))
    return "classification" if whole and labels.nunique() <= 20 else "regression"


def numbers_read_as_classes(ds, label_column: str, *, how: str) -> str | None:
    """What to say when a guessed task made a label of five or more whole numbers into classes, else None.

    A count or a rating with at most 20 values (visits, stars, an age in decades) is guessed to be classes: each
    number a category, an answer one off scored as wholly wrong. The owner is told, with ``how`` to choose
    regression on the command line or the page. Two to four numbers are most often codes of categories (0/1, iris's
    0/1/2) and are not remarked on. Only the number of classes is said, never a value."""
    numbers = [c for c in ds.classes if isinstance(c, (int, float, np.integer, np.floating))
               and not isinstance(c, (bool, np.bool_))]
    if ds.task != "classification" or len(numbers) < 5 or len(numbers) != len(ds.classes):
        return None
    if not getattr(ds, "inferred_classes", ()):  # the owner declared them as classes
        return None
    k = len(numbers)
    return (f"the label {label_column!r} holds {k} different whole numbers, so it is read as {k} classes (each "
            "number a category, scored by accuracy: an answer one off counts as wrong). If it counts or measures "
            f"something (visits, a rating, an age), it is a quantity to predict: {how}")


#: A cell of numbers written with a thousands separator or a decimal comma: 1,001.5 or 17,99 (never "1,2,3" alone).
_COMMA_NUMBER = re.compile(r"^\s*[-+]?(\d{1,3}(,\d{3})+(\.\d*)?|\d+,\d+)\s*$")
#: A cell holding one number with a currency sign before it, or a percent sign, a currency sign or a short unit after
#: it (lower-case letters, or a three-letter currency code): $1250, -€3.5, 12%, 70kg, 1,250 USD; not a code such as 3A.
_MARKED_NUMBER = re.compile(r"\s*[-+]?\s*[$€£¥]?\s*[-+]?\d[\d,]*(\.\d+)?\s*(%|[$€£¥]|[a-z]{1,3}|[A-Z]{3})?\s*")
#: How to make a text column a feature: declare its categories. The values come from what the column means, not
#: from the rows: a rare value read from the rows (pandas.get_dummies) gives away that some record holds it.
_ENCODE = ("Declare the values {names} can hold as categories (categories= in load_csv, --categories on the command "
           "line, 'Declared categories' on the pages), e.g. {example}=VALUE|VALUE|VALUE, listed from what the column "
           "means, never read from the rows, whose rare values would give records away: each declared value becomes "
           "one 0/1 column. Or drop {it}.")
#: Where a column is left out, said once in a refusal that advises it.
LEAVE_OUT = "To leave a column out: drop= (--drop on the command line, 'Columns to leave out' on the pages)."
#: At most this many distinct texts make a column of categories (a ward, a sex, a region).
_FEW_CATEGORIES = 20


def _why_not_numeric(name, column: pd.Series) -> str:
    """Why a text column cannot be a feature, in the owner's terms, without quoting its cells: numbers written with
    commas, an identifier (a different text on every row), categories (few distinct texts) or free text (words in
    most cells); "" otherwise."""
    text = column.astype(str)
    n, distinct = len(text), int(text.nunique())
    if text.str.fullmatch(r"\s*[-+]?[\d.]+\s*").sum() + text.str.match(_COMMA_NUMBER).sum() == n and \
            text.str.contains(",", regex=False).any():
        return (f"{name!r} holds numbers written with a comma (a thousands separator, as in 1,250.5, or a decimal "
                "comma, as in 12,5), which cannot be read without guessing which is meant: write them with a point "
                "for decimals and no separator (in a spreadsheet, format the column as a number without a thousands "
                "separator), or save the whole file with semicolons between columns if it uses decimal commas "
                "throughout.")
    marked = text.str.fullmatch(_MARKED_NUMBER)
    if marked.all() and not text.str.fullmatch(r"\s*[-+]?[\d.]+\s*").all():
        return (f"{name!r} holds numbers written with a currency sign, a percent sign or a unit (as in $1250, 12% or "
                "70kg): write the bare numbers (in a spreadsheet, format the column as a plain number), and declare "
                "its bounds in those units.")
    numbers = pd.to_numeric(text, errors="coerce").notna().to_numpy()
    if numbers.all():  # a DataFrame's column of numbers written as text (a file's are read as numbers)
        return (f"{name!r} holds numbers stored as text (dtype {column.dtype}): convert the column first "
                f"(df[{name!r}] = pd.to_numeric(df[{name!r}])).")
    if numbers.any():
        lines = [str(i + 2) for i in np.flatnonzero(~numbers)[:3]]  # the header is line 1
        k = int((~numbers).sum())
        return (f"{name!r} holds numbers, but {k} of its {n} cells {'is not one' if k == 1 else 'are not'} (line"
                f"{'s' if k > 1 else ''} {', '.join(lines)}{' ...' if k > 3 else ''} of the file): correct or remove "
                f"{'it' if k == 1 else 'them'}.")
    if n >= 20 and distinct == n:
        return (f"{name!r} holds a different text on every row, like a record identifier: no model learns from it "
                "what holds for new rows, and it singles people out; drop the column.")
    if distinct <= _FEW_CATEGORIES:
        return f"{name!r} is text with {distinct} categories."
    if text.str.contains(r"\S\s+\S").mean() > 0.5:  # words: most cells hold more than one
        return (f"{name!r} holds free text (words, {distinct} different texts in {n} rows): no learner here reads "
                "text, and a note can name a person; drop the column.")
    return ""


def _feature_matrix(features: pd.DataFrame, what: str = "the CSV") -> np.ndarray:
    """The feature columns as floats, refused by name when one is not numeric, infinite or too large."""
    features = features.infer_objects()  # an object array's columns of numbers (X = df.to_numpy() of mixed columns)
    non_numeric = [c for c in features.columns if not pd.api.types.is_numeric_dtype(features[c])]
    if non_numeric:
        why = {c: _why_not_numeric(c, features[c]) for c in non_numeric}
        said = [w for w in why.values() if w and not w.endswith(" categories.")]  # what to correct or leave out
        to_encode = [c for c, w in why.items() if not w or w.endswith(" categories.")]  # categories, and the rest
        encode = [_ENCODE.format(names=_names(to_encode), example=_as_typed(str(to_encode[0])),
                                 it="it" if len(to_encode) == 1 else "them")] if to_encode else []
        raise DatasetError(" ".join([f"feature columns must be numeric; these are not: {_names(non_numeric)}."]
                                    + said + [why[c] for c in to_encode if why[c]] + encode + [LEAVE_OUT]))
    X = features.to_numpy(dtype=float)
    if not np.all(np.isfinite(X)):
        bad = [str(c) for c, ok in zip(features.columns, np.isfinite(X).all(axis=0)) if not ok]
        raise DatasetError(f"{what} has infinite values in feature column(s) {_names(bad)}; remove them first")
    too_large = [str(c) for c, m in zip(features.columns, np.abs(X).max(axis=0)) if m > MAX_ABS_VALUE]
    if too_large:
        raise DatasetError(f"feature column(s) {_names(too_large)} hold values beyond {MAX_ABS_VALUE:.0e} in "
                           "magnitude, which overflow the learners' arithmetic; rescale them (e.g. to thousands or "
                           "millions)")
    return X


def _class_name(value) -> str:
    """A numeric class label as text: whole numbers without a decimal point ("3", not "3.0")."""
    v = float(value)
    return str(int(v)) if v.is_integer() else f"{v:g}"


def _label_vector(labels: pd.Series, task: str, label_column: str, declared: tuple[str, ...] | None = None
                  ) -> tuple[np.ndarray, tuple, tuple | None, tuple]:
    """``(y, target_names, label_range, classes)``: class indices, their names and the classes as the data holds them
    (numbers stay numbers), or checked real targets and their range.

    ``declared``: the label's classes as its owner declared them (``categories=``, :func:`parse_categories`): they are
    the classes, in the order declared, a class no row holds included, and a row whose label is none of them is
    refused. Without a declaration the classes are the distinct labels of the rows, sorted (which leaks:
    :func:`_warn_of_read_classes`)."""
    if task == "classification" and declared is not None:
        return _declared_label_vector(labels, label_column, declared)
    if task == "classification":
        numeric = pd.api.types.is_numeric_dtype(labels) and not pd.api.types.is_bool_dtype(labels)
        # numbers in numeric order (0, 1, 2, ..., 10, 11), not as text (0, 1, 10, 11, 2, ...)
        classes, y = np.unique(labels.to_numpy() if numeric else labels.astype(str).to_numpy(), return_inverse=True)
        names = tuple(_class_name(c) for c in classes) if numeric else tuple(classes.tolist())
        if classes.size < 2:
            raise DatasetError(
                f"the label column {label_column!r} has a single class {names[0]!r}; it needs at least two: choose "
                "the column of classes as the label (label= in run_learner and as_dataset, label_column= in "
                "load_csv, --label on the command line, 'Label column' on the pages), or use a file with rows of "
                "more than one class"
            )
        _refuse_too_many_classes(classes.size, len(labels), label_column, numeric)
        return y.astype(np.int64), names, None, tuple(classes.tolist())
    if not pd.api.types.is_numeric_dtype(labels):
        raise DatasetError(f"a regression label column must be numeric; {label_column!r} is not")
    y = labels.to_numpy(dtype=float)
    if not np.all(np.isfinite(y)) or np.abs(y).max() > MAX_ABS_VALUE:
        raise DatasetError(f"the regression label column {label_column!r} holds infinite values or values beyond "
                           f"{MAX_ABS_VALUE:.0e} in magnitude; remove or rescale them")
    return y, (), (float(y.min()), float(y.max())), ()


def _warn_of_read_classes(label_column: str) -> None:
    """Say that a label's classes were read from its rows: which classes occur is a fact about the private rows (a
    class only one record holds appears or vanishes with that record, and with it the width of every model's
    output), which no ε accounts for."""
    warnings.warn(
        f"the classes of the label {label_column!r} were read from the data itself, which leaks privacy (a class "
        "only one record holds appears or vanishes with that record, and with it every model's output); declare "
        "the classes the label can hold, from what it means, never from the rows (categories= in load_csv, "
        "--categories on the command line, 'Declared categories' on the pages), e.g. "
        f"{_as_typed(str(label_column))}=CLASS|CLASS|CLASS",
        PrivacyLeakWarning,
        stacklevel=user_stacklevel(),
    )


def _refuse_too_many_classes(k: int, n_rows: int, label_column: str, numeric: bool) -> None:
    if k > max(20, n_rows / 2):  # mostly one-row classes: a split cannot stratify them
        hint = ("; it looks like a number to predict: choose regression" if numeric
                else "; group them into fewer classes")
        raise DatasetError(f"the label column {label_column!r} has {k} distinct values in {n_rows} rows, too many "
                           f"classes to learn (each needs rows to train and to test on){hint}")


def _declared_label_vector(labels: pd.Series, label_column: str, declared: tuple[str, ...]
                           ) -> tuple[np.ndarray, tuple, None, tuple]:
    """:func:`_label_vector` of a label whose classes are declared: each cell matched to a declared class as
    :func:`encode_categories` matches a feature's cell to a declared value (numbers by number, truth values by
    truth, text by its text), and refused, with how many rows, when it is none of them."""
    name = str(label_column)
    if len(declared) < 2:
        raise CategoriesError(f"categories for the label {name!r} declare a single class; a label needs at least "
                              f"two: list every class it can hold ({_as_typed(name)}=CLASS|CLASS)")
    numeric = pd.api.types.is_numeric_dtype(labels) and not pd.api.types.is_bool_dtype(labels)
    _refuse_too_many_classes(len(declared), len(labels), name, numeric)
    hits, _ = encode_categories(labels.to_frame(name), {name: declared})
    hits = hits.to_numpy()
    if (off := int((hits.sum(axis=1) == 0).sum())) > 0:
        # a declared class that no row matches is likely the misspelt one: named in the owner's own words, never a
        # value of the rows (a rare one would then sit in an error message pasted anywhere)
        unmatched = [v for v, hit in zip(declared, hits.any(axis=0)) if not hit]
        one = len(unmatched) == 1
        check = ("" if not unmatched else
                 f"; the declared class{'' if one else 'es'} {_quoted_list(unmatched)} match{'es' if one else ''} "
                 f"no row: check {'its' if one else 'their'} spelling and case")
        raise CategoriesError(f"the label {name!r} holds none of its declared classes in {off} of {len(labels)} "
                              "rows: every row's label must be one of them (a cell matches a declared class exactly, "
                              f"case and spelling included; only the spaces around it are dropped){check}; declare "
                              f"every class the label can hold ({_as_typed(name)}=CLASS|CLASS|...), or remove those "
                              "rows")
    y = hits.argmax(axis=1).astype(np.int64)
    if np.unique(y).size < 2:  # the owner's own view of the file: nothing is released
        raise DatasetError(f"every row of the label column {name!r} holds the same one of its {len(declared)} "
                           "declared classes; a model needs rows of at least two classes to learn from")
    if pd.api.types.is_bool_dtype(labels):  # as the data holds them: numbers stay numbers, truth values as text
        classes = tuple(str(v.lower() == "true") for v in declared)
    elif numeric:
        numbers = [float(v) for v in declared]
        classes = tuple(int(x) if pd.api.types.is_integer_dtype(labels) and x.is_integer() else x for x in numbers)
    else:
        classes = tuple(declared)
    return y, tuple(declared), None, classes


def _quoted_list(values: Sequence[str]) -> str:
    """``'a'``, ``'a' and 'b'``, ``'a', 'b' and 'c'``."""
    quoted = [repr(str(v)) for v in values]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def load_csv(source: CsvSource, *, label_column: str, task: str | None = None, name: str = "upload",
             bounds: BoundsLike = None, drop: "str | Sequence[str]" = (), class_shares=None,
             categories: CategoriesLike = None) -> Dataset:
    """Turn an uploaded CSV (path, bytes, text or file object) or a pandas DataFrame into a Dataset.

    Parameters
    ----------
    label_column : str
        The column to predict. Every other column must be numeric or declared as categories; a classification
        label's classes are declared in ``categories`` too.
    task : {"classification", "regression"} or None
        ``None``: a label whose classes are declared (``categories``) is classification, one whose range is declared
        (``bounds``) regression; otherwise guessed from the rows: text labels, and whole numbers with at most 20
        distinct values, are classification; anything else regression (a guess that reads the rows, as the classes
        or the range it then needs are read from them, with a :class:`PrivacyLeakWarning`).

    bounds : mapping, text or pair, optional
        The range of each feature column (and of a regression label), declared from what the data can hold, not
        read from it: ``{"age": (17, 90)}``, ``"age=17:90, *=0:1"`` (:func:`parse_bounds`) or a pair
        ``(low, high)`` of numbers or of one number per feature column (:func:`bounds_by_column`). Values outside
        them are clipped to them, with a warning. A column without declared bounds gets its own min and max from
        the data, which leaks privacy (the extremes are private rows' values): a :class:`PrivacyLeakWarning`
        names those columns.
    drop : column name or names, optional
        Columns to leave out before anything else is read: an identifier, a free-text note, a column that should
        not inform the model. Their cells are never checked or used.
    class_shares : text or mapping, optional
        For a classification label: each class's share of the rows, declared from what is known outside the data
        (a published rate), e.g. ``"fraud=0.07, review=0.05, ok=0.88"``
        (:func:`~dpcore.datasets.shares.parse_class_shares`). The classifiers that release class probabilities
        then answer by them (:attr:`Dataset.class_shares`); nothing is read from the labels, so it costs no privacy.
    categories : mapping or text, optional
        The values each column of categories (text such as a ward, or codes such as 1 to 5) can hold, declared
        from what the column means, not read from its rows (a value that only a rare record holds would show that
        some record holds it): ``{"ward": ["Cardiology", "Oncology", "Surgery"]}`` or
        ``"ward=Cardiology|Oncology|Surgery, sex=F|M"`` (:func:`parse_categories`). Each declared column becomes
        one 0/1 feature per value, in its place, named ``ward=Cardiology`` and so on, bounded 0:1 by the
        declaration (:attr:`Dataset.categories`). A cell that is none of its column's values is encoded as 0 in
        every one of those features, with a :class:`DPCoreWarning` saying how many cells (never which values).
        A column of text that is not declared is refused.

        Declared for the label column (``"diagnosis=healthy|flu|covid, ward=A|B"``), the values are the label's
        classes (and the task is classification): exactly those, in the order declared, so every model has one
        output per declared class, a class no row holds included, and which classes the rows hold is not given
        away. A row whose label is none of them is refused, with how many rows. Without a declaration the classes
        are the distinct labels of the rows, sorted, with a :class:`PrivacyLeakWarning` (a class only one record
        holds appears or vanishes with that record, and with it the width of every model's output), and the
        Dataset records it (:attr:`Dataset.inferred_classes`): runs on it are marked as leaking privacy, as for
        bounds read from the rows.
    """
    declared = bounds_by_column(bounds, []) if bounds is None or isinstance(bounds, (str, Mapping)) else None
    declared_categories = parse_categories(categories)
    df = _read(source)
    if isinstance(source, pd.DataFrame):
        label_column = str(label_column)  # the frame's column names are read as text, as a file's are
    if label_column not in df.columns:
        raise DatasetError(f"the label column {label_column!r} is not a column of the file; its columns: "
                           f"{', '.join(_as_typed(str(c)) for c in df.columns)}")
    left_out = _left_out(df, drop, label_column)
    _check_categories(df, declared_categories, left_out, label_column)
    declared_classes = declared_categories.pop(str(label_column), None)  # the label's: its classes, not features
    df = df.drop(columns=list(left_out))
    if df.shape[1] < 2:
        raise DatasetError("the CSV needs at least one feature column besides the label column"
                           + (f" (left out: {_names(left_out)})" if left_out else ""))
    what = "the DataFrame" if isinstance(source, pd.DataFrame) else "the CSV"
    _refuse_missing(df, what, label_column)
    features = df.drop(columns=[label_column])
    labels = df[label_column]
    if task is None:  # declared: classes, or a range (a number to predict); else guessed from the rows, and then
        # the classes or the range the guess needs are read from them too, which the Dataset records as a leak
        ranged = declared is not None and str(label_column) in declared and declared_classes is None
        task = ("classification" if declared_classes is not None else "regression" if ranged
                else _guess_task(labels))
    if not isinstance(task, str) or task not in ("classification", "regression"):
        raise DatasetError(f"task must be 'classification' or 'regression', got {task!r}")
    if declared_classes is not None and task == "regression":
        raise CategoriesError(f"categories name the label column {label_column!r}, which is a regression label here: "
                              "declared categories of the label are its classes; declare a regression label's range "
                              f"in the bounds instead, e.g. {_as_typed(str(label_column))}=LOW:HIGH (bounds= in "
                              "load_csv, --bounds on the command line, 'Declared bounds' on the pages), or make it "
                              "classification (task= in load_csv, --task on the command line, 'Task' on the pages)")
    if len(df) < 2:
        raise DatasetError(f"{what} needs at least two data rows")
    features = _encoded_features(features, declared_categories, what)
    X = _feature_matrix(features, what)
    y, target_names, label_range, classes = _label_vector(labels, task, label_column, declared_classes)
    X, lo, hi, inferred, declared_label = _bounded_features(X, features, bounds, declared, left_out,
                                                             label_column=str(label_column), task=task,
                                                             categorical=category_columns(declared_categories))
    if len(df) < FEW_ROWS:
        test_rows = max(1, round(0.25 * len(df)))
        warnings.warn(
            f"{what} has only {len(df)} rows: a run tests on a quarter of them (about {test_rows}), so the test "
            f"accuracy moves in steps of 1/{test_rows} and says little; a few hundred rows give a steadier picture",
            DPCoreWarning,
            stacklevel=user_stacklevel(),
        )
    if declared_label is not None:
        label_range = declared_label
        y = clip_to_bounds(y, declared_label[0], declared_label[1], name=f"the label {label_column!r}")
    if task == "classification" and declared_classes is None:  # said once the file is read without a refusal
        _warn_of_read_classes(str(label_column))
    return Dataset(
        name=name,
        title=f"Uploaded CSV ({name})",
        task=task,
        X=_freeze(X),
        y=_freeze(y),
        feature_names=tuple(str(c) for c in features.columns),
        target_names=target_names,
        classes=classes,
        bounds=(_freeze(lo), _freeze(hi)),
        label_range=label_range,
        description=f"{len(df)} rows uploaded by the user; label column {label_column!r}.",
        source="upload",
        inferred_bounds=inferred,
        inferred_classes=(str(label_column),) if task == "classification" and declared_classes is None else (),
        categories=tuple(declared_categories.items()),
    ).with_class_shares(class_shares)


def _check_categories(df: pd.DataFrame, categories: dict, left_out: tuple[str, ...], label_column: str | None) -> None:
    """Refuse declared categories of a column the table does not have, or of a column left out."""
    unknown = [c for c in categories if c not in df.columns]
    if unknown:
        raise CategoriesError(f"categories name column(s) {_names(unknown)} that the file does not have; its "
                              f"columns: {', '.join(_as_typed(str(c)) for c in df.columns)}")
    both = [c for c in categories if c in left_out]
    if both:
        one = len(both) == 1
        raise CategoriesError(f"{_names(both)} {'is' if one else 'are'} both left out (drop=, --drop on the command "
                              "line, 'Columns to leave out' on the pages) and declared as categories: a column left "
                              f"out is never read, a declared one becomes features; remove {'it' if one else 'them'} "
                              "from one of the two")


def _encoded_features(features: pd.DataFrame, categories: dict, what: str) -> pd.DataFrame:
    """The feature columns with each declared column made one 0/1 column per declared value
    (:func:`encode_categories`), and a warning of how many cells are none of their column's values."""
    if not categories:
        return features
    encoded, unknown = encode_categories(features, categories)
    _warn_of_unknown_categories(unknown, len(features), what=what)
    return encoded


def _refuse_missing(df: pd.DataFrame, what: str, label_column: str | None) -> None:
    """Refuse, naming the columns, a table with an empty column or a missing cell (every learner needs a value in
    every cell; a label cannot be left out as a feature column can)."""
    if not df.isna().any().any():
        return
    empty = [c for c in df.columns if df[c].isna().all()]
    if empty:
        one = len(empty) == 1
        raise DatasetError(f"column{'' if one else 's'} {_names(empty)} {'is' if one else 'are'} empty in every "
                           f"row of {what}: drop {'it' if one else 'them'}"
                           + (f"; {label_column!r} is the label column: choose another" if label_column in empty
                              else f". {LEAVE_OUT}"))
    if label_column is not None and df[label_column].isna().any():
        raise DatasetError(f"the label column {label_column!r} has missing values "
                           f"({int(df[label_column].isna().sum())} of {len(df)} rows); remove those rows first "
                           "(every row needs its label)")
    bad = [f"{str(c)!r} ({int(df[c].isna().sum())} of {len(df)} rows)" for c in df.columns if df[c].isna().any()]
    raise DatasetError(f"{what} has missing values in column(s) {', '.join(bad)}; remove or fill those rows "
                       f"first (the learners need a value in every cell), or leave the column out. {LEAVE_OUT}")


def _bounded_features(X: np.ndarray, features: pd.DataFrame, bounds: BoundsLike, declared: dict | None,
                      left_out: tuple[str, ...], *, label_column: str | None, task: str,
                      categorical: Mapping[str, Sequence[str]] | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[str, ...], tuple | None]:
    """``(X clipped to its bounds, lower, upper, columns whose bounds were read from the rows, declared label
    range)``: each feature column's declared range (True/False columns 0 to 1 by their type, and the 0/1 columns
    of declared categories, ``categorical``: ``{column: its 0/1 columns}``, 0 to 1 by their declaration), the rows'
    own min and max for the rest with a :class:`PrivacyLeakWarning` naming them (and a regression label without a
    declared range), and warnings of ranges far wider than the values and of values clipped. ``label_column`` None:
    a table without a label."""
    columns = [str(c) for c in features.columns]
    categorical = dict(categorical or {})
    if declared is None:  # a pair (low, high): one range per feature column (a 0/1 column's is its declaration's)
        encoded = {e for block in categorical.values() for e in block}
        declared = {c: b for c, b in bounds_by_column(bounds, columns).items() if c not in encoded}
    _warn_identifiers(columns, X)
    _warn_constant(columns, X, categorical)
    feature_bounds, declared_label = _declared(columns, label_column, task, declared, left_out, categorical)
    for c, column in zip(columns, features.columns):  # True/False: 0 to 1 by the type, read from no row
        if c not in feature_bounds and pd.api.types.is_bool_dtype(features[column]):
            feature_bounds[c] = (0.0, 1.0)
    for block in categorical.values():  # a declared category: 0 or 1 by the declaration (a * rule does not apply)
        feature_bounds.update(dict.fromkeys(block, (0.0, 1.0)))
    label_left = task == "regression" and declared_label is None
    inferred = [c for c in columns if c not in feature_bounds] + ([str(label_column)] if label_left else [])
    if inferred:
        shown = _names(inferred, at_most=5)
        first = _as_typed(inferred[0])
        hint = f"{first}=LOW:HIGH" + (f", and {label_column}=LOW:HIGH for the label, which * does not cover"
                                            if label_left and inferred[0] != str(label_column) else "")
        warnings.warn(
            f"the bounds of {shown} were read from the data itself, which leaks privacy (their extremes are private "
            f"rows' values); declare what each column can hold, e.g. {hint} (* stands for the feature columns not "
            "named)",
            PrivacyLeakWarning,
            stacklevel=user_stacklevel(),
        )
    lo, hi = X.min(axis=0), X.max(axis=0)
    hi = np.where(hi > lo, hi, lo + 1.0)
    for j, c in enumerate(columns):
        if c in feature_bounds:
            lo[j], hi[j] = feature_bounds[c]
    if feature_bounds:
        _warn_of_loose_bounds(X, columns, feature_bounds)
        outside = ((X < lo) | (X > hi)).sum(axis=0)
        if outside.any():
            named = [f"{c!r} ({int(n)})" for c, n in zip(columns, outside) if n]
            warnings.warn(
                f"{int(outside.sum())} value(s) lay outside the declared bounds and were clipped to them: "
                f"{', '.join(named[:5])}{f' and {len(named) - 5} more columns' if len(named) > 5 else ''}; widen "
                "those bounds if that is not intended",
                DPCoreWarning,
                stacklevel=user_stacklevel(),
            )
            X = np.clip(X, lo, hi)
    return X, lo, hi, tuple(inferred), declared_label


#: The task of a table read without a label (:func:`load_csv_unlabelled`): only the clusterings take it.
UNLABELLED = "unlabelled"


def load_csv_unlabelled(source: CsvSource, *, name: str = "upload", bounds: BoundsLike = None,
                        drop: "str | Sequence[str]" = (), categories: CategoriesLike = None) -> Dataset:
    """An uploaded CSV (path, bytes, text or file object) or a DataFrame with no label: every column not in ``drop``
    is a feature, read, encoded, bounded and refused exactly as :func:`load_csv` reads the features of a labelled
    one (``bounds``, ``drop`` and ``categories`` as there; a column without declared bounds gets its own min and
    max, with a :class:`PrivacyLeakWarning` naming it).

    The Dataset's ``task`` is :data:`UNLABELLED` and its ``y`` holds zeros, one per row, which no code reads as
    classes: such a table can be clustered (:func:`dpcore.models.cluster_rows.cluster_rows`), not scored against
    classes nor used to train a predictor.

    >>> ds = load_csv_unlabelled("a,b\\n1,2\\n3,4\\n5,6\\n", bounds="*=0:10")
    >>> ds.task, ds.n_features, ds.feature_names
    ('unlabelled', 2, ('a', 'b'))
    """
    declared = bounds_by_column(bounds, []) if bounds is None or isinstance(bounds, (str, Mapping)) else None
    declared_categories = parse_categories(categories)
    df = _read(source)
    left_out = _left_out(df, drop, None)
    _check_categories(df, declared_categories, left_out, None)
    features = df.drop(columns=list(left_out))
    if features.shape[1] < 1:
        raise DatasetError(f"the CSV needs at least one feature column (left out: {_names(left_out)})")
    what = "the DataFrame" if isinstance(source, pd.DataFrame) else "the CSV"
    _refuse_missing(features, what, None)
    if len(features) < 2:
        raise DatasetError(f"{what} needs at least two data rows")
    features = _encoded_features(features, declared_categories, what)
    X = _feature_matrix(features, what)
    X, lo, hi, inferred, _ = _bounded_features(X, features, bounds, declared, left_out, label_column=None,
                                               task=UNLABELLED, categorical=category_columns(declared_categories))
    return Dataset(
        name=name,
        title=f"Uploaded CSV ({name})",
        task=UNLABELLED,
        X=_freeze(X),
        y=_freeze(np.zeros(len(features), dtype=np.int64)),
        feature_names=tuple(str(c) for c in features.columns),
        bounds=(_freeze(lo), _freeze(hi)),
        description=f"{len(features)} rows uploaded by the user; no label column.",
        source="upload",
        inferred_bounds=inferred,
        categories=tuple(declared_categories.items()),
    )


def last_column_holds_classes(source: CsvSource) -> bool:
    """True when the table's last column reads as classes (text, or at most 20 whole numbers: what ``task=None``
    guesses as classification): the column a page first offers as the label. False for a last column of measured
    numbers, as in a table whose columns are all features (the Clustering page then starts on "no label")."""
    df = _read(source)
    last = df[df.columns[-1]]
    return bool(last.notna().any()) and _guess_task(last.dropna()) == "classification"
