"""Declared class shares: a classifier that releases class probabilities answers argmax(p / shares) (Elkan 2001;
Saerens et al. 2002), its metrics, confusion matrix and released model follow, and the run itself (its ε, its
dp_accounting event, its noise) is the same as without them."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpcore.datasets import as_dataset, load_csv, parse_class_shares, train_test_split
from dpcore.datasets.shares import EXAMPLE_SHARES, example_rare_class_table
from dpcore.exceptions import DatasetError, DPCoreWarning
from dpcore.learners import run_learner
from dpcore.learners.decision import RULE, balanced_decision
from dpcore.learners.metrics import balanced_accuracy, confusion_matrix, rare_class_recall

SHARES = EXAMPLE_SHARES


def imbalanced_table(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    return example_rare_class_table(n, seed)


def quietly(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return imbalanced_table()


def test_declared_shares_are_read_per_class_in_the_label_order_and_scaled_to_sum_to_one():
    assert parse_class_shares(SHARES, ("fraud", "ok", "review")) == pytest.approx((0.07, 0.88, 0.05))
    assert parse_class_shares("a=0.51, b=0.5", ("a", "b")) == pytest.approx((0.51 / 1.01, 0.5 / 1.01))
    assert parse_class_shares({1: 0.2, 0: 0.8}, ("0", "1")) == pytest.approx((0.8, 0.2))
    assert parse_class_shares("  ", ("a", "b")) == ()


@pytest.mark.parametrize("spec, said", [
    ("fraud=0.07, ok=0.93, review=0", "share of 'review' must be above 0"),
    ("fraud=-0.1, ok=1.05, review=0.05", "share of 'fraud' must be above 0"),
    ("fraud=0.07, ok=0.88, review=0.05, spam=0.01", "'spam' is not a class of the label"),
    ("fraud=0.07, ok=0.93", "no share for the class 'review'"),
    ("fraud=7, ok=88, review=5", "sum to 100, not 1 (percentages? divide each by 100)"),
    ("fraud=0.2, ok=0.2, review=0.2", "sum to 0.6, not 1"),
    ("fraud=a lot, ok=0.88, review=0.05", "'a lot', is not a number"),
    ("fraud 0.07", "cannot read 'fraud 0.07'"),
])
def test_a_bad_declaration_is_refused_naming_the_parameter_and_what_to_do(spec, said):
    with pytest.raises(DatasetError, match="--class-shares") as err:
        parse_class_shares(spec, ("fraud", "ok", "review"), parameter="--class-shares")
    assert said in str(err.value)


def test_shares_go_with_a_classification_label_only(table):
    frame = table.assign(amount=np.arange(len(table), dtype=float))
    with pytest.raises(Exception, match="class_shares describes the classes of a classification label"):
        quietly(load_csv, frame.drop(columns="status"), label_column="amount", task="regression",
                class_shares="a=1")


def test_the_rule_is_numpys_argmax_of_probabilities_divided_by_shares():
    rng = np.random.default_rng(3)
    p = rng.dirichlet([8, 1, 0.6], size=500)
    shares = np.array([0.88, 0.07, 0.05])
    expected = np.array([max(range(3), key=lambda c: row[c] / shares[c]) for row in p])
    assert np.array_equal(balanced_decision(p, shares), expected)
    assert np.array_equal(balanced_decision(p, np.full(3, 1 / 3)), p.argmax(1))  # even shares: plain argmax


@pytest.mark.parametrize("learner, params", [("dpsgd", {"epochs": 3}), ("non-private", {"epochs": 3}),
                                             ("dp-fedavg", {"rounds": 3})])
def test_the_run_is_the_same_with_and_without_shares_only_the_answers_follow_them(table, learner, params):
    plain = quietly(as_dataset, table, "status", bounds="*=-5:5")
    declared = plain.with_class_shares(SHARES)
    runs = [quietly(run_learner, learner, ds, epsilon=1.0 if learner != "non-private" else None, seed=0,
                    params=params) for ds in (plain, declared)]
    a, b = runs
    assert (a.epsilon, a.delta, a.noise_multiplier) == (b.epsilon, b.delta, b.noise_multiplier)
    assert repr(a.event) == repr(b.event)  # the same dp_accounting event
    assert np.array_equal(a.test_outputs.values, b.test_outputs.values)  # the same noise, the same model
    split = train_test_split(declared, seed=0)
    answers = np.argmax(b.test_outputs.values / np.array(declared.class_shares), axis=1)  # independent: numpy
    assert b.extras["decision_rule"] == RULE and "decision_rule" not in a.extras
    assert b.metrics["accuracy"] == pytest.approx(np.mean(answers == split.y_test))
    assert b.metrics["balanced_accuracy"] == pytest.approx(balanced_accuracy(split.y_test, answers))
    assert b.metrics["rare_class_recall"] == pytest.approx(rare_class_recall(split.y_test, answers))
    if "confusion_matrix" in b.extras:
        assert np.array_equal(b.extras["confusion_matrix"], confusion_matrix(split.y_test, answers, 3))
        assert np.array_equal(b.extras["predictions"], answers)
    # the released model predicts new rows by the same rule, in the data's own labels
    assert np.array_equal(b.model.predict(split.X_test), np.array(declared.classes)[answers])
    assert np.array_equal(a.model.predict(split.X_test), np.array(declared.classes)[a.test_outputs.values.argmax(1)])


def test_declared_shares_lift_dpsgds_balanced_accuracy_at_epsilon_1(table):
    """The example table (88 % ok, 7 % fraud, 5 % review): DP-SGD answers 'ok' for every row; by the declared
    shares it finds the rare classes."""
    plain = quietly(as_dataset, table, "status", bounds="*=-5:5")
    before = quietly(run_learner, "dpsgd", plain, epsilon=1.0, seed=0)
    after = quietly(run_learner, "dpsgd", plain.with_class_shares(SHARES), epsilon=1.0, seed=0)
    assert before.metrics["balanced_accuracy"] == pytest.approx(1 / 3)  # the majority class for every row
    assert after.metrics["balanced_accuracy"] > 0.5
    assert after.metrics["rare_class_recall"] > 0.0
    assert "single_class" not in after.extras


def test_a_learner_releasing_scores_keeps_its_answers_and_says_so(table):
    declared = quietly(as_dataset, table, "status", bounds="*=-5:5", class_shares=SHARES)
    with pytest.warns(DPCoreWarning, match="releases scores, not class probabilities"):
        res = run_learner("erm-objective", declared, epsilon=1.0, seed=0)
    assert res.extras["decision_rule"] == "argmax"


def test_shares_change_the_cache_key_of_the_data(table):
    from dpcore.sweep import dataset_fingerprint

    plain = quietly(as_dataset, table, "status", bounds="*=-5:5")
    assert dataset_fingerprint(plain) != dataset_fingerprint(plain.with_class_shares(SHARES))
    assert dataset_fingerprint(plain) == dataset_fingerprint(quietly(as_dataset, table, "status", bounds="*=-5:5"))


def test_the_report_says_the_shares_were_declared_and_used_without_naming_a_class(table):
    from dpcore.decision.report import _data_section, data_shape

    declared = quietly(as_dataset, table, "status", bounds="*=-5:5", class_shares=SHARES)
    html = "".join(_data_section(data_shape(declared)))
    assert "declared by the data&#x27;s owner, not read from the rows, and used: 0.88, 0.07, 0.05" in html
    assert not any(name in html for name in ("fraud", "review", "ok<", "'ok'"))
    assert "class_shares" not in data_shape(quietly(as_dataset, table, "status", bounds="*=-5:5"))


@pytest.mark.parametrize("learner", ["dpsgd", "non-private", "dp-fedavg"])
def test_the_training_history_answers_by_the_shares_as_the_final_test_rows_do(table, learner):
    """The Train page's accuracy-by-epoch chart reads the history: with shares declared its last point is the
    run's accuracy by the shares, not the argmax's (which answered the common class for every row)."""
    declared = quietly(as_dataset, table, "status", bounds="*=-5:5", class_shares=SHARES)
    res = quietly(run_learner, learner, declared, epsilon=None if learner == "non-private" else 1.0, seed=0,
                  params={"rounds": 4} if learner == "dp-fedavg" else {"epochs": 4})
    assert res.history["accuracy"].iloc[-1] == pytest.approx(res.metrics["accuracy"], abs=1e-6)


@pytest.mark.parametrize("learner", ["dpsgd", "non-private"])
def test_the_training_history_ends_at_the_runs_balanced_accuracy_by_the_shares(table, learner):
    """The Train page's tiles read balanced accuracy on an 88/7/5 label, and its history chart must too: the
    history's balanced accuracy per epoch ends where the run's final metric does (scored by numpy's metric)."""
    declared = quietly(as_dataset, table, "status", bounds="*=-5:5", class_shares=SHARES)
    res = quietly(run_learner, learner, declared, epsilon=None if learner == "non-private" else 1.0, seed=0,
                  params={"epochs": 4})
    assert res.history["balanced_accuracy"].iloc[-1] == pytest.approx(res.metrics["balanced_accuracy"], abs=1e-6)
    assert res.history["balanced_accuracy"].between(0, 1).all()


def test_a_sweep_trained_together_keeps_the_shares_rule_in_each_runs_history(table):
    from dpcore.training import train
    from dpcore.training.batched import TogetherRun, train_together
    from dpcore.training.learners import training_problem

    declared = quietly(as_dataset, table, "status", bounds="*=-5:5", class_shares=SHARES)
    split = train_test_split(declared, seed=0)
    pbs = [training_problem(split, None, private=True, epsilon=eps, delta=1e-5, seed=0, params={"epochs": 3})
           for eps in (1.0, 4.0)]
    assert pbs[0].config.class_shares == declared.class_shares
    together = quietly(train_together, [TogetherRun(pb.X_train, pb.y_train, pb.config, pb.X_test, pb.y_test,
                                                    pb.n_outputs) for pb in pbs])
    for pb, res in zip(pbs, together):
        alone = quietly(train, pb.X_train, pb.y_train, pb.config, X_test=pb.X_test, y_test=pb.y_test,
                        n_outputs=pb.n_outputs)
        assert res.history["accuracy"].tolist() == pytest.approx(alone.history["accuracy"].tolist(), abs=1e-6)
        assert res.history["balanced_accuracy"].tolist() == pytest.approx(
            alone.history["balanced_accuracy"].tolist(), abs=1e-6)
        plain = quietly(train, pb.X_train, pb.y_train, pb.config.replace(class_shares=()), X_test=pb.X_test,
                        y_test=pb.y_test, n_outputs=pb.n_outputs)
        assert plain.history["accuracy"].tolist() != alone.history["accuracy"].tolist()  # the rule did apply


def test_label_dp_trained_on_noisy_labels_keeps_its_argmax_and_says_why(table):
    """Randomized response moves every class's share toward 1/k: dividing its model's probabilities by the declared
    shares answered a rare class for nearly every row (accuracy 0.10 at ε 1), so it is judged without them."""
    plain = quietly(as_dataset, table, "status", bounds="*=-5:5")
    declared = plain.with_class_shares(SHARES)
    with pytest.warns(DPCoreWarning, match="labels noised for label DP"):
        res = run_learner("label-dp-rr", declared, epsilon=1.0, seed=0, params={"epochs": 3})
    base = quietly(run_learner, "label-dp-rr", plain, epsilon=1.0, seed=0, params={"epochs": 3})
    assert res.extras["decision_rule"] == "argmax"
    assert res.metrics == base.metrics and res.history.equals(base.history)


def test_with_declared_shares_the_default_sweep_and_advice_try_the_learners_that_answer_by_them(table):
    """The ERM family releases scores and keeps its argmax: as a default beside DP-SGD it could be the advisor's
    answer to an owner who declared the shares to find the rare rows, while finding few of them."""
    from dpcore.decision.advisor import advice_config
    from dpcore.sweep.choices import default_learners, sweepable

    plain = quietly(as_dataset, table, "status", bounds="*=-5:5")
    declared = plain.with_class_shares(SHARES)
    assert advice_config(plain).learners == ("dpsgd", "erm-objective")
    assert advice_config(declared).learners == ("dpsgd",)
    options = sweepable("classification", False, "epsilon")
    assert default_learners(options, "classification", class_shares=True) == ["dpsgd"]
    regression = sweepable("regression", False, "epsilon")  # shares are a classification label's: no change
    assert default_learners(regression, "regression", class_shares=True) == default_learners(regression, "regression")


def test_a_membership_audits_model_accuracy_answers_by_the_runs_rule(table):
    """The loss attack's target answered its pool by the declared shares: its accuracy on the non-members is read the
    same way (numpy's argmax of p / shares here), not by the plain argmax of its probabilities."""
    from dpcore.audit.membership import membership_audit

    declared = quietly(as_dataset, table, "status", bounds="*=-5:5", class_shares=SHARES)
    audit = quietly(membership_audit, "dpsgd", declared, epsilon=1.0, attack="loss", pool_size=600, seed=0,
                    params={"epochs": 3})
    out = ~audit.members
    probs = audit.target.test_outputs.values
    by_shares = np.argmax(probs / np.array(declared.class_shares), axis=1)
    assert audit.target.extras["decision_rule"] == RULE
    assert audit.target_accuracy == pytest.approx(np.mean(by_shares[out] == audit.y_pool[out]))
    assert not np.array_equal(by_shares, probs.argmax(1))  # the rule changed some answers: the check can fail


def test_federated_rounds_record_balanced_accuracy_by_the_shares_and_the_chart_can_draw_it(table):
    """The Federated page's per-round chart reads the tiles' metric: with shares declared each round's balanced
    accuracy by them, its last value the final model's (numpy's balanced accuracy of argmax p / shares)."""
    from dpcore.federated.learners import fedavg_config
    from dpcore.ui.federated import rounds_figures

    declared = quietly(as_dataset, table, "status", bounds="*=-5:5", class_shares=SHARES)
    res = quietly(run_learner, "dp-fedavg", declared, epsilon=1.0, seed=0, params={"rounds": 4})
    split = train_test_split(declared, seed=0)
    answers = np.argmax(res.test_outputs.values / np.array(declared.class_shares), axis=1)
    assert res.history["balanced_accuracy"].iloc[-1] == pytest.approx(balanced_accuracy(split.y_test, answers))
    cfg = fedavg_config(split, "central", epsilon=1.0, delta=1e-5, seed=0, params={"rounds": 4})
    assert cfg.class_shares == declared.class_shares
    acc, _ = rounds_figures(res.history, rounds=4, chance=1 / 3, metric="balanced_accuracy")
    assert list(acc.data[0].y) == res.history["balanced_accuracy"].tolist()
    assert acc.layout.yaxis.title.text.startswith("test balanced accuracy")
