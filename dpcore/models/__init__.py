"""scikit-learn style private estimators: k-means, DP-ERM classifiers, functional-mechanism and SSP regression.

Every estimator stores its parameters in ``__init__`` only; ``fit`` validates,
builds its RNG from ``random_state``, clips to the declared bounds (warning when
anything moved), spends its budget, sets ``epsilon_spent_`` / ``dp_event_`` and
returns ``self``. Bounds inferred from the data raise a PrivacyLeakWarning.

In scikit-learn's ``cross_val_score`` or ``GridSearchCV`` every fit spends its ``epsilon`` on the rows it is
given and fits on overlapping rows compose: with ``cv=k`` each record is in ``k - 1`` fits per candidate, plus
the refit, and the best estimator's ``epsilon_spent_`` covers its refit only. The scores compared are read from
private held-out rows without noise, which no epsilon covers; choose settings on public data or privately
(:func:`private_tune_regularization`, Chaudhuri et al. 2011, Algorithm 4).
"""
from .cluster_rows import RowsClustering, cluster_rows
from .erm import (
    ERMClassifier,
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
    PrivateERMClassifier,
    RandomFourierFeatures,
    loss_curvature,
    objective_perturbation_params,
    output_perturbation_beta,
    private_tune_regularization,
)
from .kmeans import (
    DPLloydKMeans,
    InputPerturbationKMeans,
    LloydKMeans,
    dplloyd_noise_scales,
    input_perturbation_scale,
    su_count_fraction,
)
from .linear import BoundedLinearRegression, FunctionalMechanismRegressor, fm_sensitivities
from .metrics import hungarian_accuracy, intra_cluster_variance
from .ssp import SSPRegressor, ssp_noise_multipliers, ssp_sensitivities

__all__ = [
    "BoundedLinearRegression",
    "DPLloydKMeans",
    "ERMClassifier",
    "FunctionalMechanismRegressor",
    "InputPerturbationKMeans",
    "LloydKMeans",
    "ObjectivePerturbationClassifier",
    "OutputPerturbationClassifier",
    "PrivateERMClassifier",
    "RandomFourierFeatures",
    "RowsClustering",
    "SSPRegressor",
    "cluster_rows",
    "dplloyd_noise_scales",
    "fm_sensitivities",
    "hungarian_accuracy",
    "input_perturbation_scale",
    "intra_cluster_variance",
    "loss_curvature",
    "objective_perturbation_params",
    "output_perturbation_beta",
    "private_tune_regularization",
    "ssp_noise_multipliers",
    "ssp_sensitivities",
    "su_count_fraction",
]
