"""Privacy-utility sweeps: any registered learner along epsilon (or another knob), over seeds.

>>> from dpcore.sweep import SweepConfig, run_sweep
>>> cfg = SweepConfig(dataset="digits", learners=["dpsgd"], values=[0.5, 1, 2, 4], seeds=3)  # doctest: +SKIP
>>> result = run_sweep(cfg, on_result=lambda p: print(p.done, "/", p.total))                  # doctest: +SKIP
>>> result.table        # one row per (learner, value, seed), plus the baselines              # doctest: +SKIP

A sweep is dataset x learners x one swept axis x seeds with every other knob
fixed (:class:`SweepConfig`). :func:`run_sweep` runs it in parallel processes
(joblib) or on a Dask cluster (``scheduler=``), streams each finished run to a
callback, and caches every run on disk keyed by a hash of its full
configuration, so a reopened sweep is read back at once and an interrupted one
resumes. The non-private counterpart and the majority-class / mean line (random centres,
which use no data, for a sweep of clusterings) come with every sweep.
"""
from .axes import AXES, BUILTIN_AXES, DEFAULT_RANGES, Axis, default_values, get_axis, value_range
from .cache import SweepCache, default_cache_dir
from .config import (
                     CODE_VERSION,
                     DEFAULT_SEEDS,
                     RunSpec,
                     SweepConfig,
                     dataset_fingerprint,
                     load_providers,
                     source_digest,
)
from .engine import (
                     DEFAULT_JOBS,
                     JOBS_HELP,
                     SweepProgress,
                     SweepResult,
                     SweepRunError,
                     build_table,
                     cached_result,
                     execute_run,
                     from_upload,
                     run_sweep,
                     table_warnings,
)
from .summary import summarize, tuning_tax

__all__ = [
    "AXES",
    "BUILTIN_AXES",
    "Axis",
    "CODE_VERSION",
    "DEFAULT_JOBS",
    "JOBS_HELP",
    "DEFAULT_RANGES",
    "DEFAULT_SEEDS",
    "RunSpec",
    "SweepCache",
    "SweepConfig",
    "SweepProgress",
    "SweepResult",
    "SweepRunError",
    "build_table",
    "cached_result",
    "dataset_fingerprint",
    "default_cache_dir",
    "default_values",
    "execute_run",
    "from_upload",
    "get_axis",
    "load_providers",
    "run_sweep",
    "source_digest",
    "summarize",
    "tuning_tax",
    "table_warnings",
    "value_range",
]
