"""PATE end to end on digits: disjoint teachers, a student that only sees public inputs and noisy labels."""
from __future__ import annotations

import numpy as np
import pytest

import dpcore.pate.pipeline as pipeline
import dpcore.pate.teachers as teachers_mod
from dpcore.datasets import Split, train_test_split
from dpcore.exceptions import DPValueError
from dpcore.learners import get_learner, run_learner
from dpcore.pate import PateConfig, partition_indices, pate_epsilon, pate_split, run_pate, train_teachers
from dpcore.pate.aggregation import vote_histogram
from dpcore.pate.teachers import teacher_predictions


@pytest.fixture(scope="module")
def split():
    return train_test_split("digits", seed=0)


def small(**kw):
    base = dict(teachers=8, queries=60, noise_scale=3.0, baseline=False, seed=0)
    base.update(kw)
    return PateConfig(**base)


def test_partitions_are_disjoint_and_cover():
    parts = partition_indices(103, 10, rng=3)
    allidx = np.concatenate(parts)
    assert np.array_equal(np.sort(allidx), np.arange(103))
    assert max(p.size for p in parts) - min(p.size for p in parts) <= 1


def test_more_teachers_than_examples_is_a_clear_error(split):
    with pytest.raises(DPValueError, match="teachers=50 is more than the 20 private examples"):
        partition_indices(20, 50)
    with pytest.raises(DPValueError, match="teachers"):
        run_pate(train_test_split("iris", seed=0), small(teachers=500, queries=5))


def test_the_noiseless_ensemble_is_the_majority_vote_of_the_trained_teachers_on_the_test_part(split, monkeypatch):
    """The run reads each teacher's test predictions once, as the teacher is scored (Papernot et al. 2017,
    Section 2.1): the ensemble's accuracy and every teacher's are those of the teachers it trained, predicting the
    test part afresh."""
    made = []
    real = pipeline.train_teachers

    def spy(*a, **k):
        made.append(real(*a, **k))
        return made[-1]

    monkeypatch.setattr(pipeline, "train_teachers", spy)
    cfg = small(teacher_model="knn")
    d = pate_split(split, public_fraction=cfg.public_fraction, seed=cfg.seed)
    res = run_pate(d, cfg)
    (teachers,) = made
    predicted = teacher_predictions(teachers, d.X_test)
    assert res.ensemble_accuracy == float(np.mean(vote_histogram(predicted, d.n_classes).argmax(1) == d.y_test))
    assert res.teacher_accuracies.tolist() == [float(np.mean(p == d.y_test)) for p in predicted]


def test_teachers_see_disjoint_private_data(split, monkeypatch):
    seen_parts, seen_fits = [], []
    real_partition, real_fit = pipeline.partition_indices, teachers_mod.fit_classifier

    def spy_partition(*a, **k):
        out = real_partition(*a, **k)
        seen_parts.append(out)
        return out

    def spy_fit(name, X, y, **k):
        seen_fits.append((X.copy(), y.copy()))
        return real_fit(name, X, y, **k)

    monkeypatch.setattr(pipeline, "partition_indices", spy_partition)
    monkeypatch.setattr(teachers_mod, "fit_classifier", spy_fit)
    cfg = small()
    d = pate_split(split, public_fraction=cfg.public_fraction, seed=cfg.seed)
    run_pate(d, cfg)
    (parts,) = seen_parts
    assert len(seen_fits) == cfg.teachers == len(parts)
    for i in range(len(parts)):
        for j in range(i + 1, len(parts)):
            assert not set(parts[i]) & set(parts[j])
    for (X, y), p in zip(seen_fits, parts):
        assert np.array_equal(X, d.X_private[p]) and np.array_equal(y, d.y_private[p])
    # and the private part never overlaps the public pool
    assert not set(d.private_index) & set(d.public_index)


def test_neighbouring_private_data_changes_one_teacher_only(split):
    """Replace one private record: only the teacher holding it can vote differently (sensitivity argument)."""
    d = pate_split(split, seed=0)
    parts = partition_indices(d.y_private.size, 10, rng=1)
    X2, y2 = d.X_private.copy(), d.y_private.copy()
    X2[5], y2[5] = d.X_private[900], (d.y_private[900] + 1) % 10
    t1 = train_teachers(d.X_private, d.y_private, parts, rng=4)
    t2 = train_teachers(X2, y2, parts, rng=4)
    p1, p2 = teacher_predictions(t1, d.X_public), teacher_predictions(t2, d.X_public)
    changed = np.flatnonzero(np.any(p1 != p2, axis=1))
    owner = [i for i, p in enumerate(parts) if 5 in p]
    assert set(changed) <= set(owner)


def _record_fits(monkeypatch) -> list:
    """Every (X, y) the pipeline itself fits a model on (the teachers are fitted in their own module)."""
    calls = []
    real = pipeline.fit_classifier

    def spy(name, X, y, **k):
        calls.append((X.copy(), y.copy()))
        return real(name, X, y, **k)

    monkeypatch.setattr(pipeline, "fit_classifier", spy)
    return calls


def test_student_sees_only_public_inputs_and_noisy_labels(split, monkeypatch):
    calls = _record_fits(monkeypatch)
    cfg = small(baseline=False)
    d = pate_split(split, seed=cfg.seed)
    r = run_pate(d, cfg)
    (X, y), = calls  # the student is the only model the pipeline itself fits
    assert np.array_equal(X, d.X_public[r.query_index])
    assert np.array_equal(y, r.noisy_labels)
    assert np.array_equal(r.noisy_labels, r.noisy_votes.argmax(axis=1))


def test_student_does_not_depend_on_public_true_labels(split):
    """Scramble the true labels of the public pool: the student (and its accuracy) must not move."""
    cfg = small()
    d = pate_split(split, seed=cfg.seed)
    y_bad = np.array(split.y_train).copy()
    y_bad[d.public_index] = (y_bad[d.public_index] + 3) % 10
    split_bad = Split(split.dataset, split.X_train, y_bad, split.X_test, split.y_test, split.seed, split.test_size)
    r1, r2 = run_pate(split, cfg), run_pate(split_bad, cfg)
    assert np.array_equal(r1.student_predictions, r2.student_predictions)
    assert r1.student_accuracy == r2.student_accuracy
    assert r1.label_accuracy != r2.label_accuracy  # the evaluation did see the change


def test_result_accounting_and_history(split):
    r = run_pate(split, small(data_dependent=True, noise_scale=4.0, teachers=20, queries=80))
    assert r.epsilon_answers == pytest.approx(pate_epsilon(aggregator="gnmax", noise_scale=4.0, queries=80,
                                                           delta=1e-5))
    assert r.epsilon_data_dependent <= r.epsilon_answers + 1e-9
    h = r.history
    assert h.epsilon.iloc[-1] == r.epsilon_answers  # along the queries: the answers (the release comes after)
    assert h.queries.iloc[-1] == 80 and np.all(np.diff(h.epsilon) > 0)
    assert np.all(h.epsilon_data_dependent <= h.epsilon + 1e-9)
    assert r.votes.shape == (80, 10) and np.all(r.votes.sum(axis=1) == 20)
    assert len(r.teacher_accuracies) == 20 and r.split_sizes["test"] == split.y_test.size
    assert r.student_accuracy > 0.5


def test_target_epsilon_mode_and_lnmax(split):
    r = run_pate(split, PateConfig(aggregator="lnmax", teachers=8, queries=40, target_epsilon=4.0, delta=0.0,
                                   baseline=False))
    assert r.epsilon == pytest.approx(4.0) and r.epsilon_pure == pytest.approx(4.0)
    assert r.noise_scale == pytest.approx(2 * 40 / 4.0, rel=1e-5)  # calibrated: basic composition of 40 Laplace


def test_bad_configs():
    with pytest.raises(DPValueError, match="public_fraction"):
        PateConfig(public_fraction=1.0)
    with pytest.raises(DPValueError, match="data-dependent"):
        PateConfig(aggregator="lnmax", data_dependent=True)
    with pytest.raises(DPValueError, match="queries"):
        PateConfig(queries=0)
    with pytest.raises(DPValueError, match="noise_scale or target_epsilon"):
        PateConfig(noise_scale=None, target_epsilon=None)
    with pytest.raises(DPValueError, match="queries=10000"):
        run_pate(train_test_split("iris", seed=0), PateConfig(teachers=3, queries=10000, noise_scale=1.0))


def test_registered_learner(split):
    res = run_learner("pate", split, epsilon=5.0, delta=1e-5, seed=0,
                      params={"teachers": 10, "queries": 50, "aggregator": "gnmax"})
    assert res.learner == "pate" and res.epsilon <= 5.0 + 1e-9
    assert {"epoch", "epsilon"} <= set(res.history.columns)
    j = res.to_json_dict()
    assert {"accuracy", "epsilon", "delta", "noise_multiplier", "seconds"} <= set(j)
    with pytest.raises(DPValueError, match="does not take"):
        run_learner("pate", split, params={"rounds": 3})


def test_sweeps_show_the_tradeoffs(split):
    from dpcore.pate.pipeline import epsilon_sweep, teachers_sweep

    cfg = small(noise_scale=None, target_epsilon=5.0, teachers=10, queries=60)
    e = epsilon_sweep(split, cfg, epsilons=[0.5, 50.0])
    assert e.noise_scale.iloc[0] > e.noise_scale.iloc[1]
    assert e.label_accuracy.iloc[1] > e.label_accuracy.iloc[0]
    assert e.teacher_accuracy.nunique() == 1  # the teachers do not depend on the budget
    t = teachers_sweep(split, cfg, teacher_counts=[3, 30])
    assert t.examples_per_teacher.iloc[0] > t.examples_per_teacher.iloc[1]
    assert t.mean_vote_gap.iloc[1] > t.mean_vote_gap.iloc[0]  # more teachers, larger gap


def test_learner_defaults_fit_small_datasets():
    res = run_learner("pate", "iris", epsilon=2.0, seed=0)  # 90 private / 22 public rows
    assert res.extras["queries"] <= res.extras["split_sizes"]["public (student, unlabelled)"]
    assert res.extras["teachers"] * 6 <= res.extras["split_sizes"]["private (teachers)"]  # 2 rows per class each
    assert res.extras["query_mode"] == "points"  # 22 public rows: too few for clusters of 3 classes
    assert res.epsilon <= 2.0 + 1e-9


def test_default_features_and_query_mode_follow_the_data():
    m = get_learner("pate").defaults(train_test_split("mnist5k", seed=0))
    assert (m["features"], m["query_mode"], m["teacher_model"]) == ("hog", "clusters", "knn")
    d = run_learner("pate", "digits", epsilon=2.0, seed=0).extras
    assert (d["features"], d["query_mode"]) == ("pixels", "clusters")
    with pytest.raises(DPValueError, match="features='hog' needs image data"):
        run_learner("pate", "wine", epsilon=2.0, seed=0, params={"features": "hog"})


def _neighbouring_cluster_votes(split, votes_of):
    """Cluster votes before and after a change confined to one teacher's partition (the worst one private record
    can do: retrain that teacher into anything), here every label of teacher 0's rows shifted by one class."""
    d = pate_split(split, seed=0)
    cfg = small(query_mode="clusters", queries=20)
    queries = pipeline.public_queries(d, cfg, np.random.default_rng(0))
    parts = partition_indices(d.y_private.size, 40, rng=1)
    X2, y2 = d.X_private.copy(), d.y_private.copy()
    y2[parts[0]] = (y2[parts[0]] + 1) % 10
    out = []
    for X, y in ((d.X_private, d.y_private), (X2, y2)):
        teachers = train_teachers(X, y, parts, model="knn", rng=4)
        out.append(votes_of(teacher_predictions(teachers, d.X_public), queries.assignment, queries.index.size))
    return out


def test_a_cluster_query_moves_by_one_vote_when_one_private_record_changes(split):
    """Each teacher casts one vote per cluster, so a change within one teacher's data moves each cluster's histogram
    by at most 1 in two bins (L1 2, L2 sqrt 2): the sensitivity GNMax and LNMax are calibrated to."""
    from dpcore.pate import HISTOGRAM_L1_SENSITIVITY, cluster_votes

    v1, v2 = _neighbouring_cluster_votes(split, lambda p, a, k: cluster_votes(p, a, k, 10))
    assert np.all(v1.sum(axis=1) == 40) and np.all(np.abs(v1 - v2).sum(axis=1) <= HISTOGRAM_L1_SENSITIVITY)
    assert np.abs(v1 - v2).sum() > 0  # the change did move votes: the check is not vacuous

    def every_member_votes(p, a, k):  # a broken aggregator: each teacher votes once per member of the cluster
        return np.stack([vote_histogram(p[:, a == c], 10).sum(axis=0) for c in range(k)])

    w1, w2 = _neighbouring_cluster_votes(split, every_member_votes)
    assert np.abs(w1 - w2).sum(axis=1).max() > HISTOGRAM_L1_SENSITIVITY  # the same check catches it


def test_in_cluster_mode_the_student_learns_every_public_row_with_its_clusters_noisy_label(split, monkeypatch):
    calls = _record_fits(monkeypatch)
    cfg = small(query_mode="clusters", queries=25, teachers=40, teacher_model="knn")
    d = pate_split(split, seed=cfg.seed)
    r = run_pate(d, cfg)
    (X, y), = calls
    assert np.array_equal(X, d.X_public) and y.size == d.y_public.size
    assert set(np.unique(y)) <= set(r.noisy_labels) and r.votes.shape == (25, 10)
    assert r.cluster_sizes.sum() == d.y_public.size
    assert np.array_equal(y, r.noisy_labels[r.cluster_of_public_row])  # each row: its cluster's noisy winner
    assert r.epsilon == pytest.approx(pate_epsilon(aggregator="gnmax", noise_scale=3.0, queries=25, delta=1e-5))


def test_on_mnist_hog_features_and_knn_teachers_label_better_than_pixels_and_logistic_teachers():
    mnist = train_test_split("mnist5k", seed=0)
    kw = dict(teachers=150, queries=40, noise_scale=None, target_epsilon=2.0, query_mode="clusters")
    plain = run_pate(mnist, small(**kw, features="pixels", teacher_model="logreg"))
    tuned = run_pate(mnist, small(**kw, features="hog", teacher_model="knn"))
    assert tuned.epsilon == pytest.approx(plain.epsilon)
    assert tuned.label_accuracy > plain.label_accuracy + 0.1



def test_the_nearest_neighbour_teacher_predicts_what_scikit_learns_1nn_does():
    from sklearn.neighbors import KNeighborsClassifier

    from dpcore.pate.teachers import fit_classifier, teacher_predictions

    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(40, 12)), rng.integers(0, 4, 40)
    queries = rng.normal(size=(3000, 12))
    ours = fit_classifier("knn", X, y, random_state=0)
    reference = KNeighborsClassifier(n_neighbors=1).fit(X, y)
    assert np.array_equal(ours.predict(queries), reference.predict(queries))
    assert np.array_equal(ours.predict(X), y)  # each training row is its own nearest neighbour
    assert teacher_predictions([ours, ours], queries).shape == (2, 3000)


@pytest.mark.parametrize("mode", ["points", "clusters"])
def test_the_label_accuracy_along_the_queries_ends_at_the_share_of_the_students_labels_that_are_right(split, mode):
    # clusters: it scored each query against its cluster's majority (0.95 where the student's labels were 0.874)
    r = run_pate(split, small(query_mode=mode, queries=20, noise_scale=1.0))
    assert r.history.label_accuracy.iloc[-1] == pytest.approx(r.label_accuracy, abs=1e-12)
    if mode == "clusters":
        assert r.label_accuracy < 1.0  # clusters mix classes: the case where the two definitions differed


def test_a_ledger_given_a_pate_result_checks_what_its_epsilon_protects(split):
    """A PateResult says its relation (a record added or removed, as the RunResult of the 'pate' learner does), so a
    ledger given it checks it: a replace-one ledger composes it at (2ε, (1 + e^ε)δ) (group privacy, Dwork & Roth
    2014), where its bare .dp_event, the one the ledger asked for, composed at ε as if it protected a record
    replaced."""
    from dpcore.accounting import Neighbouring, PrivacyLedger, replace_one_guarantee

    r = run_pate(split, small(queries=10, noise_scale=30.0))
    assert r.neighbouring is Neighbouring.ADD_REMOVE
    assert PrivacyLedger(delta=1e-5).spend(r) == pytest.approx(r.epsilon)
    assert PrivacyLedger(delta=1e-3, neighbouring="replace-one").spend(r) == pytest.approx(
        replace_one_guarantee(r.epsilon, r.delta)[0])


@pytest.fixture(scope="module")
def released_run(split):
    """A GNMax run whose data-dependent epsilon is released (the smooth-sensitivity conditions hold at sigma 3)."""
    r = run_pate(split, small(data_dependent=True))
    assert r.released is not None
    return r


def test_the_runs_epsilon_includes_the_release_of_its_data_dependent_epsilon(released_run):
    """Releasing the data-dependent epsilon (Papernot et al. 2018, Theorem 23, GNSS) is a second mechanism on the
    votes: the run's epsilon is the answers' RDP plus the release's at each order, converted once. Recomputed here
    from dp_accounting's curve of the answers and Theorem 23 at every order (at an order, the least bound at it or
    above: the Rényi divergence grows with the order, van Erven & Harremoës 2014, Theorem 3), by dp_accounting's
    conversion and by Mironov 2017, Proposition 3 (looser)."""
    import dp_accounting

    from dpcore.pate.analysis import RDP_ORDERS, pate_event
    from dpcore.pate.confident import gnss_rdp

    r, cfg = released_run, released_run.config
    p = r.released.params
    answers = pate_event(aggregator="gnmax", noise_scale=r.noise_scale, queries=cfg.queries)
    acc = dp_accounting.rdp.RdpAccountant(orders=list(RDP_ORDERS))
    acc.compose(answers)
    release = [gnss_rdp(beta=p.beta, sigma_ss=p.sigma_ss, order=o) if o < 1 / (2 * p.beta) else np.inf
               for o in RDP_ORDERS]
    upwards = np.minimum.accumulate(np.asarray(release)[::-1])[::-1]
    total = np.asarray(acc._rdp) + upwards
    expected, _ = dp_accounting.rdp.compute_epsilon(RDP_ORDERS, total, cfg.delta)
    as_stated, _ = dp_accounting.rdp.compute_epsilon(RDP_ORDERS, np.asarray(acc._rdp) + release, cfg.delta)
    mironov = float(np.min(total + np.log(1 / cfg.delta) / (RDP_ORDERS - 1)))
    assert r.epsilon_answers == pytest.approx(pate_epsilon(aggregator="gnmax", noise_scale=r.noise_scale,
                                                           queries=cfg.queries, delta=cfg.delta), rel=1e-12)
    assert r.epsilon > r.epsilon_answers
    assert r.epsilon == pytest.approx(expected, rel=1e-9) and r.epsilon <= min(mironov, as_stated)
    assert r.delta == cfg.delta  # composed in RDP: no share of delta spent apart


def test_a_ledger_given_a_run_that_released_its_data_dependent_epsilon_composes_the_release_too(released_run, split):
    from dpcore.accounting import PrivacyLedger, event_from_json, event_to_json
    from dpcore.pate.analysis import pate_event

    r = released_run
    ledger = PrivacyLedger(delta=r.delta)
    assert ledger.spend(r.dp_event) == pytest.approx(r.epsilon, rel=1e-12)
    answers = pate_event(aggregator="gnmax", noise_scale=r.noise_scale, queries=r.config.queries)
    twice, answers_twice = PrivacyLedger(delta=r.delta), PrivacyLedger(delta=r.delta)
    for _ in range(2):
        twice.spend(event_from_json(event_to_json(r.dp_event)))  # as a stored run's event comes back
        answers_twice.spend(answers)
    assert twice.epsilon > answers_twice.epsilon
    # the learner's result (what the command line, the sweeps and the session total spend)
    run = run_learner("pate", "digits", epsilon=5.0, delta=1e-5, seed=0, params={"data_dependent": True})
    assert run.extras["epsilon_data_dependent_released"] is not None
    assert PrivacyLedger(delta=1e-5).spend(run) == pytest.approx(run.epsilon, rel=1e-12)
    assert run.extras["epsilon_answers"] < run.epsilon <= 5.0 and run.epsilon == pytest.approx(5.0, abs=1e-3)


def test_calibrated_to_a_target_the_answers_and_the_release_together_spend_at_most_the_target(split):
    """Releasing the data-dependent epsilon is a second mechanism on the votes (Papernot et al. 2018, Theorem 23), so
    a run calibrated to a target leaves room for it: more noise on the answers than they alone would need, and the
    two together within the target, recomputed here with dp_accounting's RDP accountant at the run's noise (and just
    below it, where they would pass the target: the calibration is tight)."""
    import dp_accounting

    from dpcore.pate.analysis import RDP_ORDERS, calibrate_noise_scale, pate_event

    r = run_pate(split, small(noise_scale=None, target_epsilon=4.0, data_dependent=True))
    assert r.released is not None and r.release_withheld is None
    alone = calibrate_noise_scale(aggregator="gnmax", target_epsilon=4.0, delta=r.delta, queries=60)
    assert r.noise_scale > alone and r.epsilon_answers < 4.0

    def total(scale: float) -> float:
        acc = dp_accounting.rdp.RdpAccountant(orders=list(RDP_ORDERS))
        acc.compose(pate_event(aggregator="gnmax", noise_scale=scale, queries=60))
        release = r.released.params.dp_event.curve_at(RDP_ORDERS)
        return dp_accounting.rdp.compute_epsilon(RDP_ORDERS, np.asarray(acc._rdp) + release, r.delta)[0]

    assert r.epsilon == pytest.approx(total(r.noise_scale), rel=1e-9) and r.epsilon <= 4.0
    assert total(r.noise_scale * 0.99) > 4.0


def test_a_target_below_the_releases_own_cost_withholds_the_release_and_gives_the_answers_all_of_it(split):
    from dpcore.pate.analysis import calibrate_noise_scale, pate_event
    from dpcore.pate.confident import release_parameters

    with pytest.warns(UserWarning, match="not released: releasing it alone would cost epsilon = 0.518"):
        r = run_pate(split, small(noise_scale=None, target_epsilon=0.3, data_dependent=True))
    alone = calibrate_noise_scale(aggregator="gnmax", target_epsilon=0.3, delta=r.delta, queries=60)
    assert r.released is None and r.noise_scale == alone
    assert r.epsilon == r.epsilon_answers <= 0.3 and r.epsilon == pytest.approx(0.3, rel=1e-3)
    assert r.dp_event == pate_event(aggregator="gnmax", noise_scale=alone, queries=60)
    release = release_parameters(r.delta, sigma2=alone, classes=split.n_classes).dp_event
    assert r.release_withheld == pytest.approx(_epsilon_alone(release, r.delta)) and r.release_withheld > 0.3


def _epsilon_alone(event, delta: float) -> float:
    """epsilon of ``event`` alone, by the ledger every run's epsilon goes through."""
    from dpcore.accounting import PrivacyLedger

    return PrivacyLedger(delta=delta).spend(event)


def test_without_the_data_dependent_epsilon_the_runs_guarantee_is_the_answers_alone(split, released_run):
    from dpcore.pate.analysis import pate_event

    r = run_pate(split, small())
    assert r.released is None and r.epsilon_answers == r.epsilon == released_run.epsilon_answers
    assert r.epsilon == pate_epsilon(aggregator="gnmax", noise_scale=3.0, queries=60, delta=r.delta)
    assert r.dp_event == pate_event(aggregator="gnmax", noise_scale=3.0, queries=60)


def test_a_refused_release_adds_nothing_to_the_runs_guarantee(split):
    from dpcore.pate.analysis import pate_event

    # at sigma 1 conditions C5-C6 fail at every order: the data-dependent epsilon is not released
    with pytest.warns(UserWarning, match="data-dependent epsilon is not released"):
        r = run_pate(split, small(noise_scale=1.0, data_dependent=True))
    assert r.released is None and r.epsilon_data_dependent is not None
    assert r.epsilon == r.epsilon_answers == pate_epsilon(aggregator="gnmax", noise_scale=1.0, queries=60,
                                                          delta=r.delta)
    assert r.dp_event == pate_event(aggregator="gnmax", noise_scale=1.0, queries=60)


def test_the_command_line_reports_the_epsilon_of_the_answers_and_the_release(capsys):
    import json

    from dpcore.cli import main

    assert main(["train", "--algorithm", "pate", "--dataset", "digits", "--epsilon", "5", "--data-dependent", "true",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["epsilon_data_dependent_released"] > 0
    assert out["epsilon_answers"] < out["epsilon"] <= 5.0 and out["epsilon"] == pytest.approx(5.0, abs=1e-3)
    assert main(["train", "--algorithm", "pate", "--dataset", "digits", "--epsilon", "5", "--json"]) == 0
    off = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert "epsilon_answers" not in off and off["epsilon"] == pytest.approx(5.0, abs=1e-3) and off["epsilon"] <= 5.0


def test_in_secure_mode_the_teachers_partition_is_drawn_secretly_and_a_seeded_run_keeps_its_own(split):
    """Adding one record changes one teacher's data only over a random partition kept secret (a uniform partition
    with the new record put in a uniformly chosen growing part is a uniform partition of the larger set): drawn from
    a public seed, a record added reshuffles every part. In secure mode the partition is the operating system's, so
    two secure runs of one seed split the teachers' data differently; a seeded run still repeats its own."""
    from dpcore.pate import pipeline

    seen = []
    real = pipeline.partition_indices

    def spy(n, teachers, *, rng=None):
        parts = real(n, teachers, rng=rng)
        seen.append((type(rng).__name__, tuple(p.tolist() for p in parts)))
        return parts

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pipeline, "partition_indices", spy)
        for _ in range(2):
            run_pate(split, small(secure=True))
        for _ in range(2):
            run_pate(split, small())
    (kind1, secure1), (kind2, secure2), (_, seeded1), (_, seeded2) = seen
    assert kind1 == kind2 == "SecureRandom" and secure1 != secure2
    assert seeded1 == seeded2


def test_a_vote_noise_too_small_for_double_precision_refuses_the_release_and_spends_infinity(split):
    """At sigma 1e-300 the smooth-sensitivity conditions cannot be checked (order / sigma^2 overflows): they are not
    shown to hold, so the data-dependent epsilon is not released, and the answers' epsilon is infinity; the run
    stopped with Python's 'float division by zero' instead."""
    with pytest.warns(UserWarning, match="data-dependent epsilon is not released: the smooth-sensitivity conditions"):
        r = run_pate(split, small(noise_scale=1e-300, data_dependent=True))
    assert r.released is None and r.epsilon == float("inf")


def test_a_public_share_that_leaves_a_part_empty_says_which_shares_fit_and_where_to_set_one():
    # a visitor's small file on the PATE page: "public_fraction=0.05 leaves an empty private or public part of 6
    # rows", a Python name and nothing to do about it
    import re

    from dpcore.datasets import as_dataset

    X, y = np.arange(16, dtype=float).reshape(8, 2), np.arange(8) % 2
    small = train_test_split(as_dataset((X, y), bounds=(0.0, 20.0)), seed=0)
    n = small.X_train.shape[0]
    with pytest.raises(DPValueError, match=f"of the {n} training rows leaves 0 public rows") as info:
        pate_split(small, public_fraction=0.05)
    said = str(info.value)
    assert "'Public share of the training part' on the PATE page" in said and "--public-fraction" in said
    lo, hi = map(float, re.search(r"between ([0-9.]+) and ([0-9.]+)", said).groups())
    for share in (lo, hi):  # the shares it names both work
        d = pate_split(small, public_fraction=share)
        assert d.y_public.size >= 1 and d.y_private.size >= 1
