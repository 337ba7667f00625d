"""FedAvg / DP-FedAvg / local DP on digits: clipping, server noise, accounting, learning, bad inputs."""
from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
import torch

from dpcore.accounting.accountants import RDP_ORDERS
from dpcore.datasets import train_test_split
from dpcore.exceptions import DPValueError
from dpcore.federated import (
    FedAvgConfig,
    FlatModel,
    clip_updates,
    noisy_server_average,
    train_fedavg_split,
)
from dpcore.learners import get_learner, run_learner


@pytest.fixture(scope="module")
def split():
    return train_test_split("digits", seed=0)


def cfg(**kw):
    base = dict(clients=10, rounds=8, client_fraction=0.5, clip_norm=1.0, noise_multiplier=1.0, seed=0)
    base.update(kw)
    return FedAvgConfig(**base)


def test_clip_updates_bounds_every_norm():
    u = torch.randn(50, 300, generator=torch.Generator().manual_seed(0)) * torch.linspace(0.01, 3, 50)[:, None]
    c, norms = clip_updates(u, clip_norm=2.0)
    cn = c.norm(dim=1)
    assert torch.all(cn <= 2.0 + 1e-5)
    small = norms <= 2.0
    assert small.any() and (~small).any()
    assert torch.allclose(c[small], u[small])  # untouched below the bound
    assert torch.allclose(cn[~small], torch.full_like(cn[~small], 2.0))


def test_a_client_update_that_overflowed_is_sent_as_nothing_never_as_nan():
    # a client whose local SGD overflowed (inf in its update) had clip factor C / (inf + 1e-6) = 0, and 0 * inf is
    # nan: the noisy sum was nan whatever the noise, so whether such a client took part showed in the release with
    # certainty, beyond any epsilon; a nan update the same. Such a row now counts as a zero update (its own data
    # decides it, and a zero row is within the clip norm), like a finite row whose norm overflows float32
    inf, nan = float("inf"), float("nan")
    u = torch.tensor([[inf, 0.0, 1.0], [nan, 1.0, 0.0], [3e38, 3e38, 0.0], [-inf, inf, 0.0], [3.0, 4.0, 0.0]])
    clipped, norms = clip_updates(u, clip_norm=2.0)
    assert torch.isfinite(clipped).all()
    assert torch.equal(clipped[:4], torch.zeros(4, 3))
    assert torch.allclose(clipped[4], torch.tensor([1.2, 1.6, 0.0]))
    assert (clipped.norm(dim=1) <= 2.0).all()


@pytest.mark.parametrize("mode", ["central", "local"])
def test_a_learning_rate_that_overflows_local_training_still_releases_finite_noisy_models(split, mode):
    # learning rate 1e38: the clients' local SGD overflows; the released average was nan (central and local)
    r = train_fedavg_split(split, cfg(mode=mode, rounds=2, learning_rate=1e38))
    assert np.isfinite(r.params).all() and np.isfinite(r.history.server_step_norm).all()
    assert (r.history.max_sent_norm <= 1.0 + 1e-6).all()


def test_server_noise_std_is_sigma_s_over_qn():
    g = torch.Generator().manual_seed(1)
    out = noisy_server_average(torch.zeros(200_000), clip_norm=0.7, noise_multiplier=2.0, expected_clients=5.0,
                               generator=g)
    assert float(out.std()) == pytest.approx(2.0 * 0.7 / 5.0, rel=0.01)
    assert abs(float(out.mean())) < 0.002


def test_trainer_clips_client_updates(split):
    r = train_fedavg_split(split, cfg(clip_norm=0.05))
    h = r.history
    assert (h.max_sent_norm <= 0.05 + 1e-6).all()
    assert h.clipped_fraction.max() > 0  # clipping was actually active


def test_trainer_server_noise_has_configured_std(split):
    """With huge noise the server step is essentially the noise: ||step|| ~ sqrt(P) sigma S / (qN)."""
    c = cfg(noise_multiplier=300.0, clip_norm=0.5, rounds=12)
    r = train_fedavg_split(split, c)
    P = FlatModel("softmax", 64, 10).n_params
    expect = math.sqrt(P) * 300.0 * 0.5 / (c.client_fraction * c.clients)
    got = float(np.sqrt(np.mean(r.history.server_step_norm**2)))
    assert got == pytest.approx(expect, rel=0.03)


def test_local_dp_noise_is_added_per_client(split):
    c = cfg(mode="local", noise_multiplier=300.0, clip_norm=0.5, rounds=12)
    r = train_fedavg_split(split, c)
    P = FlatModel("softmax", 64, 10).n_params
    m = r.history.clients.to_numpy()
    expect = np.sqrt(P * m) * 300.0 * 0.5 / (c.client_fraction * c.clients)
    ok = m > 0
    assert np.sqrt(np.mean(r.history.server_step_norm[ok] ** 2)) == pytest.approx(np.sqrt(np.mean(expect[ok] ** 2)),
                                                                                   rel=0.03)


def test_epsilon_equals_dp_accounting(split):
    c = cfg(noise_multiplier=1.3, client_fraction=0.3, rounds=10)
    r = train_fedavg_split(split, c)
    acc = dp_accounting.rdp.RdpAccountant(orders=list(RDP_ORDERS))
    acc.compose(dp_accounting.PoissonSampledDpEvent(0.3, dp_accounting.GaussianDpEvent(1.3)), 10)
    assert r.epsilon == pytest.approx(acc.get_epsilon(1e-5), rel=1e-9)
    assert r.history.epsilon.iloc[-1] == r.epsilon and len(r.history) == 10


def test_local_epsilon_uses_the_busiest_client(split):
    r = train_fedavg_split(split, cfg(mode="local", noise_multiplier=4.0))
    k = int(r.participation.sum(axis=0).max())
    acc = dp_accounting.rdp.RdpAccountant(orders=list(RDP_ORDERS))
    acc.compose(dp_accounting.GaussianDpEvent(2.0), k)
    assert r.epsilon == pytest.approx(acc.get_epsilon(1e-5))


def test_target_epsilon_mode(split):
    r = train_fedavg_split(split, cfg(noise_multiplier=None, target_epsilon=4.0))
    assert 3.96 <= r.epsilon <= 4.0


def test_non_private_fedavg_learns_and_dp_converges_to_it(split):
    base = dict(clients=10, rounds=10, client_fraction=1.0, learning_rate=0.5)
    plain = train_fedavg_split(split, FedAvgConfig(mode="none", **base))
    assert plain.accuracy > 0.85 and math.isinf(plain.epsilon)
    tiny_noise = train_fedavg_split(split, FedAvgConfig(mode="central", noise_multiplier=1e-3, clip_norm=100.0, **base))
    assert tiny_noise.accuracy > 0.85


def test_mlp_and_non_iid_run(split):
    r = train_fedavg_split(split, cfg(model="mlp", non_iid=True, rounds=3))
    assert r.client_label_counts.shape == (10, 10)
    assert (r.client_label_counts > 0).sum(axis=1).max() <= 4


def test_on_epoch_and_determinism(split):
    seen = []
    r1 = train_fedavg_split(split, cfg(rounds=4), on_epoch=seen.append)
    r2 = train_fedavg_split(split, cfg(rounds=4))
    assert [s["round"] for s in seen] == [1, 2, 3, 4] and {"accuracy", "epsilon"} <= set(seen[0])
    assert np.array_equal(r1.params, r2.params)


@pytest.mark.parametrize("fraction", [0.0, -0.1, 1.5])
def test_client_fraction_outside_unit_interval(fraction):
    with pytest.raises(DPValueError, match=r"client_fraction must be in \(0, 1\]"):
        cfg(client_fraction=fraction)


def test_other_bad_inputs(split):
    with pytest.raises(DPValueError, match="clients must be >= 1"):
        cfg(clients=0)
    with pytest.raises(DPValueError, match="clip_norm"):
        cfg(clip_norm=-1.0)
    with pytest.raises(DPValueError, match="noise_multiplier or target_epsilon"):
        cfg(noise_multiplier=None)
    with pytest.raises(DPValueError, match="more than the"):
        train_fedavg_split(train_test_split("iris", seed=0), cfg(clients=500))


def test_registered_learners(split):
    assert get_learner("dp-fedavg").baseline == "fedavg"
    res = run_learner("dp-fedavg", split, epsilon=2.0, seed=0, params={"clients": 5, "rounds": 3})
    assert res.epsilon <= 2.0 + 1e-9 and {"epoch", "epsilon", "accuracy"} <= set(res.history.columns)
    res = run_learner("fedavg-local-dp", split, epsilon=50.0, seed=0, params={"clients": 5, "rounds": 3})
    assert res.epsilon <= 50.0 + 1e-9
    res = run_learner("fedavg", split, seed=0, params={"clients": 5, "rounds": 3})
    assert math.isinf(res.epsilon)


def test_cli_json(cli):
    out = cli("train", "--algorithm", "dp-fedavg", "--dataset", "digits", "--clients", "5", "--rounds", "3",
              "--client-fraction", "0.6", "--noise-multiplier", "1.0", "--json")
    assert out.returncode == 0, out.stderr
    import json

    j = json.loads(out.stdout.strip().splitlines()[-1])
    assert j["learner"] == "dp-fedavg" and j["noise_multiplier"] == 1.0 and 0 < j["epsilon"] < 100
    # whose clients the epsilon protects: a script composing runs must keep to one federation
    assert j["federation"].startswith("5 clients (IID)") and "seed 0" in j["federation"]


def test_rounds_follow_the_budget_when_not_given():
    from dpcore.federated.learners import default_rounds

    few = run_learner("dp-fedavg", "digits", epsilon=0.5, seed=0)
    many = run_learner("dp-fedavg", "digits", epsilon=4.0, seed=0)
    assert (len(few.history), len(many.history)) == (20, 100) == (default_rounds(0.5), default_rounds(4.0))
    assert few.epsilon <= 0.5 + 1e-6 and many.epsilon <= 4.0 + 1e-6
    assert len(run_learner("dp-fedavg", "digits", epsilon=0.5, seed=0, params={"rounds": 7}).history) == 7
    assert len(run_learner("fedavg", "digits", seed=0).history) == default_rounds(None) == 50
    spec = get_learner("dp-fedavg")
    assert spec.defaults(epsilon=1.0)["rounds"] == 25 and spec.defaults()["rounds"] == 100  # its own ε = 4


def test_local_sgd_matches_each_client_trained_alone_when_batches_are_wider_than_the_clients():
    """Clients of 2-4 rows with a batch size of 32: one step of plain gradient descent on each client's own rows (the
    padding to the batch size, or its absence, changes nothing a client learns)."""
    from dpcore.federated.models import FlatModel, local_sgd

    g = torch.Generator().manual_seed(0)
    X, y = torch.rand(12, 5, generator=g), torch.randint(0, 3, (12,), generator=g)
    model = FlatModel("softmax", 5, 3)
    theta = torch.rand(model.n_params, generator=g) - 0.5
    shards = [np.array([0, 1]), np.array([2, 3, 4, 5]), np.array([6, 7, 8])]
    local = local_sgd(model, theta, X, y, shards, epochs=1, batch_size=32, learning_rate=0.5,
                      rng=np.random.default_rng(0))
    for k, rows in enumerate(shards):
        w = theta[:15].reshape(5, 3).clone().requires_grad_(True)
        b = theta[15:].clone().requires_grad_(True)
        loss = torch.nn.functional.cross_entropy(X[rows] @ w + b, y[rows])
        gw, gb = torch.autograd.grad(loss, (w, b))
        alone = torch.cat([(w - 0.5 * gw).reshape(-1), b - 0.5 * gb])
        assert torch.allclose(local[k], alone.detach(), atol=1e-6)


def test_a_ledger_given_a_fedavg_result_checks_what_its_epsilon_protects(split):
    """A FedAvgResult says its relation and its unit, as a run's result does: spent whole, both are checked against
    the ledger's. Without the relation the ledger asked for the bare .dp_event, and local DP's event, a guarantee for a
    client replaced (Gaussian of sigma / 2), composed in an add/remove ledger at its own 2.17, a total no guarantee
    backs (a client added or removed changes how many reports the server sees). Without the unit a ledger of records
    took DP-FedAvg's ε, which protects a client, as a record's: a record added changes what its client holds (a client
    replaced), so no total of records may take it; a ledger of clients does."""
    from dpcore.accounting import Neighbouring, PrivacyLedger, replace_one_guarantee

    central = train_fedavg_split(split, cfg(rounds=2))
    local = train_fedavg_split(split, cfg(mode="local", rounds=2, noise_multiplier=4.0))
    plain = train_fedavg_split(split, cfg(mode="none", rounds=1, noise_multiplier=None))
    assert (central.neighbouring, local.neighbouring, plain.neighbouring) == (
        Neighbouring.ADD_REMOVE, Neighbouring.REPLACE_ONE, None)
    assert central.unit == local.unit == "clients"
    with pytest.raises(DPValueError, match="protects each client's whole data, and this ledger counts each record"):
        PrivacyLedger(delta=1e-5).spend(central)
    clients = PrivacyLedger(delta=1e-5, unit="clients")
    assert clients.spend(central) == pytest.approx(central.epsilon)
    with pytest.raises(DPValueError, match="protects one client replaced, and this ledger counts one client added"):
        clients.spend(local)
    assert PrivacyLedger(delta=1e-5, neighbouring="replace-one", unit="clients").spend(local) == pytest.approx(
        local.epsilon)
    replace_one = PrivacyLedger(delta=1e-2, neighbouring="replace-one", unit="clients")  # above (1 + e^ε) δ
    assert replace_one.spend(central) == pytest.approx(replace_one_guarantee(central.epsilon, central.delta)[0])
    assert math.isinf(replace_one.spend(plain))  # FedAvg without noise: no guarantee, nor a total


def test_a_federated_run_says_it_protects_clients_and_a_ledger_of_records_refuses_it(split):
    """run_learner's result of a federated learner says unit 'clients' (it said 'records', and a ledger of records
    composed DP-FedAvg's client-level ε with DP-SGD's as if both protected a record); a record-level run is refused
    by a ledger of clients in turn (a guarantee for one record says nothing of a client's whole data)."""
    from dpcore.accounting import PrivacyLedger

    fed = run_learner("dp-fedavg", split, epsilon=2.0, seed=0, params={"clients": 5, "rounds": 3})
    local = run_learner("fedavg-local-dp", split, epsilon=50.0, seed=0, params={"clients": 5, "rounds": 3})
    dpsgd = run_learner("dpsgd", split, epsilon=1.0, seed=0, params={"epochs": 1})
    assert (fed.unit, local.unit, dpsgd.unit) == ("clients", "clients", "records")
    records = PrivacyLedger(delta=1e-5)
    records.spend(dpsgd)
    with pytest.raises(DPValueError, match=r"each client's whole data.*PrivacyLedger\(unit='clients'\)"):
        records.spend(fed)
    assert len(records) == 1
    with pytest.raises(DPValueError, match="protects each record, and this ledger counts each client's whole data"):
        PrivacyLedger(delta=1e-5, unit="clients").spend(dpsgd)


def test_a_ledger_of_clients_composes_runs_of_one_federation_only(split):
    """A client of one simulated federation is no client of another: the records are dealt out to clients by the
    run's seed and their number, so runs with another seed or another number of clients protect other groups of
    records. A ledger of clients composed them as if one client were protected by all; it now takes the runs of the
    first federation it is given and refuses the others, by name."""
    from dpcore.accounting import PrivacyLedger

    one = run_learner("dp-fedavg", split, epsilon=1.0, seed=0, params={"clients": 5, "rounds": 3})
    again = run_learner("dp-fedavg", split, epsilon=2.0, seed=0, params={"clients": 5, "rounds": 3})
    reseeded = run_learner("dp-fedavg", split, epsilon=1.0, seed=1, params={"clients": 5, "rounds": 3})
    more = run_learner("dp-fedavg", split, epsilon=1.0, seed=0, params={"clients": 8, "rounds": 3})
    assert one.federation == again.federation and "5 clients" in one.federation and "seed 0" in one.federation
    assert len({one.federation, reseeded.federation, more.federation}) == 3
    clients = PrivacyLedger(delta=1e-5, unit="clients")
    clients.spend(one)
    clients.spend(again)  # the same federation, another ε: its clients compose
    for other in (reseeded, more):
        with pytest.raises(DPValueError, match="protects a client of another federation"):
            clients.spend(other)
    assert len(clients) == 2 and clients.federation == one.federation


def test_a_client_level_result_that_does_not_say_its_federation_is_refused_by_name(split):
    """A result protecting clients with no federation (a learner of one's own that sets unit='clients' only) cannot be
    checked against the ledger's clients: it is refused, with what to do, rather than composed on trust."""
    import dataclasses

    from dpcore.accounting import PrivacyLedger

    run = run_learner("dp-fedavg", split, epsilon=1.0, seed=0, params={"clients": 5, "rounds": 2})
    unsaid = dataclasses.replace(run, federation=None)
    ledger = PrivacyLedger(delta=1e-5, unit="clients")
    with pytest.raises(DPValueError, match="does not say of which federation"):
        ledger.epsilon_if(unsaid)
    assert len(ledger) == 0 and ledger.spend(run) == pytest.approx(run.epsilon)


def test_another_split_of_the_same_size_is_another_federation():
    """Two splits of one data set with the same sizes hold other training rows: dealt out with the same seed to the
    same number of clients, client k of one is another group of records than client k of the other. The federation
    named only the number of rows, clients and seed, so a ledger of clients composed the two as one federation's;
    a FedAvgResult and run_learner's result of the same split still compose."""
    from dpcore.accounting import PrivacyLedger
    from dpcore.federated.learners import fedavg_config

    params = {"clients": 5, "rounds": 2}
    first, second = (train_test_split("iris", test_size=0.25, seed=s) for s in (1, 2))
    one = run_learner("dp-fedavg", first, epsilon=1.0, seed=0, params=params)
    other = run_learner("dp-fedavg", second, epsilon=1.0, seed=0, params=params)
    assert len(first.y_train) == len(second.y_train) and one.federation != other.federation
    assert "'iris' split with seed 1" in one.federation
    clients = PrivacyLedger(delta=1e-5, unit="clients")
    clients.spend(one)
    with pytest.raises(DPValueError, match="protects a client of another federation"):
        clients.spend(other)
    direct = train_fedavg_split(first, fedavg_config(first, "central", epsilon=1.0, delta=1e-5, seed=0,
                                                     params=params))
    assert direct.federation == one.federation
    clients.spend(direct)
    assert len(clients) == 2
