"""A shared run executed on a Dask cluster, its live progress streamed back, cancellable from here.

:class:`dpcore.runtime.serving.SharedRuns` runs ``compute(progress)`` on its own threads; given a Dask scheduler
address (``DPCORE_SCHEDULER``, the same kind of address the sweeps accept) it hands each run to
:func:`run_on_cluster` instead, so a department server grows by adding machines to the cluster rather than
by a bigger box. The function and its inputs travel to a worker (cloudpickle, as Dask ships any task);
every ``progress(event)`` the run makes on the worker goes into a Dask ``Queue`` that this side drains
into the local ``progress``, so each visitor's page draws the same live progress as a local run. When the
local ``progress`` raises (nobody follows the run any more), a Dask ``Variable`` tells the worker, whose
next ``progress`` call raises :class:`dpcore.exceptions.RunCancelled` and ends the run there.
"""
from __future__ import annotations

import math
import socket
import time
import uuid
from typing import Any, Callable
from urllib.parse import urlsplit

from ..exceptions import DPValueError, RunCancelled


def check_scheduler(address: str, timeout: float = 5.0) -> str:
    """``address`` if a Dask scheduler could be listening there: a ``tcp://host:port`` (or ``host:port``) whose
    port takes a connection within ``timeout`` seconds. Otherwise a one-line error, at once: a malformed address
    left to ``distributed.Client`` cost 20 s and a traceback from its clean-up at exit.
    """
    text = str(address).strip()
    parts = urlsplit(text if "://" in text else f"tcp://{text}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("tcp", "tls") or not parts.hostname or port is None:
        raise DPValueError(f"the Dask scheduler address {address!r} is not tcp://host:port (e.g. "
                           "tcp://127.0.0.1:8786, the address `dask scheduler` prints)")
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            pass
    except OSError as exc:
        raise DPValueError(f"nothing answers at the Dask scheduler address {address!r} ({exc.strerror or exc}); "
                           "start one with `dask scheduler` and pass the address it prints") from None
    return text

#: How often the server looks for progress from the cluster (seconds).
POLL_SECONDS = 0.1
#: How long a run waits for the cluster to have a worker at all before it fails with a message saying so (seconds).
NO_WORKER_SECONDS = 30.0
#: How often the server asks the scheduler how many workers it has while a run has not started (seconds).
WORKER_CHECK_SECONDS = 2.0


def connect(address: str):
    """A ``distributed.Client`` of the scheduler at ``address``, or a clear error naming what is missing."""
    try:
        import distributed
    except ImportError:
        raise DPValueError("a Dask scheduler address was given but dask.distributed is not installed: "
                           "pip install 'dask[distributed]'") from None
    check_scheduler(address)
    try:
        return distributed.Client(address, set_as_default=False, timeout=10)
    except (OSError, TimeoutError) as exc:
        raise DPValueError(f"cannot reach the Dask scheduler at {address!r} ({exc}); check DPCORE_SCHEDULER "
                           "or leave it unset to run on this machine") from None


def _on_worker(compute: Callable, name: str) -> Any:
    """Runs on a Dask worker: ``compute`` with a ``progress`` that reports home and listens for a stop."""
    from distributed import Queue, Variable

    events, stop = Queue(f"dpcore-progress-{name}"), Variable(f"dpcore-stop-{name}")

    def progress(event) -> None:
        if stop.get(timeout=30):
            raise RunCancelled("nobody follows this run any more")
        events.put(event)

    return compute(progress)


def _n_workers(client) -> int | None:
    """How many workers the scheduler has now (None: it could not say)."""
    try:
        return len(client.scheduler_info(n_workers=-1).get("workers", {}))
    except TypeError:  # a distributed without the n_workers argument
        return len(client.scheduler_info().get("workers", {}))
    except Exception:
        return None


def run_on_cluster(client, compute: Callable[[Callable[[Any], None]], Any],
                   progress: Callable[[Any], None], *, no_worker_seconds: float | None = None) -> Any:
    """``compute(progress)`` on a worker of ``client``'s cluster; its events replayed through ``progress`` here.

    Returns the run's value, or raises its error. If ``progress`` raises, the run is told to stop and the
    error is raised here once the worker has given up. A cluster with no worker at all for ``no_worker_seconds``
    (default :data:`NO_WORKER_SECONDS`) while the run waits is an error saying so, not a page that waits for good.
    """
    from distributed import Queue, Variable

    limit = NO_WORKER_SECONDS if no_worker_seconds is None else float(no_worker_seconds)
    name = uuid.uuid4().hex
    events = Queue(f"dpcore-progress-{name}", client=client)
    stop = Variable(f"dpcore-stop-{name}", client=client)
    stop.set(False)
    future = client.submit(_on_worker, compute, name, pure=False)
    cancelled: BaseException | None = None
    heard, without_since, checked = False, None, -math.inf
    try:
        while True:
            finished = future.done()
            if not heard and not finished and time.monotonic() - checked >= WORKER_CHECK_SECONDS:
                checked = time.monotonic()
                if _n_workers(client) == 0:
                    without_since = checked if without_since is None else without_since
                    if checked - without_since >= limit:
                        future.cancel()
                        raise DPValueError(
                            f"the server's Dask cluster ({client.scheduler.address}) has had no worker for "
                            f"{limit:g} s, so the run cannot start: whoever runs the server should start workers "
                            "(`dask worker <scheduler address>`) or unset DPCORE_SCHEDULER; then run it again")
                else:
                    without_since = None
            for event in events.get(batch=True):
                heard = True
                if cancelled is None:
                    try:
                        progress(event)
                    except BaseException as exc:  # the local side has gone: stop the worker too
                        cancelled = exc
                        stop.set(True)
            if finished:
                break
            time.sleep(POLL_SECONDS)
        if cancelled is not None:
            future.cancel()
            raise cancelled
        try:
            return future.result()
        except Exception as exc:
            if "No module named 'dpcore'" in str(exc) or "No module named 'dpcore'" in str(exc.__cause__):
                # the scheduler too: Dask's scheduler unpickles each task, so it imports dpcore as the workers do
                raise DPValueError("the Dask scheduler or its workers cannot import dpcore: start `dask scheduler` "
                                   "and every `dask worker` where this project is installed (pip install -r "
                                   "requirements.txt, with this folder on PYTHONPATH), or unset DPCORE_SCHEDULER to "
                                   "run on this machine") from None
            raise
    finally:
        stop.delete()
        events.close()
