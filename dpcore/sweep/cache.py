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
#: Sub-directory of the plans: the run keys a sweep's inputs expanded to, so that the command line finds a cached
#: sweep's runs without loading the learners (torch, scikit-learn) that compute them.
PLANS = "plans"


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

    def _plan_path(self, key: str) -> pathlib.Path:
        return self.directory / PLANS / key[:2] / f"{key}.json"

    def _read(self, path: pathlib.Path, key: str, what: str) -> dict | None:
        try:
            with open(path, encoding="utf-8") as fh:
                doc = json.load(fh)
        except (OSError, ValueError):
            return None
        if not isinstance(doc, dict) or doc.get("key") != key or not isinstance(doc.get(what), dict):
            return None
        return doc[what]

    def get(self, key: str) -> dict | None:
        """The stored row of run ``key``, or None when it is absent or unreadable."""
        row = self._read(self._path(key), key, "row")
        return None if row is None else {k: _decode(v) for k, v in row.items()}

    def put(self, key: str, row: Mapping[str, Any]) -> None:
        """Store ``row`` (scalars only) atomically under ``key``."""
        self._write(self._path(key), {"key": key, "row": {k: _encode(v) for k, v in row.items()}})

    def get_plan(self, key: str) -> dict | None:
        """The sweep plan stored under ``key`` (:meth:`~dpcore.sweep.config.SweepConfig.plan`), or None."""
        return self._read(self._plan_path(key), key, "plan")

    def put_plan(self, key: str, plan: Mapping[str, Any]) -> None:
        """Store a sweep plan (what a set of inputs expands to: its runs' keys) atomically under ``key``."""
        self._write(self._plan_path(key), {"key": key, "plan": plan})

    def _write(self, path: pathlib.Path, doc: dict) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
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
        """Delete every entry (and every plan); return how many entries were removed."""
        n = 0
        if self.directory.exists():
            for p in self.directory.glob("*/*.json"):
                p.unlink(missing_ok=True)
                n += 1
            for p in (self.directory / PLANS).glob("*/*.json"):
                p.unlink(missing_ok=True)
        return n

    def __repr__(self) -> str:
        return f"SweepCache({str(self.directory)!r})"


__all__ = ["DEFAULT_ROOT", "ENV_VAR", "PLANS", "SweepCache", "default_cache_dir"]
