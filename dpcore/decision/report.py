"""The decision report: one self-contained HTML file a data owner can take to a meeting.

:func:`report_html` writes the advisor's answer (:class:`dpcore.decision.advisor.Advice`) as one HTML file that opens
offline: its chart is inline SVG (no script, no font, no network), its style inline. It holds the question asked; the
data's shape (rows, column names, declared bounds: never a record or a cell value); each learner's curve with its
interval; the recommendation and its reasons, or what would meet the need; the attack at that ε; the verdict band and
the published deployments; every warning, leaks first; each ε with its ``dp_accounting`` event; how the noise was drawn;
the software versions and the date. :func:`report_json` is the same content as JSON.

What it never holds: a record, a cell value, or anything computed from one column of the data alone (the minimum
and maximum of a column whose bounds were read from the rows are cell values, so those bounds are named as "read
from the data" and not printed; a class label is a cell value too, so the report counts classes and does not name
them, and a warning that quotes one has it replaced by "a class"; a declared category is a cell value as well, so a
column of categories is named with the number of its declared categories, never with their names, nor with how many
of its cells were none of them).
"""
from __future__ import annotations

import datetime as _dt
import html
import math
import platform
import re
from importlib import metadata
from typing import Any, Mapping, Sequence

import numpy as np

from ..teaching.verdict import confidence_text, epsilon_text
from .advisor import Advice, _spread, metric_name

#: Okabe & Ito (2008) colours, as the pages use them (dpcore.ui.palette), in series order.
_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#000000")
_BAND_TINTS = {"strong": "rgba(0,158,115,0.10)", "moderate": "rgba(240,228,66,0.20)",
               "weak": "rgba(230,159,0,0.12)", "nominal": "rgba(213,94,0,0.10)"}
#: Packages whose versions the report lists.
_PACKAGES = ("dp-accounting", "numpy", "pandas", "scipy", "scikit-learn", "torch")
#: What an attack's numbers do not say, wherever they are shown.
ATTACK_CAVEAT = ("A lower bound of 0 says this attack proved no leak; it does not prove the model safe. What any "
                 "attacker can learn is bounded by the ε itself, once no privacy leak is among the warnings.")


#: What the attack's own figures are: measured knowing which records were members, so no ε covers them.
ATTACK_FIGURES_NOTE = ("These figures are measured knowing which of your records trained the attacked model (an "
                       "attacker does not), so no ε covers them: like the curves, they describe your rows, for those "
                       "who may see them; that model is one more run on your data, besides the ones counted below.")


def software_versions() -> dict[str, str]:
    """Python, dpcore and the packages the numbers depend on."""
    import dpcore

    out = {"python": platform.python_version(), "dpcore": dpcore.__version__}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _class_names(dataset) -> list[str]:
    names = [str(n) for n in getattr(dataset, "target_names", ()) or ()]
    return sorted(names, key=len, reverse=True)


def scrub(text: str, dataset) -> str:
    """``text`` with the data's class labels (cell values) replaced by "a class", and a column's spread (computed
    from its cells) and the counts of values clipped to the declared bounds left out. The learners' and the
    loader's warnings may quote any of them."""
    out = str(text)
    if getattr(dataset, "source", "") == "upload":
        for name in _class_names(dataset):
            out = out.replace(f"the single class {name!r}", "a single class")
            # "the most common training class (ok)": the parenthesis only named it ("(a class)" read as a typo)
            # ... and "class ('no')", as the sweep's warnings quote it, likewise (it read "class (a class)")
            out = out.replace(f" ({name!r})", "").replace(f" ({name})", "")
            out = out.replace(repr(name), "a class").replace(f"({name})", "(a class)")
        out = re.sub(r"[-+0-9.eE]+ across the file", "the values' own spread", out)
        # how many values fell outside a column's declared bounds counts the file's extreme records (no ε covers
        # it): the report says which columns were clipped, not how many of their values
        out = re.sub(r"\d+ value\(s\) lay outside the declared bounds and were clipped to them: (.*?); widen",
                     lambda m: "Values lay outside the declared bounds and were clipped to them: "
                               + re.sub(r"('[^']*') \(\d+\)", r"\1", m[1]) + "; widen", out)
        out = re.sub(r"\d+ of \d+ rows \(\d+ values\) lay outside", "Rows lay outside", out)
        out = re.sub(r"\d+ value\(s\) of (.*?) lay outside", r"Values of \1 lay outside", out)
        out = _scrub_categories(out, dataset)
    return out


def _scrub_categories(text: str, dataset) -> str:
    """``text`` without the declared categories of ``dataset`` (cell values): a 0/1 column ``ward=Cardiology``
    becomes its column ``ward``, a quoted category "a category", and the counts of cells outside the declared
    categories (a count of the file's unusual records) are left out."""
    declared = dict(getattr(dataset, "categories", ()) or ())
    if not declared:
        return text
    text = re.sub(r"some cells of .*? hold none of their column's declared categories: (.*?); each",
                  lambda m: "Some cells hold none of their column's declared categories: "
                            + re.sub(r" \(\d+ of \d+ cells\)", "", m[1]) + "; each", text)
    encoded = sorted(((f"{c}={v}", c) for c, values in declared.items() for v in values), key=lambda p: -len(p[0]))
    for name, column in encoded:
        text = text.replace(repr(name), f"{column!r} (a declared category)").replace(name, column)
    columns = set(getattr(dataset, "feature_names", ())) | set(declared)
    for value in sorted({v for values in declared.values() for v in values if v not in columns}, key=len,
                        reverse=True):
        text = text.replace(repr(value), "a category")
    return text


#: What a column of declared categories is, for a reader of the report who is not a statistician.
CATEGORIES_NOTE = (
    "A column of declared categories (a ward, a sex) holds one value from a list. The data's owner wrote the list from "
    "what the column means (its codebook, the form that collected it), not from the records, so the list tells nothing "
    "about anyone in them. The models read each listed value as a yes/no feature of its own, which is why there are "
    "more features than columns; a record whose value is not on the list reads no on all of them. Each yes/no feature "
    "is 0 or 1, so it needs no declared range. The report says how many values each such column lists, never the "
    "values, nor how many records held one off the list: a category is a value from the records, and a rare one could "
    "point to a person.")


def data_shape(dataset) -> dict:
    """Rows, columns, task and bounds of ``dataset`` (a registry name or a Dataset): no cell value.

    A column's bounds are given when declared (public knowledge, by definition); a column whose bounds were read
    from the rows is marked so, without the numbers (they are its minimum and maximum: cell values).
    """
    from ..datasets import load_dataset

    ds = load_dataset(dataset) if isinstance(dataset, str) else dataset
    upload = getattr(ds, "source", "") == "upload"
    inferred = set(getattr(ds, "inferred_bounds", ()) or ())
    columns = []
    lo, hi = ds.bounds if ds.bounds is not None else (None, None)
    declared = dict(getattr(ds, "categories", ()) or ())
    of = {f"{c}={v}": c for c, values in declared.items() for v in values}  # a 0/1 column: its declared column
    for j, name in enumerate(ds.feature_names if not ds.is_image else ()):
        if name in of:  # a category's name is a cell value: the column is named once, with how many it declares
            column = of[name]
            if column in declared:
                k = len(declared.pop(column))
                columns.append({"column": f"{column} ({k} declared categories)", "categories": k,
                                "bounds": "0 or 1 for each declared category (declared)"})
            continue
        if name in inferred:
            bounds = "read from the data (leaks; not shown: they are values of the file)"
        elif lo is not None:
            bounds = f"{float(lo[j]):.10g} to {float(hi[j]):.10g} " + ("(declared)" if upload else "(published)")
        else:
            bounds = "none"
        columns.append({"column": str(name), "bounds": bounds})
    out = {"name": ds.name, "source": "your file" if upload else "registry dataset", "rows": ds.n_samples,
           "features": ds.n_features, "task": ds.task, "columns": columns}
    if any("categories" in c for c in columns):
        out["declared_categories"] = CATEGORIES_NOTE
    if ds.task == "classification":
        out["classes"] = ds.n_classes
        if upload:  # how many, never which: a class's name is a label value
            out["class_list"] = ("read from the data (leaks: which classes occur is a fact of the rows)"
                                 if getattr(ds, "inferred_classes", ()) else "declared by the data's owner")
        if getattr(ds, "class_shares", ()):  # declared public knowledge; listed without the classes they belong to
            shares = ", ".join(f"{v:.3g}" for v in sorted(ds.class_shares, reverse=True))
            out["class_shares"] = (f"declared by the data's owner, not read from the rows, and used: {shares} "
                                   "(largest first; the classes are not named). Every learner that releases class "
                                   "probabilities, the non-private references included, answered the class of "
                                   "largest probability divided by its share (Elkan 2001; Saerens et al. 2002): "
                                   "post-processing, no privacy spent. A learner that releases scores answered "
                                   "its highest score (said among the warnings).")
    elif ds.label_range is not None:
        label_inferred = any(c not in ds.feature_names for c in inferred)
        out["label_bounds"] = ("read from the data (leaks; not shown)" if label_inferred
                               else f"{ds.label_range[0]:.10g} to {ds.label_range[1]:.10g} (declared)")
    if ds.is_image:
        out["image_shape"] = list(ds.image_shape)
    return out


def _nice_ticks(lo: float, hi: float, most: int = 6) -> list[float]:
    """Round values for an axis from ``lo`` to ``hi``: multiples of 1, 2, 2.5 or 5 times a power of ten, the finest
    step giving at most ``most`` ticks (0.5, 0.6, ... 1 rather than 0.487, 0.615, ...).

    >>> _nice_ticks(0.487, 1.0)
    [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    >>> _nice_ticks(2000.0, 3100.0)
    [2000.0, 2200.0, 2400.0, 2600.0, 2800.0, 3000.0]
    """
    if not (_finite(lo) and _finite(hi)) or hi <= lo:
        return [lo]
    power = 10.0 ** math.floor(math.log10((hi - lo) / most))
    for m in (1, 2, 2.5, 5, 10, 20):
        step = m * power
        first = math.ceil(lo / step - 1e-9)
        ticks = [round((first + k) * step, 12) for k in range(int(math.floor(hi / step + 1e-9)) - first + 1)]
        if len(ticks) <= most:
            return ticks
    return [lo, hi]


def _finite(v) -> bool:
    return v is not None and isinstance(v, (int, float, np.floating)) and math.isfinite(float(v))


def non_private_lines(advice: Advice) -> list[tuple[str, float]]:
    """The non-private lines the chart draws, as (label, mean): one, "non-private", when every learner is judged
    against the same model; else one per non-private counterpart, named by it.

    Each learner's target is its own counterpart's mean minus the gap (:func:`dpcore.decision.advisor.judge`): on an
    88/7/5 upload with declared class shares, DP-SGD's counterpart (which follows the shares) scored 0.656 in
    balanced accuracy and DP-ERM's (which releases scores, so does not) 0.349; the chart drew only "non-private
    0.349", under a DP-SGD curve at 0.59 that the report said fell short of the non-private model.
    """
    sweep = getattr(advice, "sweep", None)
    table = getattr(sweep, "table", None)
    lines: dict[str, float] = {}
    if table is not None and advice.metric in table and len(advice.points):
        for name in dict.fromkeys(advice.points["learner"]):
            counterpart = sweep.config.baseline_for(name)
            rows = table[(table.role == "baseline") & (table.learner == counterpart)]
            if counterpart and not rows.empty and counterpart not in lines:
                lines[counterpart] = float(rows.groupby("seed")[advice.metric].mean().mean())
    if len(lines) < 2:
        return [("non-private", advice.baseline)] if _finite(advice.baseline) else []
    # a counterpart's title mostly says it is non-private already ("Non-private SGD (same model)")
    return [(_title(name) if "non-private" in _title(name).lower() else f"non-private: {_title(name)}", value)
            for name, value in lines.items()]


def curves_svg(advice: Advice, *, width: int = 760, height: int = 380) -> str:
    """Each learner's mean across seeds against ε (log scale) with its prediction interval, the non-private and
    trivial lines, the target, the verdict bands and the recommended point, as one inline SVG."""
    from ..teaching.verdict import BANDS

    pts = advice.points
    left, right, top, bottom = 64, 16, 26, 46
    pw, ph = width - left - right, height - top - bottom
    lo, hi = advice.epsilon_range
    if lo == hi:
        lo, hi = lo / 2, hi * 2
    ys = [v for v in list(pts["mean"]) + list(pts["bound"]) + list(2 * pts["mean"] - pts["bound"]) +
          [advice.target, advice.trivial] + [v for _, v in non_private_lines(advice)] if _finite(v)]
    y0, y1 = (min(ys), max(ys)) if ys else (0.0, 1.0)
    pad = (y1 - y0) * 0.06 or 0.05
    y0, y1 = y0 - pad, y1 + pad
    if advice.metric in ("accuracy", "balanced_accuracy", "r2"):  # no score above 1: an interval past it is drawn
        # up to the frame
        y1 = min(y1, 1.0)

    def x(e: float) -> float:
        return left + pw * (math.log10(e) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    def y(v: float) -> float:
        v = min(max(v, y0), y1)
        return top + ph * (1 - (v - y0) / (y1 - y0))

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} '
             f'{height}" role="img" aria-label="Privacy-utility curves" font-family="sans-serif" font-size="12">']
    start = 0.0
    for band in BANDS:  # the verdict bands behind the ε axis
        a, b = max(start, lo), min(band.upper, hi)
        start = band.upper
        if b <= a:
            continue
        parts.append(f'<rect x="{x(a):.1f}" y="{top}" width="{x(b) - x(a):.1f}" height="{ph}" '
                     f'fill="{_BAND_TINTS[band.name]}"/>')
        parts.append(f'<text x="{(x(a) + x(b)) / 2:.1f}" y="{top - 8}" text-anchor="middle" fill="#444">'
                     f'{html.escape(band.headline)}</text>')
    parts.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
    for e in sorted(set(pts["epsilon"])):  # ticks at the ε tried
        parts.append(f'<line x1="{x(e):.1f}" x2="{x(e):.1f}" y1="{top + ph}" y2="{top + ph + 5}" stroke="#666"/>'
                     f'<text x="{x(e):.1f}" y="{top + ph + 18}" text-anchor="middle">{epsilon_text(e)}</text>')
    for v in _nice_ticks(y0, y1):
        parts.append(f'<line x1="{left - 5}" x2="{left}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#666"/>'
                     f'<text x="{left - 8}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.3g}</text>')
    parts.append(f'<text x="{left + pw / 2}" y="{height - 8}" text-anchor="middle">ε (privacy budget), log scale'
                 '</text>')
    parts.append(f'<text x="14" y="{top + ph / 2}" text-anchor="middle" transform="rotate(-90 14 {top + ph / 2})">'
                 f'Test {metric_name(advice.metric)}</text>')
    references = non_private_lines(advice)
    names = []  # the lines' names, drawn after the legend's pale box (a name at the top right ran under it)
    named_at = -math.inf  # the last name's baseline: two lines a few pixels apart (0.740 and 0.736) wrote one name
    for value, colour, dash, label in sorted(  # over the other; each name now sits at least a text line below
            [(v, "#000", "6 4", lab) for lab, v in references] + [(advice.trivial, "#7F7F7F", "2 3", "trivial")],
            key=lambda line: y(line[0]) if _finite(line[0]) else math.inf):
        if _finite(value):
            parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
                         f'stroke="{colour}" stroke-dasharray="{dash}" stroke-width="1.5"/>')
            named_at = max(y(value) - 4, named_at + 12)
            names.append(f'<text x="{left + pw - 4}" y="{named_at:.1f}" text-anchor="end" fill="{colour}">'
                         f'{html.escape(label)} {value:.3g}</text>')
    legend: list[tuple[str, str]] = []
    marks: list[float] = [y(v) for v in [v for _, v in references] + [advice.trivial] if _finite(v)]
    for i, (name, g) in enumerate(pts.groupby("learner", sort=False)):
        g = g.sort_values("epsilon")
        c = _COLOURS[i % len(_COLOURS)]
        upper = [(x(e), y(2 * m - b)) for e, m, b in zip(g.epsilon, g["mean"], g.bound) if _finite(b)]
        lower = [(x(e), y(b)) for e, b in zip(g.epsilon, g.bound) if _finite(b)]
        if upper:
            poly = " ".join(f"{px:.1f},{py:.1f}" for px, py in upper + lower[::-1])
            parts.append(f'<polygon points="{poly}" fill="{c}" fill-opacity="0.15" stroke="none"/>')
        line = " ".join(f"{x(e):.1f},{y(m):.1f}" for e, m in zip(g.epsilon, g["mean"]))
        parts.append(f'<polyline points="{line}" fill="none" stroke="{c}" stroke-width="2.5"/>')
        for e, m, ok in zip(g.epsilon, g["mean"], g.meets):
            parts.append(f'<circle cx="{x(e):.1f}" cy="{y(m):.1f}" r="4" fill="{c if ok else "white"}" '
                         f'stroke="{c}" stroke-width="2"/>')
        target = float(g["target"].iloc[0])
        if _finite(target):
            parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(target):.1f}" y2="{y(target):.1f}" '
                         f'stroke="{c}" stroke-dasharray="1 3" stroke-width="1.5"/>')
        legend.append((c, f"{_title(name)} (dotted: its target)"))
        marks += [y(m) for m in g["mean"] if _finite(m)] + ([y(target)] if _finite(target) else [])
    r = advice.recommended
    box = None  # the legend's (x, y, width, height)
    if legend:  # drawn last, on a pale box: over the curves and the non-private line, not under them
        lx = left + 8
        widest = max(len(label) for _, label in legend)
        bw, bh = min(pw - 8, 28 + 6.6 * widest), 16 * len(legend) + 4
        # the top left corner, unless more of the curves' points and lines pass under it there than at the bottom
        # left (an R² sweep whose curves end near 0 under an axis up to 1 hid its answer under the legend)
        if r is not None:
            marks.append(y(r["mean"]))
        high, low = top + 3, top + ph - 3 - bh
        by = high if sum(high <= m <= high + bh for m in marks) <= sum(low <= m <= low + bh for m in marks) else low
        box = (lx - 4, by, bw, bh)
        parts.append(f'<rect x="{lx - 4}" y="{by}" width="{bw:.0f}" height="{bh}" fill="#fff" fill-opacity="0.85" '
                     'stroke="#ccc"/>')
        for i, (c, label) in enumerate(legend):
            ly = by + 13 + 16 * i
            parts.append(f'<rect x="{lx}" y="{ly - 9}" width="14" height="4" fill="{c}"/>'
                         f'<text x="{lx + 20}" y="{ly - 3}">{html.escape(label)}</text>')
    parts += names
    if r is not None:
        rx, ry = x(r["epsilon"]), y(r["mean"])
        # in the right half the label runs leftwards above the point (the top ε's label left the chart; below it, the
        # trivial line's label at the right edge): a recommended point lies above that line; where the legend box
        # is there, below the point
        right_half = rx > left + pw / 2
        text = f'recommended ε = {epsilon_text(r["epsilon"])}'
        tx = rx - 12 if right_half else rx + 12
        ty = ry + (-14 if right_half else 18)
        x_from, x_to = (tx - 7.5 * len(text), tx) if right_half else (tx, tx + 7.5 * len(text))
        if box and x_from < box[0] + box[2] and x_to > box[0] and box[1] - 2 <= ty and ty - 12 <= box[1] + box[3]:
            ty = ry + 22 if ty < ry else ry - 14
        parts.append(f'<circle cx="{rx:.1f}" cy="{ry:.1f}" r="9" fill="none" stroke="#000" stroke-width="2"/>'
                     f'<text x="{tx:.1f}" y="{ty:.1f}" font-weight="bold" paint-order="stroke" stroke="#fff" '
                     'stroke-width="4" stroke-linejoin="round"'  # a white halo: a line behind it does not strike it
                     + (' text-anchor="end"' if right_half else "") + f">{text}</text>")
    parts.append("</svg>")
    return "".join(parts)


def question_of(advice: Advice) -> dict:
    """The question the advice answers, in words (the report's first table)."""
    cfg = advice.sweep.config
    lo, hi = advice.epsilon_range
    return {
        "need": advice.need.describe(),
        "ε range accepted": f"{lo:g} to {hi:g}",
        "ε values tried": ", ".join(epsilon_text(v) for v in cfg.values if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)),
        "learners": ", ".join(_title(n) for n in cfg.learners),
        "seeds per ε": f"{cfg.seeds} (runs at each ε, each on a fresh split of the rows with fresh noise)",
        "δ": f"{cfg.delta:g} (the additive slack beside ε: any outcome may be e^ε times as likely plus δ; not the "
             "chance that the ε bound fails; keep it well below 1/n for n records)",
        "how sure": f"a fresh run meets the need in {confidence_text(advice.confidence)} of cases (one-sided "
                    "prediction bound)",
    }


def noise_of(advice: Advice) -> str:
    """How the sweep's noise was drawn."""
    cfg = advice.sweep.config
    if cfg.secure:
        return ("secure: drawn from the operating system's cryptographic source onto a grid (Mironov 2012); every "
                "run's noise is fresh, the train/test split uses seed 0")
    return (f"seeded (seeds {cfg.base_seed} to {cfg.base_seed + cfg.seeds - 1}): reproducible for exploring, not "
            "for a release")


def _title(name: str) -> str:
    from ..learners import learners

    spec = learners().get(name)
    return spec.title if spec is not None else name


def _e(text: Any) -> str:
    return html.escape(str(text))


def _band_html(band: str, sentence: str) -> str:
    """The verdict sentence (it already names its band after the dots) with the band's name in bold, once."""
    text = _e(sentence)
    name = _e(band)
    return text.replace(name, f"<b>{name}</b>", 1) if name in text else f"<b>{name}.</b> {text}"


def _where(w: dict) -> str:
    """"At ε = 0.1, 0.3: " when not every run of the warning's learners raised it."""
    if w.get("everywhere", True) or not w.get("where"):
        return ""
    return "At ε = " + ", ".join(epsilon_text(v) + (f" ({k} of {n} runs)" if k < n else "")
                                 for v, (k, n) in w["where"].items()) + ": "


def _warnings(advice: Advice, extra: Sequence[tuple[str, bool]], dataset) -> list[dict]:
    """Every warning, leaks first: the loader's (``extra``: (message, is_leak)) and the sweep's."""
    out = [{"message": scrub(m, dataset), "learners": [], "leak": bool(leak)} for m, leak in extra]
    out += [{"message": scrub(_where(w) + w["message"], dataset), "learners": [_title(n) for n in w["learners"]],
             "leak": bool(w["leak"])} for w in advice.warnings]
    seen, unique = set(), []
    for w in out:
        if w["message"] not in seen:
            seen.add(w["message"])
            unique.append(w)
    return sorted(unique, key=lambda w: not w["leak"])


def report_json(advice: Advice, *, dataset=None, question: dict | None = None, noise: str | None = None,
                load_warnings: Sequence[tuple[str, bool]] = (),
                created: _dt.datetime | None = None) -> dict:
    """The report's content as JSON values (what ``report --json`` prints)."""
    dataset = advice.sweep.config.dataset if dataset is None else dataset
    question = question_of(advice) if question is None else question
    noise = noise_of(advice) if noise is None else noise
    doc = advice.to_json_dict()
    doc["warnings"] = _warnings(advice, load_warnings, dataset)
    doc["reasons"] = [scrub(t, dataset) for t in doc["reasons"]]
    doc["instead"] = [scrub(t, dataset) for t in doc["instead"]]
    doc.update({"question": question, "data": data_shape(dataset), "noise": noise,
                "versions": software_versions(),
                "created": (created or _dt.datetime.now(_dt.timezone.utc)).isoformat(timespec="seconds")})
    return doc


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:980px;margin:24px auto;padding:0 16px;
color:#111;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
.answer{font-size:1.15em;padding:12px 16px;border-radius:6px;background:#eef6ee;border-left:6px solid #009E73}
.answer.no{background:#fdf1ea;border-left-color:#D55E00}
.leak{background:#fdecea;border-left:5px solid #D55E00;padding:6px 10px;margin:6px 0}
.warn{background:#fff8e1;border-left:5px solid #E69F00;padding:6px 10px;margin:6px 0}
table{border-collapse:collapse;font-size:.9em;margin:8px 0}td,th{border:1px solid #ddd;padding:4px 8px;
text-align:left;vertical-align:top}th{background:#f5f5f5}code{font-size:.85em;word-break:break-all}
.muted{color:#555;font-size:.9em}
svg{max-width:100%;height:auto}table{display:block;max-width:100%;overflow-x:auto}
@media print{body{max-width:none}table{display:table}}
"""


def _attacked_model(advice: Advice, att: Mapping[str, Any]) -> str:
    """What the attacked model scored on the records it never saw, and, where that is no better than always answering
    the most common class, that the attack then had little to find (its reading is weak evidence either way)."""
    acc = att.get("model_accuracy")
    if acc is None or not math.isfinite(float(acc)):
        return ""
    out = f" The attacked model answers {float(acc):.1%} of the records it never saw right"
    metric = getattr(getattr(advice, "need", None), "metric", None)
    trivial = getattr(advice, "trivial", None) if metric == "accuracy" else _trivial_accuracy(advice)
    if trivial is not None and float(acc) <= float(trivial):
        out += (f", no better than always answering the most common class ({float(trivial):.1%}): a model that "
                "learnt so little gives an attack little to find, so this reading is weak evidence either way")
    elif trivial is not None and metric != "accuracy":  # in balanced accuracy: an accuracy alone reads as a good model
        out += (f", in accuracy; always answering the most common class answers {float(trivial):.1%} right, which is "
                f"why the need is judged in {metric.replace('_', ' ')}")
    return out + "."


def _trivial_accuracy(advice: Advice) -> float | None:
    """The trivial predictor's accuracy over the sweep's seeds (the attacked model's accuracy is set beside it), where
    the need is judged in another metric of a classifier; None without one."""
    table = getattr(getattr(advice, "sweep", None), "table", None)
    if table is None or "accuracy" not in table or "role" not in table:
        return None
    found = table.loc[table.role == "trivial", "accuracy"].dropna().astype(float)
    return float(found.mean()) if len(found) and math.isfinite(found.mean()) else None


def _data_section(shape: dict) -> list[str]:
    """The "Your data" section: the data's shape and each column's bounds (no cell value: :func:`data_shape`)."""
    h = ["<h2>Your data</h2><table>"]
    for k in ("name", "source", "task", "rows", "features", "classes", "class_list", "class_shares", "label_bounds",
              "image_shape"):
        if k in shape:
            h.append(f"<tr><th>{_e(k.replace('_', ' '))}</th><td>{_e(shape[k])}</td></tr>")
    h.append("</table>")
    if shape["columns"]:
        h.append("<table><tr><th>column</th><th>bounds</th></tr>" + "".join(
            f"<tr><td>{_e(c['column'])}</td><td>{_e(c['bounds'])}</td></tr>" for c in shape["columns"]) + "</table>")
    if "declared_categories" in shape:
        h.append(f"<p>{_e(shape['declared_categories'])}</p>")
    return h


def _meets_cell(p) -> str:
    """The table's "meets" cell: yes or no, and why a bound above the target still does not meet (the model does no
    better than the trivial predictor, or its runs spent more than the ε they are drawn at)."""
    why = [] if p.meets else (["no better than the trivial predictor"] if not getattr(p, "beats_trivial", True) else
                              []) + (["spent more than this ε"] if getattr(p, "over_budget", False) else [])
    why += ["leaks"] if p.leaks else []
    return ("yes" if p.meets else "no") + (f" ({'; '.join(why)})" if why else "")


def _computed_section(doc: dict) -> list[str]:
    """The "How it was computed" section: the noise, the software versions and the date."""
    h = ["<h2>How it was computed</h2><table>", f"<tr><th>noise</th><td>{_e(doc['noise'])}</td></tr>"]
    h += [f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in doc["versions"].items()]
    h.append(f"<tr><th>date (UTC)</th><td>{_e(doc['created'])}</td></tr></table>")
    return h


def readers_note(advice: Advice) -> str:
    """Who may read the decision report: the recommended ε covers a model trained once at it, not the report. Its
    curves are every run looked at (their composed ε, :func:`~dpcore.decision.advisor.selection_note`), and the
    non-private model's and the trivial predictor's scores, and an attack's figures, are read from the rows without
    noise: no ε covers them (they fail closed to "none")."""
    from ..sweep.summary import spent_text

    composed = float(advice.selection.get("composition_epsilon", math.inf))
    return ("This report is not covered by the ε it recommends, which protects a model trained once at that ε. Its "
            f"curves cost ε = {spent_text(composed)} (see \"Choosing ε from these curves is a release\"), and the "
            "scores of the non-private model and of the trivial predictor"
            + (", and the attack's figures," if advice.attack else "")
            + " are computed on your rows without noise, which no ε covers. Keep it with those allowed to see the "
            "data; what you release is the model.")


def report_html(advice: Advice, *, dataset=None, question: dict | None = None, noise: str | None = None,
                load_warnings: Sequence[tuple[str, bool]] = (), created: _dt.datetime | None = None) -> str:
    """The decision report as one self-contained HTML document (see the module's docstring)."""
    doc = report_json(advice, dataset=dataset, question=question, noise=noise, load_warnings=load_warnings,
                      created=created)
    dataset = advice.sweep.config.dataset if dataset is None else dataset
    question = doc["question"]
    shape, r, att = doc["data"], advice.recommended, advice.attack
    h: list[str] = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
                    '<meta name="viewport" content="width=device-width, initial-scale=1">',
                    f"<title>Privacy budget decision report: {_e(shape['name'])}</title><style>{_CSS}</style>"
                    "</head><body>"]
    h.append(f"<h1>Which ε for {_e(shape['name'])}? A decision report</h1>")
    h.append(f'<p class="muted">Made {_e(doc["created"])} by dpcore {_e(doc["versions"]["dpcore"])}. Every number '
             "here was computed on the data named below; no record and no value of it is in this file.</p>")
    h.append(f"<p><strong>Who may read it.</strong> {_e(readers_note(advice))}</p>")
    h.append("<h2>The question asked</h2><table>")
    for k, v in question.items():
        h.append(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>")
    h.append("</table>")
    h.append("<h2>The answer</h2>")
    h.append(f'<div class="answer{"" if r else " no"}">{_e(scrub(advice.headline(), dataset))}</div>')
    if r:
        h.append("<ul>" + "".join(f"<li>{_e(t)}</li>" for t in doc["reasons"]) + "</ul>")
    else:
        h.append("<p>What would meet it, from what the sweep saw:</p><ul>" +
                 "".join(f"<li>{_e(t)}</li>" for t in doc["instead"]) + "</ul>")
    leaks = [w for w in doc["warnings"] if w["leak"]]
    if leaks or doc["warnings"]:
        h.append(f"<h2>Warnings: {len(doc['warnings'])} (" + (f"{len(leaks)} privacy leak"
                 f"{'s' if len(leaks) != 1 else ''}, shown first" if leaks else "no privacy leak") + ")</h2>")
        for w in doc["warnings"]:
            who = f"<b>{_e(', '.join(w['learners']))}:</b> " if w["learners"] else ""
            head = "<b>Privacy leak.</b> " if w["leak"] else ""
            h.append(f'<div class="{"leak" if w["leak"] else "warn"}">{head}{who}{_e(w["message"])}</div>')
    h.append("<h2>The curves</h2>")
    h.append(curves_svg(advice))
    h.append(f'<p class="muted">Lines: the mean over seeds of each learner; shading: the two-sided '
             f"{confidence_text(2 * advice.confidence - 1)} prediction interval of one fresh run, whose lower edge "
             f"(upper for MSE) is the {confidence_text(advice.confidence)} bound the advisor uses; filled dots meet "
             "the need. Tints: the verdict bands.</p>")
    h.append("<h2>Risk at the recommended ε</h2>")
    if r:
        h.append(f"<p>{_band_html(r['band'], r['band_sentence'])}</p><p>{_e(r['deployments'])}</p>")
        h.append("<p>Published deployments nearest to it (their units differ: read them before comparing):</p><ul>" +
                 "".join(f"<li>{_e(d)}</li>" for d in r["nearest_deployments"]) + "</ul>")
    else:
        h.append("<p>No ε is recommended, so no band is given.</p>")
    h.append("<h3>What an attacker learned</h3>")
    if att is None:
        h.append("<p>No attack was run" + (" (none asked for)." if r else " (no ε recommended).") + "</p>")
    elif "error" in att:
        h.append(f"<p>The attack could not run: {_e(scrub(att['error'], dataset))}</p>")
    else:
        caught = att.get("caught_at_1pct")
        h.append(f"<p>The {_e(att['attack'])} on a model trained at ε = {epsilon_text(att['epsilon'])}, with a pool of "
                 f"{att['pool']} of your records (half of them in its training data): it proves ε ≥ "
                 f"{epsilon_text(att['epsilon_lower_bound'], lower_bound=True)} at "
                 f"{confidence_text(att['confidence'])} confidence"
                 + (f", and catches {caught:.1%} of the members at 1 % false alarms" if caught is not None else
                    ", and has too few non-members to measure its catch at 1 % false alarms")
                 + f" (AUC {att['auc']:.3f}: the chance that the attack ranks a member above a non-member, 0.5 for "
                 f"guessing and 1 for telling every member from every non-member).{_attacked_model(advice, att)} "
                 f"{_e(ATTACK_CAVEAT)} {_e(ATTACK_FIGURES_NOTE)}</p>")
    h.append("<h2>Choosing ε from these curves is a release</h2>")
    h.extend(f"<p>{_e(part)}</p>" for part in advice.selection["note"].split("\n\n"))  # its paragraphs
    h += _data_section(shape)
    h.append("<h2>Every ε tried</h2><table><tr><th>learner</th><th>ε</th><th>mean</th><th>spread (sd)</th>"
             "<th>seeds</th><th>bound</th><th>target</th><th>meets</th><th>ε spent</th><th>dp_accounting event</th>"
             "</tr>")
    for p in advice.points.itertuples():
        h.append(f"<tr><td>{_e(_title(p.learner))}</td><td>{epsilon_text(p.epsilon)}</td><td>{p.mean:.4g}</td>"
                 f"<td>{_spread(p.std, p.mean):.3g}</td><td>{p.n}</td><td>{p.bound:.4g}</td><td>{p.target:.4g}</td>"
                 f"<td>{_meets_cell(p)}</td><td>{epsilon_text(p.epsilon_spent, digits=4, infinity='inf')}</td>"
                 f"<td><code>{_e(p.event or '—')}</code></td></tr>")
    h.append("</table>")
    h.append(f'<p class="muted">{_e(_table_legend(advice))}</p>')
    h += _computed_section(doc)
    h.append("</body></html>")
    return "\n".join(h)


def _table_legend(advice: Advice) -> str:
    """What each column of the "Every ε tried" table means, in words a data owner reads without a statistics book."""
    higher = advice.need.higher_is_better
    return ("ε: the budget each run was given. Mean: the score averaged over the seeds (each seed a fresh split of the "
            "rows and fresh noise). Spread (sd): the seeds' standard deviation around that mean. Seeds: the runs at "
            f"that ε. Bound: the score a fresh run reaches {'at least' if higher else 'at most'} in "
            f"{confidence_text(advice.confidence)} of cases (Student's t prediction bound over the seeds). Target: the "
            "score the need asks for. Meets: whether the bound reaches the target (and why not, where it is above it). "
            "ε spent: what the runs spent, computed by dp_accounting from the event beside it, which names the "
            "noise added and how often (the record of how the ε was counted).")


def _event_text(event) -> str:
    return "—" if event is None else str(event)


def attack_report_json(audits: Mapping[str, Any], *, dataset, question: Mapping[str, Any],
                       accuracy: Mapping[str, float | None] | None = None, noise: str,
                       warnings: Sequence[tuple[str, bool]] = (), created: _dt.datetime | None = None) -> dict:
    """The Attack page's report as JSON values: ``audits`` maps each attacked model's label to its audit
    (:func:`dpcore.audit.run_audit`'s result), the private model first; ``question`` is what was asked, in words.

    Holds the attack's numbers (ε claimed and proven, AUC, members caught at 1 % and 0.1 % false alarms, the pool's
    size), each ε's ``dp_accounting`` event, the verdict band of the private model's claim, the data's shape, every
    warning (leaks first), how the noise was drawn, the versions and the date: never a record, a score of one or a
    cell value (the page's "records most exposed" stay on the page).
    """
    from ..teaching.verdict import comparison, verdict

    accuracy = dict(accuracy or {})
    models = []
    for label, audit in audits.items():
        r = audit.result
        models.append({
            "model": scrub(label, dataset), "learner": _title(getattr(audit, "learner", "")),
            "attack": r.attack, "epsilon_claimed": float(r.epsilon), "delta": float(r.delta),
            # why a private run's claim is ∞ here: its ε is about other neighbours than the attack's question
            "claim_note": getattr(r, "claim_note", ""),
            "epsilon_proven": float(r.epsilon_lower_bound), "confidence": float(r.confidence),
            "auc": float(r.auc), "caught_at_1pct": r.tpr_measured("0.01"), "caught_at_0.1pct": r.tpr_measured("0.001"),
            "members": int(r.n_members), "non_members": int(r.n_nonmembers), "accuracy": accuracy.get(label),
            # on the same unseen rows (input canaries); with declared class shares the answers follow them and
            # trade accuracy for the rare classes (15.5 % accuracy beside 0.531 balanced accuracy on an 88/7/5 label)
            "balanced_accuracy": getattr(audit, "balanced_accuracy", None),
            "dp_event": _event_text(getattr(audit, "event", None)),
        })
    claim = models[0]["epsilon_claimed"] if models else math.inf
    band = None
    if math.isfinite(claim):
        v = verdict(claim)
        said = v.sentence(delta=models[0]["delta"]).replace("**", "")  # the odds bound plus an additive δ
        band = {"band": v.band.headline, "sentence": said, "deployments": comparison(claim)}
    unique = []
    for m, leak in warnings:
        w = {"message": scrub(m, dataset), "leak": bool(leak)}
        if w not in unique:
            unique.append(w)
    return {"question": {k: scrub(str(v), dataset) for k, v in question.items()}, "data": data_shape(dataset),
            "models": models, "verdict": band, "warnings": sorted(unique, key=lambda w: not w["leak"]),
            "noise": noise, "versions": software_versions(),
            "created": (created or _dt.datetime.now(_dt.timezone.utc)).isoformat(timespec="seconds")}


def _rate(v) -> str:
    return "— (too few non-members to measure)" if v is None else f"{v:.1%}"


def attack_report_html(audits: Mapping[str, Any], *, dataset, question: Mapping[str, Any],
                       accuracy: Mapping[str, float | None] | None = None, noise: str,
                       warnings: Sequence[tuple[str, bool]] = (), created: _dt.datetime | None = None) -> str:
    """The Attack page's report as one self-contained HTML document (no script, no network): see
    :func:`attack_report_json` for what it holds and what it never holds."""
    doc = attack_report_json(audits, dataset=dataset, question=question, accuracy=accuracy, noise=noise,
                             warnings=warnings, created=created)
    shape = doc["data"]
    h: list[str] = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
                    '<meta name="viewport" content="width=device-width, initial-scale=1">',
                    f"<title>Attack report: {_e(shape['name'])}</title><style>{_CSS}</style></head><body>"]
    h.append(f"<h1>What an attacker learns from a model trained on {_e(shape['name'])}</h1>")
    h.append(f'<p class="muted">Made {_e(doc["created"])} by dpcore {_e(doc["versions"]["dpcore"])}. Every number '
             "here was computed on the data named below; no record and no value of it is in this file.</p>")
    h.append("<h2>The question asked</h2><table>")
    for k, v in doc["question"].items():
        h.append(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>")
    h.append("</table>")
    h.append("<h2>The attack's result</h2>")
    if doc["models"]:
        m = doc["models"][0]
        proven = m["epsilon_proven"]
        h.append(f'<div class="answer{"" if proven <= m["epsilon_claimed"] else " no"}">'
                 + _e(f"The attack proves that {m['model']} leaks at least ε = "  # the bound down, the claim up
                      f"{epsilon_text(proven, lower_bound=True)} ({confidence_text(m['confidence'])} confidence), "
                      + (f"against the ε = {epsilon_text(m['epsilon_claimed'])} claimed." if not m["claim_note"]
                         else "with no claim about this question to hold it against.")
                      if proven > 0 else
                      f"The attack could not prove any leak of {m['model']} (its lower bound on ε is 0): it did no "
                      "better than guessing on this run. That does not prove the model safe; "
                      + ("the claimed ε is the guarantee." if not m["claim_note"] else
                         "and no ε here covers this question.")) + "</div>")
    # balanced accuracy beside accuracy where the answers follow declared class shares
    balanced = bool(shape.get("class_shares")) and any(m["balanced_accuracy"] is not None for m in doc["models"])
    h.append("<table><tr><th>model</th><th>ε claimed</th><th>δ</th><th>ε proven</th><th>AUC</th>"
             "<th>members caught at 1 % false alarms</th><th>at 0.1 %</th><th>members / non-members</th>"
             "<th>accuracy on unseen records</th>" + ("<th>balanced accuracy</th>" if balanced else "") + "</tr>")
    for m in doc["models"]:
        acc = "—" if m["accuracy"] is None else f"{m['accuracy']:.1%}"
        if balanced:
            acc += "</td><td>" + ("—" if m["balanced_accuracy"] is None else f"{m['balanced_accuracy']:.3f}")
        claimed = (epsilon_text(m["epsilon_claimed"]) if math.isfinite(m["epsilon_claimed"]) else
                   "∞ (no claim for this question: see below)" if m["claim_note"] else "∞ (no privacy)")
        h.append(f"<tr><td>{_e(m['model'])}</td><td>{claimed}</td><td>{m['delta']:g}</td>"
                 f"<td>{epsilon_text(m['epsilon_proven'], lower_bound=True)} ({confidence_text(m['confidence'])})</td>"
                 f"<td>{m['auc']:.3f}</td>"
                 f"<td>{_rate(m['caught_at_1pct'])}</td><td>{_rate(m['caught_at_0.1pct'])}</td>"
                 f"<td>{m['members']:,} / {m['non_members']:,}</td><td>{acc}</td></tr>")
    h.append("</table>")
    h.append('<p class="muted">Guessing catches 1 % of members at 1 % false alarms and has AUC 0.5. The proven ε is a '
             "lower bound on the true ε of this one run; the claimed ε, from the accountant, is the guarantee.</p>")
    h.append("<h2>Risk at the claimed ε</h2>")
    if doc["models"] and doc["models"][0]["claim_note"]:
        h.append(f"<p>No claim to test: the attack asks whether a record was in the training set, and "
                 f"{_e(doc['models'][0]['claim_note'])}.</p>")
    elif doc["verdict"]:
        v = doc["verdict"]
        h.append(f"<p>{_band_html(v['band'], v['sentence'])}</p><p>{_e(v['deployments'])}</p>")
    else:
        h.append("<p>The attacked model is not private: no band.</p>")
    leaks = [w for w in doc["warnings"] if w["leak"]]
    h.append(f"<h2>Warnings: {len(doc['warnings'])} (" + (f"{len(leaks)} privacy leak{'s' if len(leaks) != 1 else ''}"
             ", shown first" if leaks else "no privacy leak") + ")</h2>")
    for w in doc["warnings"]:
        head = "<b>Privacy leak.</b> " if w["leak"] else ""
        h.append(f'<div class="{"leak" if w["leak"] else "warn"}">{head}{_e(w["message"])}</div>')
    h.append("<h2>Each ε and its dp_accounting event</h2><table><tr><th>model</th><th>ε</th><th>δ</th>"
             "<th>event</th></tr>")
    for m in doc["models"]:
        h.append(f"<tr><td>{_e(m['model'])}</td><td>{epsilon_text(m['epsilon_claimed'], digits=4, infinity='inf')}</td>"
                 f"<td>{m['delta']:g}</td><td><code>{_e(m['dp_event'])}</code></td></tr>")
    h.append("</table>")
    h += _data_section(shape)
    h += _computed_section(doc)
    h.append("</body></html>")
    return "\n".join(h)


__all__ = ["attack_report_html", "attack_report_json", "curves_svg", "data_shape", "noise_of", "question_of",
           "readers_note", "report_html", "report_json", "scrub",
           "software_versions"]
