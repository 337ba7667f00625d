"""k-ary randomized response."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from fractions import Fraction

import dp_accounting
import numpy as np

from ..exceptions import DPValueError
from ..rng import noise_generator
from ..validation import check_epsilon, check_int
from .base import Mechanism, round_down


@dataclass(frozen=True)
class RandomizedResponse(Mechanism):
    """Report the true category with probability e^eps / (e^eps + k - 1), else one of the others.

    Epsilon-DP under the replace-one relation (a record's category changes).
    In dp_accounting's terms this is ``RandomizedResponseDpEvent(p, k)`` with
    ``p = k / (e^eps + k - 1)``, the probability of answering uniformly at random.

    Parameters
    ----------
    epsilon : float
    k : int
        Number of categories, >= 2. Values are integers in ``[0, k)``.

    References
    ----------
    Warner 1965; Kairouz, Oh, Viswanath, Extremal mechanisms for local DP (2014);
    Ghazi et al., Deep learning with label differential privacy (NeurIPS 2021).

    Examples
    --------
    >>> rr = RandomizedResponse(epsilon=math.log(11), k=10)
    >>> round(rr.p_keep, 3), round(rr.noise_parameter, 3)
    (0.55, 0.5)
    """

    epsilon: float = field(kw_only=True)  # type: ignore[misc]
    k: int = field(kw_only=True)
    name = "randomized_response"
    neighbouring = "replace-one (one record's category changes)"
    fixed_relation = "replace-one"

    @property
    def delta(self) -> float:
        """Pure epsilon-DP: delta is 0."""
        return 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "k", check_int(self.k, "k", minimum=2))

    def _other_share(self) -> Decimal:
        """(k - 1) / (e^eps + k - 1), the exact probability of another answer than the true one, in 50-digit
        decimals (e^eps capped at e^700 as everywhere here)."""
        with localcontext() as ctx:
            # 50 digits beyond epsilon's own (e^eps is 1 + eps): with 50 in all, e^eps read as 1 below 1e-49
            ctx.prec = 50 + max(0, -Decimal(float(self.epsilon)).adjusted())
            k = Decimal(self.k)
            return (k - 1) / (Decimal(min(self.epsilon, 700.0)).exp() + k - 1)

    @property
    def p_keep(self) -> float:
        """Probability of reporting the true category."""
        e = math.exp(min(self.epsilon, 700.0))
        return e / (e + self.k - 1)

    @property
    def p_change(self) -> float:
        """Probability of reporting another category than the true one: ``(k - 1) / (e^eps + k - 1)``, computed
        directly (``1 - p_keep`` rounds to 0 in double precision from epsilon ~37, where a draw compared with
        ``p_keep`` would keep every answer), and rounded UP to a double: rounded down, the answers kept are more
        often the true one than e^eps allows (in double precision e^1e-12 + 999,999 is 1,000,000, so at k = 10^6 the
        answers released at epsilon 1e-12 were 2.9e-11-DP)."""
        exact = self._other_share()
        p = float(exact)
        return p if Decimal(p) >= exact else math.nextafter(p, 1.0)

    @property
    def noise_parameter(self) -> float:
        """dp_accounting's p: the probability of answering uniformly at random over all k, ``k / (e^eps + k - 1)``,
        rounded DOWN to a double (a larger p is a smaller epsilon than the one spent)."""
        with localcontext() as ctx:
            ctx.prec = 50 + max(0, -Decimal(float(self.epsilon)).adjusted())
            exact = self._other_share() * self.k / (self.k - 1)
        p = float(exact)
        p = p if Decimal(p) <= exact else math.nextafter(p, 0.0)
        # The answers drawn change with p_change rounded UP to the draws' grid (2**-52 at the coarsest, secure mode):
        # below epsilon ~1e-15 that lands above (k - 1) / k, and another answer is then likelier than the true one, by
        # a ratio the epsilon stated (down to 1e-300) does not cover (3.3e-16 at k = 3). The event states that ratio.
        grid = Fraction(1, 2**52)
        drawn = math.ceil(Fraction(self.p_change) / grid) * grid
        k = self.k
        if drawn * k > k - 1:
            ratio = drawn / ((1 - drawn) * (k - 1)) if drawn < 1 else None  # P(another) / P(true one) > 1
            p = min(p, round_down(Fraction(k) / (ratio + k - 1)) if ratio is not None else 0.0)
        return p

    def randomise(self, values, *, rng=None):
        gen = noise_generator(rng)
        try:
            arr = np.asarray(values)
        except ValueError:  # a ragged list
            arr = np.asarray(None)
        if not (np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)):
            raise DPValueError(f"randomized response values must be integers in [0, {self.k}), got {values!r:.60}")
        if arr.size and (not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0 or arr.max() >= self.k):
            if not np.all(np.equal(np.mod(arr, 1), 0)) or arr.min() < 0 or arr.max() >= self.k:
                raise DPValueError(f"randomized response values must be integers in [0, {self.k}), got {arr}")
        arr = arr.astype(np.int64)
        # Change the answer when a uniform draw on [0, 1) falls below p_change: draws lie on a grid of 2**-53
        # (2**-52 in secure mode), so P(change) is p_change rounded UP to that grid and the ratio P(keep) /
        # P(a given other) never exceeds e^eps. Comparing with p_keep instead rounds P(keep) up: from epsilon ~37
        # p_keep is 1.0 and every answer is kept (no privacy at all), and below it the ratio is a little above e^eps.
        keep = gen.random(arr.shape) >= self.p_change
        # a uniform draw over the other k-1 categories
        other = gen.integers(0, self.k - 1, size=arr.shape)
        other = other + (other >= arr)
        out = np.where(keep, arr, other)
        return int(out) if out.ndim == 0 else out

    @property
    def dp_event(self):
        return dp_accounting.RandomizedResponseDpEvent(noise_parameter=self.noise_parameter, num_buckets=self.k)
