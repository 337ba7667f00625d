"""Exceptions and warnings raised by dpcore.

Every error a person can trigger from the dashboard or the command line is a
:class:`DPCoreError` (or a built-in ``TypeError``) whose message names the
parameter, the value it got and what to do instead.
"""
from __future__ import annotations


class DPCoreError(Exception):
    """Base class of every error dpcore raises on purpose."""


class DPValueError(DPCoreError, ValueError):
    """A parameter has a value outside its valid range."""


class DPTypeError(DPCoreError, TypeError):
    """A parameter has the wrong type."""


class BudgetExceededError(DPCoreError):
    """Spending would exceed the privacy budget that was set."""


class DatasetError(DPCoreError, ValueError):
    """A dataset could not be loaded or an uploaded file is unusable."""


class BoundsError(DatasetError):
    """Declared bounds of an uploaded CSV that cannot be used (unreadable, reversed, or naming no column)."""


class CategoriesError(DatasetError):
    """Declared categories of an uploaded CSV that cannot be used (unreadable, empty, repeated, or naming no column)."""


class PrivacyLeakWarning(UserWarning):
    """Something leaks privacy beyond the stated epsilon (e.g. bounds inferred from data)."""


class DPCoreWarning(UserWarning):
    """A setting was accepted but deserves attention (e.g. delta larger than 1/n)."""


class SingleClassWarning(DPCoreWarning):
    """A trained classifier answers one class for every evaluation row: its accuracy is that class's share, not
    anything learnt."""


#: how a :class:`SingleClassWarning` of :func:`dpcore.training.train` begins (then the class's index), so that a caller
#: that says the same by the class's name (:func:`dpcore.learners.run_learner`) drops it from the run's warnings
SINGLE_CLASS_SAID = "the trained model answers class "


class CategoriesWarning(DPCoreWarning):
    """Cells of a column of declared categories hold none of its declared values (often a typing mistake in the
    declaration: a whole column then reads as one value): the pages show it beside the declaration, not folded."""


class RunCancelled(Exception):
    """Raised inside a run's progress callback once nobody waits for the run any more (:mod:`dpcore.runtime.serving`, on
    this machine or on a Dask worker through :mod:`dpcore.runtime.remote`)."""


def warning_class(path: str) -> type[Warning]:
    """The warning class named ``module.QualName`` (a warning raised in another process travels as its name);
    UserWarning when it cannot be imported or is not a warning.

    >>> warning_class("dpcore.exceptions.DPCoreWarning").__name__, warning_class("no.such.Thing").__name__
    ('DPCoreWarning', 'UserWarning')
    """
    import importlib

    mod, _, name = path.rpartition(".")
    try:
        cls = getattr(importlib.import_module(mod), name)
        if isinstance(cls, type) and issubclass(cls, Warning):
            return cls
    except (ImportError, AttributeError, ValueError):
        pass
    return UserWarning


def user_stacklevel() -> int:
    """The ``stacklevel`` that attributes a warning to the first line outside dpcore, the caller's own, for the
    function that calls ``warnings.warn(..., stacklevel=user_stacklevel())``: a warning about your data then names
    your line, not the library's, however deep inside dpcore it is raised (tests/test_library_use.py checks it).
    scikit-learn's frames are passed too: an estimator's ``transform`` is called through its output wrapper, and a
    ``Pipeline`` through its steps, so the line named is the one that called scikit-learn.
    """
    import sys

    frame, level = sys._getframe(1), 1  # the function about to warn is stacklevel 1
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] in ("dpcore", "sklearn"):
        frame, level = frame.f_back, level + 1
    return level
