"""The exponential mechanism."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from ..rng import noise_generator
from ..validation import check_array
from .base import PureEpsilonMechanism, pure_epsilon_event


@dataclass(frozen=True)
class Exponential(PureEpsilonMechanism):
    """Select candidate r with probability proportional to exp(eps u(r) / (2 Delta_u)).

    Parameters
    ----------
    epsilon : float
    sensitivity : float
        Sensitivity Delta_u of the utility function.

    References
    ----------
    McSherry & Talwar. Mechanism design via differential privacy. FOCS 2007.

    Examples
    --------
    >>> Exponential(epsilon=1.0).probabilities([0.0, 0.0]).tolist()
    [0.5, 0.5]
    """

    name = "exponential"
    neighbouring = "replace-one (as the utility's sensitivity is defined)"
    fixed_relation = "replace-one"

    def probabilities(self, utilities) -> np.ndarray:
        u = check_array(utilities, "utilities", ndim=1)
        logits = self.epsilon * u / (2.0 * self.sensitivity)
        return np.exp(logits - logsumexp(logits))

    def randomise(self, values, *, rng=None) -> int:
        """``values`` are the utilities of the candidates; returns the chosen index."""
        p = self.probabilities(values)
        return int(noise_generator(rng).choice(p.size, p=p))

    @property
    def dp_event(self):
        """Binary randomized response at the same epsilon, under replace-one neighbours (:func:`pure_epsilon_event`)."""
        return pure_epsilon_event(self.epsilon)
