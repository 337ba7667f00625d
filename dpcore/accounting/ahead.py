"""DP-SGD noise calibrations worked out ahead, in a second process, while this one trains something else.

A sweep of 25 epsilon values calibrates 25 noise multipliers before its first private batch can start, each a
root search over dp_accounting's RDP of the sampled Gaussian (Mironov, Talwar & Zhang 2019): about 0.14 s each,
3.6 s in all for Adult, in pure Python, on one core. :class:`CalibrationsAhead` starts a fresh interpreter (it
imports dp_accounting only, ~0.6 s) that takes the calibrations one at a time from the back of the list (a sweep
hands them over as it reads its runs, before training anything), while the caller, when it needs one, takes it
from the front: a result the second process has is used, one it is working out is waited for, and one nobody has
started the caller computes itself. The two meet in the middle.

Each answer is :func:`~dpcore.accounting.calibration.dpsgd_noise_multiplier`'s, computed by the same function on
the same numbers (floats cross the pipe as their exact text), so a run's sigma does not depend on where it was
worked out. The warnings a calibration raises there are raised again here, by the caller that uses it. Anything
the second process cannot do (it fails to start, dies, or its calibration raises) the caller computes itself, so
that errors are raised where they always were, with their own type and message.

The second process imports the dpcore this one did (not one its working directory may hold) and first says which
module answers (``{"module": path}``); an answer from any other is not listened to. The protocol is JSON lines: the
caller writes ``[target, delta, q, steps, accountant]``, the second process answers
``{"key": [...], "sigma": x, "warnings": [[category, message], ...], "curves": [...]}`` (or ``"sigma": null`` when
it raised).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import os
import subprocess
import sys
import threading
import time
import warnings
from typing import Callable, Iterator, Sequence

from ..exceptions import warning_class
from ..runtime.thread_warnings import caught as caught_warnings
from .calibration import dpsgd_noise_multiplier, shuffled_dpsgd_noise_multiplier
from .events import dpsgd_event
from .ledger import _know_rdp_curves, _rdp_curves

#: A calibration: target epsilon, delta, sample rate, steps, accountant.
Key = tuple[float, float, float, int, str]

__all__ = ["AHEAD_MIN", "PATIENCE", "CalibrationsAhead", "Key", "calibrated_sigma", "calibrating_ahead"]


class CalibrationsAhead:
    """Works out the keys it is given in a second process, from the back, while :meth:`take` serves them from the
    front. The process starts once ``start_at`` keys are waiting (a sweep with a few calibrations does not pay
    for it; 0: at once, to be ready when they come) and stops with :meth:`close`.

    Examples
    --------
    >>> keys = [(e, 1e-5, 0.01, 1000, "rdp") for e in (1.0, 2.0)]
    >>> with CalibrationsAhead(start_at=1) as ahead:
    ...     ahead.add(keys)
    ...     got = ahead.take(keys[1])  # the second process's answer, or None: compute it here
    >>> got is None or got[0] > 0
    True
    """

    def __init__(self, *, start_at: int = 1) -> None:
        self.start_at = max(0, int(start_at))
        self._cond = threading.Condition()
        self._order: list[Key] = []  # every key given, in the order the caller will need them
        self._claimed: dict[Key, str] = {}  # "here" (the caller computes it) or "there" (the second process)
        self._done: dict[Key, tuple[float, list, list | None] | None] = {}
        self._busy = False  # a key is with the second process
        self._alive = True  # until closed, or the second process failed
        self._heard = time.monotonic()  # when the second process last answered (or was started)
        self.used = 0  # answers the caller took from the second process
        self._proc: subprocess.Popen | None = None
        if self.start_at == 0:
            with self._cond:
                self._start()

    def __enter__(self) -> "CalibrationsAhead":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def add(self, keys: Sequence[Key]) -> None:
        """Keys the caller will need, after those given before (keys given or claimed already are skipped)."""
        with self._cond:
            for k in map(_key, keys):
                if k not in self._claimed and k not in self._order:
                    self._order.append(k)
            if not self._alive:
                return
            if self._proc is None and len(self._order) >= self.start_at:
                self._start()
            if self._proc is not None and not self._busy:
                self._send_next()

    def take(self, key: Key) -> tuple[float, list, list | None] | None:
        """``(sigma, warnings, curves)`` for ``key`` from the second process (waiting while it works it out), or None:
        the caller computes it (nobody started it, or the second process failed). Each ``warnings`` item is
        ``(category, message)``, to be raised by the caller; ``curves`` are the RDP curves of one step at that sigma
        (:func:`~dpcore.accounting.ledger._rdp_curves`), or None."""
        key = _key(key)
        with self._cond:
            if self._claimed.setdefault(key, "here") == "here":
                return None
            waited = time.monotonic()
            while key not in self._done and self._alive:
                self._cond.wait(0.5)
                if time.monotonic() - max(waited, self._heard) > PATIENCE:  # silent too long: it computes here
                    self._alive = False
                    if self._proc is not None:
                        self._proc.kill()
            got = self._done.get(key)
            self.used += got is not None
            return got

    def close(self) -> None:
        """Stop the second process (what it has not answered, the caller computes)."""
        with self._cond:
            self._alive = False
            self._cond.notify_all()
            proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:  # it exits at once between two calibrations; in the middle of one, nothing it would find is needed
            # (waiting for it to finish cost a sweep of Adult a quarter of a second at its end)
            proc.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()

    # -- the caller's side of the pipe (under the lock) -------------------------------------------------------
    def _start(self) -> None:
        try:
            # this dpcore, whatever the working directory holds, and this process's path for what it imports
            path = [_ROOT, *(os.fsdecode(p) for p in sys.path if isinstance(p, (str, bytes, os.PathLike)))]
            self._proc = subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(path)],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                          text=True, bufsize=1)
        except (OSError, ValueError, subprocess.SubprocessError):
            self._alive = False
            return
        threading.Thread(target=self._read, args=(self._proc,), name="dpcore-calibrations-ahead",
                         daemon=True).start()

    def _send_next(self) -> None:
        """Hand the second process the last key nobody has claimed, if any."""
        while self._order:
            key = self._order.pop()
            if key in self._claimed:
                continue
            self._claimed[key] = "there"
            try:
                self._proc.stdin.write(json.dumps(list(key)) + "\n")
                self._proc.stdin.flush()
                self._busy = True
            except (OSError, ValueError):  # the process is gone: the caller computes the rest
                self._alive = False
                self._cond.notify_all()
            return

    def _read(self, proc: subprocess.Popen) -> None:
        try:
            # the first line names the module answering: another one (another dpcore, or a program that is not one)
            # is not listened to, so that no sigma or curve comes from code other than this
            if json.loads(proc.stdout.readline() or "null") != {"module": _THIS}:
                return
            for line in proc.stdout:
                answer = json.loads(line)
                got = None
                if answer.get("sigma") is not None:
                    got = (float(answer["sigma"]), [(warning_class(c), m) for c, m in answer.get("warnings", [])],
                           answer.get("curves"))
                with self._cond:
                    self._heard = time.monotonic()
                    self._done[_key(answer["key"])] = got
                    self._busy = False
                    if self._alive and self._proc is not None:
                        self._send_next()
                    self._cond.notify_all()
        except (OSError, ValueError, KeyError, TypeError):
            pass
        finally:
            with self._cond:
                self._alive = False
                self._cond.notify_all()


#: The calibrations a sweep is working out ahead in a second process (:func:`calibrating_ahead`), if any.
_AHEAD: contextvars.ContextVar[CalibrationsAhead | None] = contextvars.ContextVar("dpcore_ahead", default=None)
_CALIBRATED: set[Key] = set()  # the keys calibrated_sigma holds (an lru_cache cannot be asked)
#: Fewer calibrations than this are not worth a second process's start (~0.6 s, each calibration ~0.14 s).
AHEAD_MIN = 4
#: Seconds a caller waits for the second process to answer anything (a calibration takes a fraction of a second,
#: a fine PLD one a few): silent longer, it is stopped and the caller computes the rest.
PATIENCE = 60.0
#: This module's file and the folder its dpcore is imported from: the second process imports that dpcore.
_THIS = os.path.realpath(__file__)
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(_THIS)))
_CHILD = "import json, sys; sys.path[:] = json.loads(sys.argv[1]); from dpcore.accounting.ahead import _serve; _serve()"


@functools.lru_cache(maxsize=256)
def calibrated_sigma(target: float, delta: float, q: float, steps: int,
                     accountant: str) -> tuple[float, tuple[tuple[str, type[Warning]], ...]]:
    """:func:`~dpcore.accounting.calibration.dpsgd_noise_multiplier` for ``target``, and the warnings its calibration
    raised (``(message, category)``), cached together once per process: a run that takes sigma from the cache says
    them again (:func:`~dpcore.training.engine.resolve_noise_multiplier`), as the first one did. Inside
    :func:`calibrating_ahead`, sigma and its warnings may come from the second process instead."""
    key = (target, delta, q, steps, accountant)
    if len(_CALIBRATED) >= 4096:  # a long-lived process: forget (at worst a key is worked out ahead again)
        _CALIBRATED.clear()
    _CALIBRATED.add(key)
    ahead = _AHEAD.get()
    if ahead is not None and (got := ahead.take(key)) is not None:
        sigma, raised, curves = got
        if curves:
            _know_rdp_curves(dpsgd_event(noise_multiplier=sigma, sample_rate=q, steps=1), curves)
    else:
        sigma, raised = _with_warnings(dpsgd_noise_multiplier, target, delta, q, steps, accountant)
    return sigma, _once_each(raised)


def _with_warnings(calibration: Callable, *args) -> tuple[float, list[tuple[type[Warning], str]]]:
    """``calibration(*args)`` and the warnings it raised in this thread (another visitor's run is not in them)."""
    with caught_warnings() as caught:
        sigma = calibration(*args)
    return sigma, [(w.category, str(w.message)) for w in caught]


def _once_each(raised) -> tuple[tuple[str, type[Warning]], ...]:
    """Each warning once, as ``(message, category)``, in the order first raised."""
    said: dict[str, type[Warning]] = {}
    for category, message in raised:
        said.setdefault(message, category)
    return tuple(said.items())


@functools.lru_cache(maxsize=256)
def calibrated_shuffled_sigma(target: float, delta: float, epochs: int,
                              accountant: str) -> tuple[float, tuple[tuple[str, type[Warning]], ...]]:
    """:func:`~dpcore.accounting.calibration.shuffled_dpsgd_noise_multiplier` for ``target`` and the warnings its
    calibration raised, cached together once per process as :func:`calibrated_sigma` does (never worked out ahead:
    shuffled batches are an advanced choice a sweep rarely makes)."""
    sigma, raised = _with_warnings(shuffled_dpsgd_noise_multiplier, target, delta, epochs, accountant)
    return sigma, _once_each(raised)


@contextlib.contextmanager
def calibrating_ahead(*, expected: int = 0) -> Iterator[Callable[[Key], None]]:
    """While the block runs, the calibrations handed to the function it gives, ``want(key)``, are worked out ahead
    in a second process (a :class:`CalibrationsAhead`), and :func:`calibrated_sigma` takes each from there, or
    computes it. A key calibrated already adds nothing. The process starts once :data:`AHEAD_MIN` keys are waiting,
    or at once when the caller ``expected`` at least as many (its start then overlaps what the caller does before
    the first key comes). ``want.used()`` says how many calibrations were taken from there."""
    with CalibrationsAhead(start_at=0 if expected >= AHEAD_MIN else AHEAD_MIN) as ahead:

        def want(key: Key) -> None:
            if _key(key) not in _CALIBRATED:
                ahead.add([key])

        want.used = lambda: ahead.used  # how many calibrations the callers took from the second process
        token = _AHEAD.set(ahead)
        try:
            yield want
        finally:
            _AHEAD.reset(token)


def _key(key) -> Key:
    target, delta, q, steps, accountant = key
    return float(target), float(delta), float(q), int(steps), str(accountant)


def _serve() -> None:
    """The second process: answer each key read from stdin with its calibration (and the RDP curves of the noise
    found, which the run's odometer will read), until stdin closes. The first line says which module answers."""
    sys.stdout.write(json.dumps({"module": _THIS}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        key = _key(json.loads(line))
        curves = None
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            try:
                sigma = dpsgd_noise_multiplier(*key)
                if key[4] == "rdp":  # the run's odometer reads these curves: computed here already
                    curves = _rdp_curves(dpsgd_event(noise_multiplier=sigma, sample_rate=key[2], steps=1))
            except Exception:  # noqa: BLE001 - the caller computes it again and raises it where it belongs
                sigma = None
        said = [[f"{w.category.__module__}.{w.category.__qualname__}", str(w.message)] for w in said]
        sys.stdout.write(json.dumps({"key": list(key), "sigma": sigma, "warnings": said, "curves": curves}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    _serve()
