"""Client shards and the user-level accounting of DP-FedAvg / local DP against dp_accounting."""
from __future__ import annotations

import dp_accounting
import numpy as np
import pytest

from dpcore.accounting import calibrate, dpsgd_epsilon
from dpcore.accounting.accountants import RDP_ORDERS
from dpcore.exceptions import DPValueError
from dpcore.federated import (
    dp_fedavg_epsilons,
    dp_fedavg_event,
    label_counts,
    local_dp_epsilon,
    local_dp_event,
    partition_clients,
)


def test_iid_shards_are_disjoint_and_cover():
    y = np.repeat(np.arange(10), 37)
    parts = partition_clients(y, clients=7, rng=0)
    assert np.array_equal(np.sort(np.concatenate(parts)), np.arange(y.size))
    assert max(p.size for p in parts) - min(p.size for p in parts) <= 1


def test_non_iid_shards_are_label_skewed():
    y = np.repeat(np.arange(10), 100)
    iid = label_counts(y, partition_clients(y, clients=20, rng=0), 10)
    skew = label_counts(y, partition_clients(y, clients=20, non_iid=True, shards_per_client=2, rng=0), 10)
    assert skew.sum() == iid.sum() == y.size  # disjoint, everything used
    assert (skew > 0).sum(axis=1).max() <= 4  # two label-sorted shards: at most a few classes each
    assert (iid > 0).sum(axis=1).min() >= 8


@pytest.mark.parametrize("clients", [0, -3])
def test_zero_clients_is_a_clear_error(clients):
    with pytest.raises(DPValueError, match="clients must be >= 1"):
        partition_clients(np.zeros(10), clients=clients)


def test_more_clients_than_examples():
    with pytest.raises(DPValueError, match="clients=11 is more than the 10"):
        partition_clients(np.zeros(10), clients=11)


@pytest.mark.parametrize("sigma,q,rounds", [(1.0, 0.5, 30), (2.5, 0.1, 50), (0.8, 1.0, 5)])
def test_dp_fedavg_epsilon_equals_dp_accounting(sigma, q, rounds):
    acc = dp_accounting.rdp.RdpAccountant(orders=list(RDP_ORDERS))
    acc.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), rounds))
    curve = dp_fedavg_epsilons(noise_multiplier=sigma, sample_rate=q, rounds=rounds, delta=1e-5)
    assert curve[-1] == pytest.approx(acc.get_epsilon(1e-5), rel=1e-9)
    mid = rounds // 2
    assert curve[mid - 1] == pytest.approx(dpsgd_epsilon(noise_multiplier=sigma, sample_rate=q, steps=mid, delta=1e-5))
    assert np.all(np.diff(curve) > 0)


def test_pld_curve_matches_pld_accountant():
    curve = dp_fedavg_epsilons(noise_multiplier=1.2, sample_rate=0.3, rounds=2, delta=1e-5, accountant="pld")
    acc = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_accounting.PoissonSampledDpEvent(0.3, dp_accounting.GaussianDpEvent(1.2)), 2)
    assert curve[-1] == pytest.approx(acc.get_epsilon(1e-5), rel=1e-3)


def test_local_dp_is_a_sensitivity_2s_gaussian_without_amplification():
    """Local DP: N(0, sigma^2 S^2) on an update that can move by 2S = unit Gaussian with sigma / 2."""
    acc = dp_accounting.rdp.RdpAccountant(orders=list(RDP_ORDERS))
    acc.compose(dp_accounting.GaussianDpEvent(3.0 / 2), 7)
    assert local_dp_epsilon(noise_multiplier=3.0, participations=7, delta=1e-5) == pytest.approx(acc.get_epsilon(1e-5))
    assert local_dp_epsilon(noise_multiplier=3.0, participations=0, delta=1e-5) == 0.0


def test_calibration_meets_targets():
    s = calibrate(lambda x: dp_fedavg_event(noise_multiplier=x, sample_rate=0.5, rounds=20), target_epsilon=3.0,
                  delta=1e-5)
    assert 2.97 <= dpsgd_epsilon(noise_multiplier=s, sample_rate=0.5, steps=20, delta=1e-5) <= 3.0
    s = calibrate(lambda x: local_dp_event(noise_multiplier=x, participations=12), target_epsilon=8.0, delta=1e-5,
                  neighbouring="replace-one")
    assert 7.92 <= local_dp_epsilon(noise_multiplier=s, participations=12, delta=1e-5) <= 8.0
