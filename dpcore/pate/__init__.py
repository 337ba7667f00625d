"""PATE: Private Aggregation of Teacher Ensembles (Papernot et al. 2017, 2018).

Teachers are trained on disjoint partitions of the private data; their votes on
public, unlabelled queries are aggregated with noise (LNMax: Laplace, 2017;
GNMax: Gaussian, 2018; Confident-GNMax, 2018, which answers only when the teachers agree); a student learns from
the public inputs and the noisy labels only. Privacy is accounted per query through dp_accounting; the
data-dependent analysis (2018, Theorem 6) is an option, released privately with smooth sensitivity.
"""
from .aggregation import (
    AGGREGATORS,
    HISTOGRAM_L1_SENSITIVITY,
    HISTOGRAM_L2_SENSITIVITY,
    GNMax,
    LNMax,
    cluster_votes,
    make_aggregator,
    vote_histogram,
)
from .analysis import (
    calibrate_noise_scale,
    data_dependent_epsilon,
    data_independent_rdp_epsilon,
    gnmax_data_dependent_rdp,
    gnmax_log_q,
    pate_epsilon,
    pate_event,
)
from .confident import ConfidentGNMax, ReleasedEpsilon, release_data_dependent_epsilon
from .pipeline import FEATURES, QUERY_MODES, PateConfig, PateData, PateResult, pate_split, run_pate, train_student
from .teachers import MODELS, partition_indices, train_teachers

__all__ = [
    "AGGREGATORS",
    "ConfidentGNMax",
    "ReleasedEpsilon",
    "FEATURES",
    "HISTOGRAM_L1_SENSITIVITY",
    "HISTOGRAM_L2_SENSITIVITY",
    "GNMax",
    "LNMax",
    "MODELS",
    "PateConfig",
    "PateData",
    "PateResult",
    "QUERY_MODES",
    "calibrate_noise_scale",
    "cluster_votes",
    "data_dependent_epsilon",
    "data_independent_rdp_epsilon",
    "gnmax_data_dependent_rdp",
    "gnmax_log_q",
    "make_aggregator",
    "vote_histogram",
    "partition_indices",
    "pate_epsilon",
    "pate_event",
    "pate_split",
    "release_data_dependent_epsilon",
    "run_pate",
    "train_student",
    "train_teachers",
]
