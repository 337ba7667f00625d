"""A table with no label, clustered privately: the ε a run reports is the ε its event spends, and the reading needs
no classes."""
from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest

from dpcore.accounting import PrivacyLedger, epsilon_of_event
from dpcore.datasets.csv_upload import UNLABELLED, load_csv_unlabelled
from dpcore.exceptions import DPValueError, PrivacyLeakWarning
from dpcore.models.cluster_rows import METHODS, cluster_rows, random_centres_on_rows
from dpcore.models.metrics import intra_cluster_variance


def _three_groups(n: int = 60) -> bytes:
    rng = np.random.default_rng(7)
    X = np.r_[rng.normal([20, 50, 50], 3, (n, 3)), rng.normal([60, 20, 50], 3, (n, 3)),
              rng.normal([40, 80, 50], 3, (n, 3))]
    return ("age,spend,visits\n" + "".join(f"{a:.2f},{b:.2f},{c:.2f}\n" for a, b, c in X)).encode()


@pytest.fixture
def rows():
    return load_csv_unlabelled(_three_groups(), name="shop", bounds="*=0:100")


def _basic_composition(event) -> float:
    """ε of a pure-Laplace event by basic composition, walked here independently of dpcore.accounting: a Laplace
    release of noise multiplier b (scale / sensitivity) is 1/b-DP; compositions add."""
    if isinstance(event, dp_accounting.LaplaceDpEvent):
        return 1.0 / event.noise_multiplier
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return event.count * _basic_composition(event.event)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return sum(_basic_composition(e) for e in event.events)
    raise AssertionError(f"unexpected event {event!r}")


@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
@pytest.mark.parametrize("epsilon", [0.3, 1.0, 4.0])
def test_dplloyd_on_a_table_without_a_label_spends_the_epsilon_it_reports(rows, epsilon, neighbouring):
    res = cluster_rows(rows, "dplloyd", k=3, epsilon=epsilon, params={"neighbouring": neighbouring}, seed=0)
    assert res.epsilon == pytest.approx(epsilon)
    assert isinstance(res.dp_event, dp_accounting.DpEvent)
    assert _basic_composition(res.dp_event) == pytest.approx(epsilon, rel=1e-9)  # an independent reading
    assert epsilon_of_event(res.dp_event, delta=0.0, neighbouring=neighbouring) == pytest.approx(epsilon, rel=1e-9)
    ledger = PrivacyLedger(delta=0.0, neighbouring=neighbouring)
    assert ledger.spend(res.dp_event) == pytest.approx(epsilon, rel=1e-9)


def test_input_perturbation_on_a_table_without_a_label_spends_its_epsilon_once(rows):
    res = cluster_rows(rows, "input-perturbation", k=3, epsilon=0.7, seed=0)
    assert res.epsilon == pytest.approx(0.7) and res.neighbouring == "replace_one"
    assert _basic_composition(res.dp_event) == pytest.approx(0.7)


def test_the_private_runs_draw_secure_noise_when_no_seed_is_given(rows):
    a = cluster_rows(rows, "dplloyd", k=3, epsilon=1.0, seed=None)
    b = cluster_rows(rows, "dplloyd", k=3, epsilon=1.0, seed=None)
    assert not np.allclose(a.centres, b.centres)  # fresh noise from the OS each time
    seeded = [cluster_rows(rows, "dplloyd", k=3, epsilon=1.0, seed=3).centres for _ in range(2)]
    np.testing.assert_array_equal(*seeded)


def test_the_score_is_the_within_over_total_sum_of_squares_of_every_row(rows):
    res = cluster_rows(rows, "lloyd", k=3, seed=0)
    Z = 2 * (np.asarray(rows.X) - 0.0) / 100.0 - 1.0  # the declared box 0..100 mapped onto [-1, 1]
    within = ((Z - res.centres_unit[res.labels]) ** 2).sum()
    total = ((Z - Z.mean(0)) ** 2).sum()
    assert res.within_total == pytest.approx(within / total)
    assert res.within_total == pytest.approx(intra_cluster_variance(Z, res.labels, res.centres_unit))
    assert res.labels.shape == (rows.n_samples,)  # every row clustered: nothing held out
    assert math.isinf(res.epsilon) and res.dp_event is None  # Lloyd is not private
    np.testing.assert_allclose(res.centres, (res.centres_unit + 1) / 2 * 100)  # the columns' own units
    assert res.within_total < 0.1  # three tight groups found


def test_random_centres_on_rows_score_without_classes(rows):
    ref = random_centres_on_rows(rows, 3)
    assert math.isnan(ref.accuracy) and ref.intra_cluster_variance > cluster_rows(rows, "lloyd", k=3).within_total


def test_a_table_without_a_label_reads_every_column_as_a_feature_and_says_which_bounds_leak():
    with pytest.warns(PrivacyLeakWarning, match="'spend', 'visits'"):
        ds = load_csv_unlabelled(_three_groups(), bounds="age=0:100")
    assert ds.task == UNLABELLED and ds.feature_names == ("age", "spend", "visits") and ds.n_classes == 0
    assert ds.inferred_bounds == ("spend", "visits")
    dropped = load_csv_unlabelled(_three_groups(), bounds="*=0:100", drop="visits")
    assert dropped.feature_names == ("age", "spend")


def test_lloyd_refuses_an_epsilon_and_a_private_method_needs_one(rows):
    with pytest.raises(DPValueError, match="lloyd is not private"):
        cluster_rows(rows, "lloyd", epsilon=1.0)
    with pytest.raises(DPValueError, match="needs epsilon"):
        cluster_rows(rows, "dplloyd")
    with pytest.raises(DPValueError, match="method must be one of"):
        cluster_rows(rows, "kmeans++", epsilon=1.0)
    assert set(METHODS) == {"dplloyd", "input-perturbation", "lloyd"}
