"""Names of a package loaded on first use (PEP 562), so importing the package costs only what is used."""
from __future__ import annotations

import importlib
import sys
from typing import Callable, Mapping


def lazy_names(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` whose name ``n`` is defined in its module ``where[n]``.

    >>> getattr_, dir_ = lazy_names("dpcore", {"DPCoreError": "exceptions"})
    >>> getattr_("DPCoreError").__name__
    'DPCoreError'
    """

    def __getattr__(name: str):
        if name in where:
            value = getattr(importlib.import_module(f".{where[name]}", package), name)
            setattr(sys.modules[package], name, value)  # later lookups skip this function
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__
