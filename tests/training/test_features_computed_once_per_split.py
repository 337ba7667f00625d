"""A sweep's runs on one split of a registered dataset share the split and compute its features once; a visitor's
upload is never kept, and every run gets arrays of its own."""
from __future__ import annotations

import numpy as np
import pandas as pd

from dpcore.datasets import load_dataset, train_test_split
from dpcore.datasets.registry import _SPLITS, is_registered
from dpcore.learners import run_learner
from dpcore.training import learners as tl


def test_a_registered_datasets_split_is_one_read_only_object_per_seed():
    a, b = train_test_split("iris", seed=3), train_test_split(load_dataset("iris"), seed=3)
    assert a is b and not a.X_train.flags.writeable
    assert train_test_split("iris", seed=4) is not a
    assert np.array_equal(train_test_split("iris", seed=4).X_train, train_test_split("iris", seed=4).X_train)


def test_an_uploads_split_is_never_kept():
    from dpcore.datasets import as_dataset

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40), "iris": rng.integers(0, 2, 40)})
    ds = as_dataset(df, "iris", task="classification", bounds={"a": (-5, 5), "b": (-5, 5)})
    assert not is_registered(ds)
    s1, s2 = train_test_split(ds, seed=0), train_test_split(ds, seed=0)
    assert s1 is not s2 and np.array_equal(s1.X_train, s2.X_train)
    assert all(v.dataset is not ds for v in _SPLITS.values())


def test_a_reloaded_dataset_is_split_anew_and_the_kept_splits_stay_within_their_bytes():
    from dpcore._lru import BytesLRU

    first = train_test_split("iris", seed=5)
    load_dataset.cache_clear()  # the registry loads iris again: another object, whose splits are its own
    try:
        again = train_test_split("iris", seed=5)
        assert again is not first and again.dataset is load_dataset("iris") and np.array_equal(again.X_train,
                                                                                                  first.X_train)
    finally:
        load_dataset.cache_clear()
    memo = BytesLRU(max_bytes=100, max_items=10)
    for k in range(5):
        memo.put(k, f"value {k}", 40)
    assert len(memo) == 2 and memo.get(4) == "value 4" and memo.get(0) is None  # the least recently used went
    memo.put("huge", "too big", 101)
    assert memo.get("huge") is None


def test_the_runs_of_one_split_compute_its_features_once_and_each_gets_its_own_copy(monkeypatch):
    calls = []
    compute = tl._compute_features
    monkeypatch.setattr(tl, "_compute_features", lambda split, params: calls.append(split) or compute(split, params))
    tl._FEATURES.clear()
    first = run_learner("dpsgd", "digits", epsilon=1.0, seed=7, params={"epochs": 1})
    second = run_learner("dpsgd", "digits", epsilon=2.0, seed=7, params={"epochs": 1})
    assert len(calls) == 1  # the second run of the same split reads the kept features
    split = train_test_split("digits", seed=7)
    X_a, _, _ = tl._features(split, {})
    X_b, _, _ = tl._features(split, {})
    assert X_a is not X_b and X_a.flags.writeable and np.array_equal(X_a, X_b)
    X_a[:] = 0  # a run scaling its rows in place changes nobody else's
    assert not np.array_equal(tl._features(split, {})[0], X_a)
    # the same accuracy as features computed afresh
    tl._FEATURES.clear()
    again = run_learner("dpsgd", "digits", epsilon=2.0, seed=7, params={"epochs": 1})
    assert again.metrics == second.metrics and first.metrics != second.metrics


def test_features_whose_values_were_clipped_warn_in_every_run_and_are_not_kept(monkeypatch):
    import warnings

    from dpcore.runtime.thread_warnings import caught

    split = train_test_split("digits", seed=11)
    tl._FEATURES.clear()

    def clipping(split, params):
        warnings.warn("values outside the bounds were clipped", UserWarning, stacklevel=2)
        return np.zeros((2, 2), np.float32), np.zeros((1, 2), np.float32), None

    monkeypatch.setattr(tl, "_compute_features", clipping)
    for _ in range(2):
        with caught() as seen:
            tl._features(split, {})
        assert [str(w.message) for w in seen] == ["values outside the bounds were clipped"]
    assert not tl._FEATURES


def test_a_sweeps_runs_on_one_split_share_its_features_without_comparing_them_and_a_changed_copy_is_kept_apart():
    from dpcore.sweep.batching import _shared

    split = train_test_split("breast_cancer", seed=2)
    made = [tl.training_problem(split, private=True, epsilon=e, delta=1e-5, seed=2, params={}) for e in (0.5, 1.0)]
    assert tl.copied_from(made[0].X_train) is tl.copied_from(made[1].X_train) is not None
    splits: dict = {}
    first = _shared(made[0], splits, as_made=True)
    second = _shared(made[1], splits, as_made=True)
    assert second.X_train is first.X_train and second.X_test is first.X_test
    changed = tl.training_problem(split, private=True, epsilon=2.0, delta=1e-5, seed=2, params={})
    changed.X_train[0, 0] += 1.0  # a learner that scaled its rows before offering them: compared, and kept apart
    third = _shared(changed, splits)
    assert third.X_train is not first.X_train and third.X_test is first.X_test


def test_a_splits_features_are_its_rows_of_the_whole_datasets_to_the_last_bit_and_only_for_its_own_rows():
    """Scaling by the declared bounds is row by row: the whole dataset is scaled once and each split takes its rows,
    the numbers the split's own rows give. A split whose arrays were replaced (a subset) scales its own."""
    import dataclasses

    from dpcore.datasets.registry import split_rows
    from dpcore.training.preprocess import prepare_features

    for name in ("adult", "breast_cancer", "faces"):
        split = train_test_split(name, seed=6)
        train, test = split_rows(split)
        assert np.array_equal(split.dataset.X[train], split.X_train) and np.array_equal(split.dataset.X[test],
                                                                                           split.X_test)
        X_tr, X_te, _ = tl._compute_features(split, {"features": "pixels"})
        assert X_tr.tobytes() == prepare_features(split.X_train, split.dataset.bounds).tobytes()
        assert X_te.tobytes() == prepare_features(split.X_test, split.dataset.bounds, warn=False).tobytes()
    split = train_test_split("breast_cancer", seed=6)
    half = dataclasses.replace(split, X_train=split.X_train[:100], y_train=split.y_train[:100])
    assert split_rows(half) is None
    X_tr, _, _ = tl._compute_features(half, {})
    assert X_tr.shape[0] == 100 and X_tr.tobytes() == prepare_features(half.X_train, split.dataset.bounds).tobytes()


def test_an_uploads_split_keeps_no_rows_of_it():
    from dpcore.datasets import as_dataset, registry

    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40), "y": rng.integers(0, 2, 40)})
    ds = as_dataset(df, "y", task="classification", bounds={"a": (-5, 5), "b": (-5, 5)})
    split = train_test_split(ds, seed=0)
    assert registry.split_rows(split) is None and id(split.X_train) not in registry._ROWS


def test_a_captured_run_reads_the_kept_features_without_copying_them_and_a_run_alone_gets_its_own():
    """A sweep captures each run's problem only to hand it to a batch, which reads it: copying every run's features
    (260 Adult runs: 3 GB) bought nothing. Captured, the features are read-only views of the kept arrays; trained
    alone, each run's are writeable copies of its own."""
    import pytest

    from dpcore.training.batched import Captured, capturing, capturing_now

    split = train_test_split("breast_cancer", seed=5)
    assert not capturing_now()
    alone = tl.training_problem(split, private=True, epsilon=1.0, delta=1e-5, seed=5, params={})
    kept = tl.copied_from(alone.X_train)
    assert alone.X_train.flags.writeable and not np.shares_memory(alone.X_train, kept)
    with capturing(), pytest.raises(Captured) as got:
        assert capturing_now()
        tl._fit(split, tl._train_labels(split), private=True, epsilon=1.0, delta=1e-5, seed=5, params={})
    X = got.value.problem.X_train
    assert not X.flags.writeable and np.shares_memory(X, kept) and tl.copied_from(X) is kept
    assert tl.copied_from(got.value.problem.X_test) is tl.copied_from(alone.X_test) is not None
    assert not capturing_now()
