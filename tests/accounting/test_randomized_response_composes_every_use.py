"""k uses of randomized response compose to k uses under every accountant: dp_accounting 0.6's PLD accountant
composes a RandomizedResponseDpEvent once whatever the count it is given, so SelfComposedDpEvent(rr, 1000) of an
epsilon-1 randomized response read epsilon 1.0 at delta 1e-5.

The reference is the exact privacy profile of k-fold binary randomized response (Kairouz, Oh & Viswanath 2015,
Theorem 3.3): each use's privacy loss is +eps0 with probability e^eps0 / (1 + e^eps0) and -eps0 otherwise, so the
composed loss is (k - 2j) eps0 with j ~ Binomial(k, 1 / (1 + e^eps0)), and
delta(eps) = E[(1 - e^(eps - L))_+], summed here in 60-digit arithmetic."""
from __future__ import annotations

import warnings

import dp_accounting
import pytest

from dpcore.accounting import PrivacyLedger, epsilon_of_event
from dpcore.mechanisms.base import pure_epsilon_event

mp = pytest.importorskip("mpmath")


def exact_delta(eps0: float, k: int, eps: float):
    with mp.workdps(60):
        e0, e = mp.mpf(eps0), mp.mpf(eps)
        p_flip = 1 / (1 + mp.exp(e0))
        total = mp.mpf(0)
        for j in range(k + 1):
            loss = (k - 2 * j) * e0
            if loss > e:
                total += mp.binomial(k, j) * p_flip**j * (1 - p_flip) ** (k - j) * (1 - mp.exp(e - loss))
        return total


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
@pytest.mark.parametrize("eps0,k", [(1.0, 10), (1.0, 100), (0.5, 400), (2.0, 30)])
def test_k_uses_of_randomized_response_never_read_below_their_exact_epsilon(accountant, eps0, k):
    delta = 1e-5
    event = dp_accounting.SelfComposedDpEvent(pure_epsilon_event(eps0), k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eps = epsilon_of_event(event, delta=delta, accountant=accountant)
        spent = PrivacyLedger(delta=delta, accountant=accountant).spend(event)
    assert spent == eps
    assert exact_delta(eps0, k, eps) <= delta  # the epsilon reported holds
    assert eps > eps0  # more than one use (PLD read 1.0 for 100 uses at epsilon 1)


def test_a_randomized_response_that_answers_truthfully_is_still_not_private_however_often_it_is_used():
    event = dp_accounting.SelfComposedDpEvent(dp_accounting.RandomizedResponseDpEvent(0.0, 2), 5)
    assert epsilon_of_event(event, delta=1e-5, accountant="pld") == float("inf")


def test_without_dp_accountings_pld_internals_repeated_randomized_response_reads_infinity(monkeypatch):
    """Where the ledger cannot build PLDs itself (a future dp_accounting's internals moved), it composes with a fresh
    PLDAccountant, which reads k uses of a randomized response as one: that accountant's answer is not taken, and
    the epsilon is the basic composition of the uses (Dwork & Roth 2014, Theorem 3.16), with the reason."""
    import dpcore.accounting.ledger as ledger

    monkeypatch.setattr(ledger, "_pld_of", lambda *args: None)
    event = dp_accounting.SelfComposedDpEvent(pure_epsilon_event(1.0), 10)
    with pytest.warns(UserWarning, match="composes a randomized response once"):
        eps = epsilon_of_event(event, delta=1e-5, accountant="pld")
    assert 10.0 <= eps <= 10.0 * (1 + 1e-15)  # read as one use, it was 1.0
