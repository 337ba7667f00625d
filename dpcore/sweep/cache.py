"""The on-disk cache of sweep runs: one small JSON file per run, named by the run's key.

One file per run (rather than one file per sweep) is what makes an interrupted
sweep resume: every finished run is on disk the moment it is done, and a sweep
that shares runs with another (the same baseline, the same epsilon) reuses them.
Files are written to a temporary name and renamed, so a crash never leaves a
half-written entry; an unreadable entry is treated as missing and recomputed.
"""
from __future__ import annotations

import json
import math
import os
import pathlib
import tempfile
from typing import Any, Mapping

#: Root used when neither ``cache_dir`` nor ``$DPCORE_CACHE_DIR`` is given (git-ignored).
DEFAULT_ROOT = ".dpcore_cache"
#: Environment variable naming the cache root; sweeps live in its ``sweeps/`` sub-directory.
ENV_VAR = "DPCORE_CACHE_DIR"


def default_cache_dir() -> pathlib.Path:
    """``$DPCORE_CACHE_DIR/sweeps`` if the variable is set, else ``.dpcore_cache/sweeps``."""
    root = os.environ.get(ENV_VAR) or DEFAULT_ROOT
    return pathlib.Path(root) / "sweeps"


def _encode(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return {"__float__": repr(v)}  # JSON has no inf / nan
    return v


def _decode(v: Any) -> Any:
    if isinstance(v, dict) and set(v) == {"__float__"}:
        return float(v["__float__"])
    return v


class SweepCache:
    """A directory of finished runs keyed by :attr:`~dpcore.sweep.config.RunSpec.key`.

    Parameters
    ----------
    directory : str or Path, optional
        Where to keep the entries; default :func:`default_cache_dir`.
    """

    def __init__(self, directory: "str | os.PathLike[str] | None" = None) -> None:
        self.directory = pathlib.Path(directory) if directory is not None else default_cache_dir()

    def _path(self, key: str) -> pathlib.Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        """The stored row of run ``key``, or None when it is absent or unreadable."""
        try:
            with open(self._path(key), encoding="utf-8") as fh:
                doc = json.load(fh)
        except (OSError, ValueError):
            return None
        if not isinstance(doc, dict) or doc.get("key") != key or not isinstance(doc.get("row"), dict):
            return None
        return {k: _decode(v) for k, v in doc["row"].items()}

    def put(self, key: str, row: Mapping[str, Any]) -> None:
        """Store ``row`` (scalars only) atomically under ``key``."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = {"key": key, "row": {k: _encode(v) for k, v in row.items()}}
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(doc, fh, allow_nan=False)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def clear(self) -> int:
        """Delete every entry; return how many were removed."""
        n = 0
        if self.directory.exists():
            for p in self.directory.glob("*/*.json"):
                p.unlink(missing_ok=True)
                n += 1
        return n

    def __repr__(self) -> str:
        return f"SweepCache({str(self.directory)!r})"


__all__ = ["DEFAULT_ROOT", "ENV_VAR", "SweepCache", "default_cache_dir"]
