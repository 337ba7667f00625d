"""``python -m dpcore ...``: see :mod:`dpcore.cli`."""
import sys

from .cli import main


def _exit_now(code: int) -> None:
    """Leave as the interpreter would, without tearing down the libraries a command loaded: after a sweep, torch,
    SciPy and pandas took 0.6-0.7 s of a command's wall time to unload, work nobody waits for. What Python's exit
    does that matters is done first (wait for the threads that are not daemons and run their exit hooks, run the
    ``atexit`` functions: logging's flush, joblib's and multiprocessing's clean-up, ``weakref.finalize``), then the
    output is flushed and the process ends with ``code``: a reader that stopped early (``| head``) changes nothing,
    as in :func:`~dpcore.cli.main`; output that cannot be written (a full disk) is said on standard error, with
    exit status 1. A command that fails (an exception, ``SystemExit`` from argument parsing) exits the usual way."""
    import atexit
    import os
    import threading

    shutdown = getattr(threading, "_shutdown", None)  # what the interpreter calls first on its way out
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # started with it closed (``>&-``): Python's print said nothing, and nothing is owed
            continue
        try:
            stream.flush()
        except BrokenPipeError:  # the reader stopped early (``| head``): as main() answers it, nothing went wrong
            pass
        except (OSError, ValueError) as exc:  # e.g. a full disk: what is left of the output is lost, and said so
            code = code or 1
            try:
                print(f"error: the output could not be written in full ({exc})", file=sys.__stderr__, flush=True)
            except (OSError, ValueError, AttributeError):
                pass
    os._exit(code)


if __name__ == "__main__":
    _exit_now(int(main() or 0))
