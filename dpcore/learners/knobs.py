"""A learner's knobs, declared once: the command line, the sweep, the pages and the tests read them.

A :class:`Knob` says what a parameter is (whole number, number, true/false, one of some
choices, free text), its default, its range, how to label and explain it, and whether it
touches the privacy guarantee. :meth:`Knob.check` is the one place a value is validated:
the CLI's flags and ``--set``, the trade-off explorer's "fixed knobs" box and
:func:`~dpcore.learners.run_learner` all call it, so ``epochs=-1`` or ``clip_norm=1e308``
is refused with the same message everywhere, before any work starts.

>>> k = Knob("epochs", "int", label="Epochs", low=1, high=10_000)
>>> k.check("5")
5
>>> k.check(-1)
Traceback (most recent call last):
...
dpcore.exceptions.DPValueError: epochs must be a whole number from 1 to 10000, got -1
"""
from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from ..exceptions import DPValueError

__all__ = ["ACCOUNTANT_LABELS", "ACCOUNTANT_PAGE_HELP", "KINDS", "Knob", "Wording", "config_defaults", "parse_value"]

#: What a knob's values are.
KINDS = ("int", "float", "bool", "choice", "str")
_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


def parse_value(text: str) -> Any:
    """A command-line value as Python: int, float, true/false, or the text itself.

    >>> parse_value("5"), parse_value("1e-3"), parse_value("true"), parse_value("rff")
    (5, 0.001, True, 'rff')
    """
    s = str(text).strip()
    for cast in (int, float):
        try:
            return cast(s)
        except ValueError:
            pass
    low = s.lower()
    if low in ("true", "false"):
        return low == "true"
    return s


def config_defaults(config: type) -> dict[str, Any]:
    """``{field: default}`` of a config dataclass (fields without a plain default left out): what a learner's
    knobs declare as their defaults, so the library, the command line and the pages start from one value.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class C:
    ...     rounds: int = 30
    ...     seed: int = 0
    >>> config_defaults(C)
    {'rounds': 30, 'seed': 0}
    """
    return {f.name: f.default for f in dataclasses.fields(config) if f.default is not dataclasses.MISSING}


#: How pages name the two accountants, and what they say about the choice (every learner with an accountant knob).
ACCOUNTANT_LABELS = {"rdp": "RDP (Rényi DP)", "pld": "PLD (privacy loss distribution)"}
ACCOUNTANT_PAGE_HELP = ("How the privacy cost of many noisy steps is added up: Rényi DP (Mironov 2017) or the "
                        "privacy loss distribution, which is usually a little tighter. Both come from dp_accounting.")


@dataclass(frozen=True)
class Knob:
    """One parameter of a learner.

    Parameters
    ----------
    name : str
        The key in ``params`` (and ``--name`` / ``--set name=...`` on the command line).
    kind : {"int", "float", "bool", "choice", "str"}
    default : any, optional
        The value used when none is given; ``None`` means the learner chooses (from the
        dataset's preset or a rule in n and epsilon, see ``default_from``).
    low, high : float, optional
        Inclusive bounds for "int" and "float" (``low_open``/``high_open``: that bound itself excluded).
    choices : tuple, optional
        The allowed values of a "choice" knob (aliases may be listed in ``aliases``).
    also : tuple, optional
        Extra allowed strings for a number knob (e.g. ``"auto"`` for DP-ERM's Lambda).
    label, help : str
        What a page shows and the CLI's help says.
    privacy : bool
        True when the value changes what is protected or how much noise is added.
    group : {"model", "optimiser", "privacy", "data"}
        Where a page puts its widget.
    shared : bool
        True when the learner's non-private counterpart takes the same value (model shape,
        features): the baseline is then the same model without privacy.
    log : bool
        A page widget should step on a log scale (learning rates, noise, Lambda).
    advanced : bool
        Pages put it under "more knobs" rather than in the first screen of controls.
    hint : str
        What to do instead, appended to the message when a value is refused.
    when : dict
        The knob only matters when other knobs have these values (``{"model": ("mlp",)}``);
        a page greys its widget out otherwise.
    images : bool
        The knob only applies to image data (a page hides it for tabular data).
    image_choices : tuple
        Choices that only apply to image data (``"cnn"``).
    page_help : str
        The help a page shows beside the widget, in words for a reader (``help`` is the command line's, which
        names the values to type); empty: the page shows ``help``.
    choice_labels : dict
        How a page names each choice.
    aliases : dict
        Other spellings accepted for a choice, mapped to the canonical one.
    default_from : callable, optional
        ``default_from(split) -> value`` when the default depends on the data (a preset).
    by_epsilon : callable, optional
        ``by_epsilon(epsilon, split) -> value`` when the default depends on the privacy budget (``None``: no
        privacy) and perhaps the data (``split`` may be None); the learner applies it at the epsilon it runs with.
    default_if : dict, optional
        Defaults that follow another knob's value, ``{"model": {"cnn": f}}`` with ``f(split) -> value``: the
        learning rate tuned for a linear model is far too large for a CNN. :meth:`following` reads it; a page
        redraws the widget with that default when the other knob changes, a learner applies it when the knob
        itself was not given.
    warn_on : dict
        ``{choice: warning}``: what a page warns when this choice is made (its guarantee is weaker than the
        others').
    """

    name: str
    kind: str
    default: Any = None
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple = ()
    also: tuple = ()
    label: str = ""
    help: str = ""
    privacy: bool = False
    group: str = "model"
    shared: bool = False
    log: bool = False
    advanced: bool = False
    hint: str = ""
    when: dict = field(default_factory=dict, hash=False, compare=False)
    images: bool = False
    image_choices: tuple = ()
    page_help: str = field(default="", hash=False, compare=False)
    choice_labels: dict = field(default_factory=dict, hash=False, compare=False)
    aliases: dict = field(default_factory=dict, hash=False, compare=False)
    default_from: Callable[[Any], Any] | None = field(default=None, hash=False, compare=False, repr=False)
    by_epsilon: Callable[[float | None, Any], Any] | None = field(default=None, hash=False, compare=False, repr=False)
    default_if: dict = field(default_factory=dict, hash=False, compare=False, repr=False)
    warn_on: dict = field(default_factory=dict, hash=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"knob {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"knob {self.name!r}: a choice knob needs choices")
        if not self.label:
            object.__setattr__(self, "label", self.name.replace("_", " ").capitalize())
        if self.default is not None:
            self.check(self.default)  # a declaration whose own default is invalid is a bug

    # -- validation ---------------------------------------------------------------------------
    def _range_text(self) -> str:
        lo, hi = self.low, self.high
        if lo is not None and hi is not None:
            return (f" from {lo:g}{' (excluded)' if self.low_open else ''} to {hi:g}"
                    f"{' (excluded)' if self.high_open else ''}")
        if lo is not None:
            return f" {'>' if self.low_open else '>='} {lo:g}"
        if hi is not None:
            return f" <= {hi:g}"
        return ""

    def describe(self) -> str:
        """What the knob takes, in words: "a whole number from 1 to 10000", "one of sgd, adam"..."""
        if self.kind == "int":
            what = "a whole number" + self._range_text()
        elif self.kind == "float":
            what = "a number" + self._range_text()
        elif self.kind == "bool":
            what = "true or false"
        elif self.kind == "choice":
            names = [repr(c) for c in self.choices]
            what = " or ".join(names) if len(names) <= 2 else "one of " + ", ".join(names)
            if self.aliases:
                what += " (also accepted: " + ", ".join(f"{a!r} for {c!r}" for a, c in self.aliases.items()) + ")"
        else:
            what = "a text value"
        if self.also:
            what += " or " + " or ".join(repr(a) for a in self.also)
        return what

    def _fail(self, value) -> DPValueError:
        hint = f"; {self.hint}" if self.hint else ""
        return DPValueError(f"{self.name} must be {self.describe()}, got {value!r}{hint}")

    def check(self, value: Any) -> Any:
        """``value`` cleaned (strings from a command line parsed, integral floats made int), or a
        :class:`~dpcore.exceptions.DPValueError` naming the knob, what it takes and the value."""
        if value is None:
            return None
        if isinstance(value, str) and value.strip() in self.also:
            return value.strip()
        if self.kind in ("int", "float"):
            return self._check_number(value)
        if self.kind == "bool":
            return self._check_bool(value)
        if self.kind == "choice":
            v = value.strip() if isinstance(value, str) else value
            v = self.aliases.get(v, v)
            if v not in self.choices:
                raise self._fail(value)
            return v
        if not isinstance(value, str):
            raise self._fail(value)
        return value

    def _check_number(self, value):
        v = parse_value(value) if isinstance(value, str) else value
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.floating, np.integer)):
            raise self._fail(value)
        v = float(v)
        if not math.isfinite(v):
            raise self._fail(value)
        if self.kind == "int":
            if not v.is_integer():
                raise self._fail(value)
            v = int(v)
        if self.low is not None and (v < self.low or (self.low_open and v == self.low)):
            raise self._fail(value)
        if self.high is not None and (v > self.high or (self.high_open and v == self.high)):
            raise self._fail(value)
        return v

    def _check_bool(self, value):
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
            return value.strip().lower() in _TRUE
        if isinstance(value, (int, np.integer)) and value in (0, 1):
            return bool(value)
        raise self._fail(value)

    def following(self, values: Mapping[str, Any], split) -> tuple[str, Any] | None:
        """``(tag, default)`` when another knob's value in ``values`` sets this knob's default (``default_if``),
        the tag naming that value (``"model=cnn"``); None when the usual default holds."""
        for other, table in self.default_if.items():
            chosen = values.get(other)
            if chosen in table:
                return f"{other}={chosen}", self.check(table[chosen](split))
        return None

    def applies(self, values: dict) -> bool:
        """False when a knob it depends on (``when``) has another value in ``values``."""
        return all(values.get(k) in allowed for k, allowed in self.when.items() if k in values)

    def choices_for(self, *, images: bool) -> tuple:
        """The choices that make sense for image or tabular data."""
        return tuple(c for c in self.choices if images or c not in self.image_choices)

    def default_for(self, split=None, epsilon: float | None = None) -> Any:
        """The default for ``split`` (the preset's when ``default_from`` is set and a split is given) and, for a knob
        whose default follows the budget (``by_epsilon``), for ``epsilon`` (None: no privacy)."""
        if self.by_epsilon is not None:
            return self.check(self.by_epsilon(epsilon, split))
        if self.default_from is not None and split is not None:
            return self.check(self.default_from(split))
        return self.default


@dataclass(frozen=True)
class Wording:
    """How pages and the CLI talk about a learner's epsilon and its results.

    Attributes
    ----------
    epsilon_label : str
        The headline metric's label ("ε spent (whole records)").
    epsilon_input : str
        The budget box's label ("Epsilon (ε) per label").
    unit : str
        What epsilon protects, one or two sentences.
    unit_short : str
        The protected unit in a few words ("per training record").
    protects : str
        What epsilon protects, as the command line's ``protects`` line and JSON field say it.
    subject : str or None
        What an attacker's odds are about, when epsilon protects less than a whole record (label DP: "any one
        record's label ..."); the verdicts then say it and are not compared with whole-record deployments.
    input_subject : str or None
        The same for the budget box alone, when its epsilon is not the run's (output perturbation: per answer).
    note : str
        A paragraph on what the learner does (with its paper).
    history_note : str
        What the per-epoch history shows.
    diagnostics : dict
        Optional ``{"title", "column", "text"}`` for statistics of the private rows
        shown only in a collapsed expander.
    when_trivial : str
        Why this learner can end up no better than the trivial predictor and what to change, said in place of the
        general advice when it does; ``{d}`` becomes the number of features and ``{n}`` the number of training rows.
    recipe : str
        How its network trains when a page draws no optimiser knobs for it (the noise is on labels or outputs).
    budget : str
        A paragraph on how its ε adds up, formatted with the run's ``epsilon`` and its extras (output
        perturbation: ``{queries}`` answers at ``{epsilon_per_query}`` each); empty: none.
    near_baseline : str
        Said when the private model comes within a few points of its non-private twin: where the rest of the gap
        comes from (DP-SGD: clipping and its recipe); empty: nothing is said.
    """

    epsilon_label: str = "ε spent"
    epsilon_input: str = "Epsilon (ε)"
    unit: str = ""
    unit_short: str = "per training record"
    protects: str = "each whole training record (features and label)"
    subject: str | None = None
    input_subject: str | None = None
    note: str = ""
    history_note: str = ""
    diagnostics: dict = field(default_factory=dict, hash=False, compare=False)
    when_trivial: str = ""
    recipe: str = ""
    budget: str = ""
    near_baseline: str = ""
