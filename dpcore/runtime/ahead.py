"""Noise calibrations worked out ahead, in another process, while this one trains.

A sweep over a fine ladder of epsilons calibrates a noise multiplier for every rung before its runs can start:
25 rungs of Adult take about 3.6 s of dp_accounting's Rényi-divergence arithmetic, pure Python that one
interpreter does one rung at a time while the machine's other core waits. :class:`CalibrationsAhead` starts a
second interpreter that imports only the accountant (about 0.9 s, no torch) and works through the rungs from the
last one, answering each as soon as it has it, while this process goes on (capturing the runs, training the
non-private baselines) and then calibrates from the first rung itself, taking every answer the other process has
already given: the two meet in the middle.

The other process runs the same function (:func:`dpcore.accounting.calibration.dpsgd_noise_multiplier`) on the
same versions of dpcore and dp_accounting, and its answer comes back exactly (``float.hex``), with the warnings
it raised: a run gets the same noise multiplier, and says the same things, whichever process calibrated it.
"""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import threading
from typing import Sequence

__all__ = ["CalibrationsAhead"]

#: What the other interpreter runs: read the keys (one JSON line), answer each on a line of its own, in order.
_WORKER = r"""
import json, sys, warnings
from dpcore.accounting.calibration import dpsgd_noise_multiplier
keys = json.loads(sys.stdin.readline())
for i, key in enumerate(keys):
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            sigma = dpsgd_noise_multiplier(*key)
        except Exception as exc:
            print(json.dumps({"i": i, "error": f"{type(exc).__name__}: {exc}"}), flush=True)
            continue
    print(json.dumps({"i": i, "sigma": float(sigma).hex(), "warnings": [
        [w.category.__module__, w.category.__qualname__, str(w.message)] for w in said]}), flush=True)
"""


def _category(module: str, name: str) -> type[Warning]:
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError):
        return UserWarning
    return cls if isinstance(cls, type) and issubclass(cls, Warning) else UserWarning


class CalibrationsAhead:
    """Calibrations of ``keys`` (each the arguments of :func:`~dpcore.accounting.calibration.dpsgd_noise_multiplier`)
    computed by another interpreter, in the order given; :meth:`answer` hands over those it has finished.

    Use it as a context manager (or call :meth:`close`): the other process is stopped when the caller has what it
    needs. If the process cannot start or fails, every answer is None and the caller computes its own.
    """

    def __init__(self, keys: Sequence[tuple]) -> None:
        self.keys = [tuple(k) for k in keys]
        self._answers: dict[tuple, tuple[float, list]] = {}
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", ""),
               "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        try:
            self._proc = subprocess.Popen([sys.executable, "-c", _WORKER], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
            self._proc.stdin.write(json.dumps([list(k) for k in self.keys]) + "\n")
            self._proc.stdin.close()
        except (OSError, ValueError):  # no process: the caller calibrates everything itself
            self.close()
            return
        self._reader = threading.Thread(target=self._read, name="dpcore-calibrations-ahead", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        proc = self._proc
        try:
            for line in proc.stdout:
                try:
                    msg = json.loads(line)
                    key = self.keys[int(msg["i"])]
                    if "sigma" not in msg:
                        continue  # it failed there: the caller computes it and says why
                    said = [(_category(m, n), text) for m, n, text in msg.get("warnings", ())]
                    answer = (float.fromhex(msg["sigma"]), said)
                except (ValueError, KeyError, IndexError, TypeError):
                    continue
                with self._lock:
                    self._answers[key] = answer
        except (OSError, ValueError):  # closed under us
            pass

    def answer(self, key: tuple) -> tuple[float, list] | None:
        """``(sigma, [(category, message), ...])`` if the other process has calibrated ``key``, else None."""
        with self._lock:
            return self._answers.get(tuple(key))

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.kill()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        if proc.stdout is not None:
            proc.stdout.close()

    def __enter__(self) -> "CalibrationsAhead":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
