"""audit() on a model you trained: a run's result stands for its model, and a claim the attack refutes is said."""
from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import dpcore
from dpcore.audit import audit
from dpcore.exceptions import DPCoreWarning, DPTypeError, DPValueError


def _randomized_response_scores(epsilon: float, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores of a mechanism that is exactly epsilon-DP (Warner 1965's randomized response): a member's bit is
    kept with probability e^eps / (1 + e^eps), a non-member's flipped to 1 with probability 1 / (1 + e^eps); the
    best test between them has TPR = e^eps FPR, so a claim of eps holds and any smaller one is false."""
    g = np.random.default_rng(seed)
    keep = math.exp(epsilon) / (1.0 + math.exp(epsilon))
    return (g.random(n) < keep).astype(float), (g.random(n) < 1.0 - keep).astype(float)


def test_a_true_claim_stands_and_a_false_one_is_flagged_and_warned():
    members, non_members = _randomized_response_scores(2.0, 5000, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DPCoreWarning)  # a true claim is not warned about
        true = audit(None, members, non_members, epsilon=2.0, delta=0.0, rng=0)
    assert not true.refutes_claim and true.epsilon_lower_bound <= 2.0
    with pytest.warns(DPCoreWarning, match=r"proves epsilon >= 1\.\d+ with 95% confidence, above the claimed "
                                           r"epsilon = 0\.5 \(delta = 1e-05\): the claim is refuted") as said:
        false = audit(None, members, non_members, epsilon=0.5, delta=1e-5, rng=0)
    assert false.refutes_claim and false.epsilon_lower_bound > 0.5
    assert "pure epsilon-DP" not in str(said[0].message)
    with pytest.warns(DPCoreWarning, match=r"read as pure epsilon-DP \(delta=0\): give the delta"):
        audit(None, members, non_members, epsilon=0.5, rng=0)
    assert not audit(None, members, non_members, rng=0).refutes_claim  # no claim (epsilon = inf): nothing refuted


def test_a_run_result_is_audited_through_the_model_it_released():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(200, 3))
    y = (X[:, 0] > 0.5).astype(int)
    members, non_members = (X[:100], y[:100]), (X[100:], y[100:])
    run = dpcore.run_learner("dpsgd", members, bounds=(0, 1), epsilon=1.0, params={"epochs": 2})
    a = audit(run, members, non_members, epsilon=run.epsilon, delta=run.delta, rng=0)
    b = audit(run.model, members, non_members, epsilon=run.epsilon, delta=run.delta, rng=0)
    assert (a.auc, a.epsilon_lower_bound) == (b.auc, b.epsilon_lower_bound)
    answers = dpcore.run_learner("output-perturbation", members, bounds=(0, 1), epsilon=1.0, params={"epochs": 1})
    with pytest.raises(DPValueError, match=r"'output-perturbation' run released no model to audit.*audit\(None"):
        audit(answers, members, non_members)


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_a_train_result_is_audited_through_its_module_by_its_loss(task):
    # a train() result has predict but no classes_: it was scored by the squared error of its predicted class, a
    # 0/1 score that ties most rows, and a weaker attack than the module's own cross-entropy, without a word
    from torch import nn

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 10)).astype(np.float32)
    y = rng.integers(0, 2, 200) if task == "classification" else rng.normal(size=200)
    members, non_members = (X[:100], y[:100]), (X[100:], y[100:])
    net = nn.Sequential(nn.Linear(10, 64), nn.Tanh(), nn.Linear(64, 2 if task == "classification" else 1))
    # 100 epochs: the network fits its 100 random labels whatever its initial weights (drawn from torch's global
    # generator, which the tests before this one have moved): AUC 0.86-1.0 over 8 initialisations, 0.58-0.75 at 30
    config = dpcore.TrainConfig(epochs=100, batch_size=100, private=False, optimizer="adam", learning_rate=0.01,
                                task=task)
    result = dpcore.train(*members, config, model=net)
    through_result = audit(result, members, non_members, rng=0)
    through_module = audit(result.model(), members, non_members, rng=0)
    assert (through_result.auc, through_result.epsilon_lower_bound) == (through_module.auc,
                                                                       through_module.epsilon_lower_bound)
    assert through_result.auc > 0.6  # the memorised random labels are found


def test_a_torch_classifier_is_scored_by_cross_entropy_whatever_the_labels_dtype():
    import torch
    from torch import nn

    from dpcore.audit import per_example_losses

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 2))
    X = np.random.default_rng(0).normal(size=(6, 3)).astype(np.float32)
    y = np.array([0, 1, 1, 0, 1, 0])
    # the reference: torch's own cross-entropy of each row
    reference = nn.functional.cross_entropy(net(torch.from_numpy(X)), torch.from_numpy(y), reduction="none")
    for labels in (y, y.astype(float), y.astype(np.float32)):  # labels read from a DataFrame are often floats
        np.testing.assert_allclose(per_example_losses(net, X, labels), reference.detach().numpy(), rtol=1e-6)
    with pytest.raises(DPValueError, match=r"2 scores per row \(a classifier\).*class indices 0\.\.1; got values "
                                           r"from 0 to 2"):
        per_example_losses(net, X, y * 2)
    with pytest.raises(DPValueError, match="labels must be numbers"):
        per_example_losses(net, X, np.where(y == 1, "yes", "no"))
    with pytest.raises(DPValueError, match=r"could not score these rows \(\(6, 2\)\)"):
        per_example_losses(net, X[:, :2], y)


def test_a_torch_regressor_with_one_value_per_row_is_scored_row_by_row():
    import torch
    from torch import nn

    from dpcore.audit import per_example_losses

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 1), nn.Flatten(0))  # (B, 1) -> (B,): one value per row
    X = np.random.default_rng(1).normal(size=(5, 3)).astype(np.float32)
    t = X[:, 0] * 2.0
    expected = (net(torch.from_numpy(X)).detach().numpy() - t) ** 2
    np.testing.assert_allclose(per_example_losses(net, X, t), expected, rtol=1e-5)


def _overfit_rows(n: int = 120, d: int = 60, seed: int = 0):
    """Random rows with random labels and targets: a model that fits them has memorised its members."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, d))
    return X, np.where(rng.random(n) < 0.5, "yes", "no"), rng.uniform(0, 1, n)


@pytest.mark.parametrize("learner", ["logreg", "erm-objective"])
def test_a_logistic_erm_run_is_audited_by_the_cross_entropy_of_its_margin(learner):
    # DP-ERM's logistic model gives its probabilities, the sigmoid of its margin: each record's loss is
    # log(1 + e^-margin), in the order of the margins (the audit of its run once stopped at "gives no probabilities")
    X, labels, _ = _overfit_rows()
    members, non_members = (X[:60], labels[:60]), (X[60:], labels[60:])
    run = dpcore.run_learner(learner, members, bounds=(0, 1), epsilon=1.0 if learner != "logreg" else None)
    a, b = audit(run, members, non_members, rng=0), audit(run.model, members, non_members, rng=0)
    assert (a.auc, a.epsilon_lower_bound) == (b.auc, b.epsilon_lower_bound)
    if learner == "logreg":  # the non-private model fits its random labels (on the 45 rows run_learner trains on,
        assert a.auc > 0.6   # the other 15 its test rows): its margins give those members away
    s = run.model.estimator.decision_function(run.model._inputs(members[0]))
    margins = np.where(members[1] == run.model.classes[1], s, -s)
    np.testing.assert_allclose(audit_losses(run.model, *members), np.logaddexp(0.0, -margins), rtol=1e-9, atol=1e-12)


def test_a_huber_svm_erm_model_is_audited_by_its_true_class_margin():
    """An SVM gives scores, not probabilities: each record's loss is minus its true class's margin."""
    from dpcore.models.erm import ObjectivePerturbationClassifier

    X, labels, _ = _overfit_rows()
    clf = ObjectivePerturbationClassifier(epsilon=1.0, model="svm", data_norm=8.0, random_state=0).fit(X, labels)
    s = clf.decision_function(X)
    np.testing.assert_allclose(audit_losses(clf, X, labels), -np.where(labels == clf.classes_[1], s, -s))


def audit_losses(model, X, y):
    from dpcore.audit import per_example_losses

    return per_example_losses(model, X, y)


def test_a_regression_run_is_audited_by_its_squared_error_in_the_labels_units():
    X, _, target = _overfit_rows(n=80, d=30)
    members, non_members = (X[:40], 10.0 * target[:40]), (X[40:], 10.0 * target[40:])
    for learner in ("ssp", "functional-mechanism"):
        run = dpcore.run_learner(learner, members, bounds={"*": (0, 1), "label": (0, 10)}, task="regression",
                                 epsilon=1.0)
        np.testing.assert_allclose(audit_losses(run.model, *members), (run.model.predict(members[0]) - members[1]) ** 2)
        assert audit(run, members, non_members, rng=0).n_members == 40


def test_a_clustering_run_is_audited_by_the_distance_to_its_nearest_centre():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(200, 2))
    y = (X[:, 0] > 0.5).astype(int)
    run = dpcore.run_learner("dplloyd", (X[:100], y[:100]), bounds=(0, 1), epsilon=1.0)
    est = run.model.estimator
    Z, C = est.transform_unit(X[:5]), est.cluster_centers_unit_
    expected = ((Z[:, None, :] - C[None, :, :]) ** 2).sum(axis=2).min(axis=1)
    np.testing.assert_allclose(audit_losses(run.model, X[:5], y[:5]), expected, atol=1e-12)
    assert audit(run, (X[:100], y[:100]), (X[100:], y[100:]), rng=0).n_nonmembers == 100


def test_a_classifier_without_probabilities_takes_the_labels_it_was_fitted_on():
    # a fitted DP-ERM classifier on text labels was scored by the squared error of its predicted label: a
    # ValueError from numpy ("could not convert string to float")
    from dpcore.models import PrivateERMClassifier

    X, labels, _ = _overfit_rows(d=4)
    clf = PrivateERMClassifier(epsilon=1.0, data_norm=2.0, random_state=0).fit(X[:60], labels[:60])
    result = audit(clf, (X[:60], labels[:60]), (X[60:], labels[60:]), epsilon=1.0, rng=0)
    assert 0.0 <= result.auc <= 1.0
    with pytest.raises(DPValueError, match=r"labels \['maybe'\] are not among the model's classes"):
        audit(clf, (X[:2], np.array(["maybe", "yes"])), (X[60:], labels[60:]))


def test_a_runs_model_given_class_indices_for_its_named_classes_says_how_to_give_the_names():
    # a Split of your own DataFrame holds the label as class indices, the run's model answers the classes' names:
    # the refusal named both and said nothing of how one becomes the other
    from dpcore.datasets import train_test_split

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(200, 2))
    df = dpcore.as_dataset(X, label=np.where(X[:, 0] > 0.5, "yes", "no"), bounds=(0, 1), categories="label=no|yes")
    split = train_test_split(df, test_size=0.5, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DPCoreWarning)  # one epoch at epsilon 1 may answer one class: not the point
        run = dpcore.run_learner("dpsgd", split, epsilon=1.0, params={"model": "linear", "epochs": 1})
    with pytest.raises(DPValueError, match=re.escape(
            "labels [0, 1] are not among the model's classes ['no', 'yes']: they read as class indices (a Split's or "
            "Dataset's y is one); give the classes themselves, np.asarray(['no', 'yes'])[y]")):
        audit(run, (split.X_train, split.y_train), (split.X_test, split.y_test))
    names = np.asarray(["no", "yes"])
    assert audit(run, (split.X_train, names[split.y_train]), (split.X_test, names[split.y_test])).n_members == 100


@pytest.mark.parametrize(("learner", "words"), [("erm-objective", "one record replaced"),
                                                ("label-dp-rr", "only each record's label")])
def test_a_run_whose_epsilon_protects_other_neighbours_is_audited_against_no_claim_and_says_why(learner, words):
    # its own epsilon was taken as a membership claim: a lower bound above it would have been said to refute a
    # guarantee the run never gave (membership_claim reads the command line's audits against no claim)
    X, labels, _ = _overfit_rows(d=4)
    members, non_members = (X[:60], labels[:60]), (X[60:], labels[60:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = dpcore.run_learner(learner, members, bounds=(0, 1), epsilon=1.0, params={"epochs": 2}
                                 if learner == "label-dp-rr" else None)
    with pytest.raises(DPValueError, match=rf"epsilon=1 cannot be held against a membership attack.*{words}.*"
                                           r"Leave epsilon= out.*audit the model itself \(run\.model\)"):
        audit(run, members, non_members, epsilon=run.epsilon, delta=run.delta)
    result = audit(run, members, non_members, rng=0)
    assert result.epsilon == math.inf and words in result.claim_note and not result.refutes_claim
    assert audit(run.model, members, non_members, epsilon=1.0, rng=0).claim_note == ""  # a claim of one's own
    dpsgd = dpcore.run_learner("dpsgd", members, bounds=(0, 1), epsilon=1.0, params={"epochs": 2})
    assert audit(dpsgd, members, non_members, epsilon=dpsgd.epsilon, delta=dpsgd.delta, rng=0).claim_note == ""


def test_a_train_result_on_shuffled_batches_is_audited_against_no_claim():
    from torch import nn

    X = np.random.default_rng(0).normal(size=(100, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    config = dpcore.TrainConfig(epochs=1, batch_size=20, noise_multiplier=2.0, sampling="shuffle")
    result = dpcore.train(X[:50], y[:50], config, model=nn.Linear(3, 2))
    with pytest.raises(DPValueError, match="one record replaced by another"):
        audit(result, (X[:50], y[:50]), (X[50:], y[50:]), epsilon=result.epsilon, delta=1e-5)
    assert "replaced" in audit(result, (X[:50], y[:50]), (X[50:], y[50:]), rng=0).claim_note


def test_a_torch_model_is_audited_on_data_frames_without_torchs_read_only_warning():
    # a DataFrame's values reach numpy read-only (pandas' copy-on-write): torch warned "The given NumPy array is not
    # writable" at every audit of a module on a DataFrame of float32 columns
    import pandas as pd
    from torch import nn

    X = np.random.default_rng(0).normal(size=(40, 3)).astype(np.float32)
    frame, labels = pd.DataFrame(X), pd.Series((X[:, 0] > 0).astype(int))
    net = nn.Linear(3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = audit(net, (frame[:20], labels[:20]), (frame[20:], labels[20:]), rng=0)
    assert (a.auc, a.epsilon_lower_bound) == (audit(net, (X[:20], labels[:20].to_numpy()),
                                                     (X[20:], labels[20:].to_numpy()), rng=0).auc, 0.0)


def test_run_audit_reads_a_dataframe_s_column_of_text_by_its_declared_categories():
    import pandas as pd

    from dpcore.audit.run import run_audit
    from dpcore.exceptions import PrivacyLeakWarning

    rng = np.random.default_rng(0)
    ward = rng.choice(["Cardiology", "Oncology", "Surgery"], 120)
    frame = pd.DataFrame({"age": rng.integers(20, 80, 120), "ward": ward, "y": (ward == "Oncology").astype(int)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # the 0/1 columns are bounded by their declaration
        audit = run_audit("erm-objective", frame, label="y", bounds="age=0:110", epsilon=1, attack="loss",
                          pool_size=50, categories={"ward": ["Cardiology", "Oncology", "Surgery"], "y": [0, 1]})
    assert audit.result.n_members + audit.result.n_nonmembers == 50


def test_members_and_non_members_may_be_torch_datasets_and_a_loader_is_refused_with_its_dataset_named():
    """A torch user holds the training and held-out records as Datasets: the attack scores them as it scores the
    same (X, y) pairs, and a DataLoader (whose batches the attack does not use) is answered with loader.dataset."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    from dpcore.training import TrainConfig, train
    from tests.torch_datasets import Pairs  # items are (row, label) pairs, as a torchvision dataset gives

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    model = train(X[:150], y[:150], TrainConfig(model="mlp", hidden=32, epochs=5, batch_size=30,
                                                private=False)).model()

    pairs = audit(model, (X[:150], y[:150]), (X[150:], y[150:]), rng=0)
    tensors = audit(model, TensorDataset(torch.from_numpy(X[:150]), torch.from_numpy(y[:150])),
                    TensorDataset(torch.from_numpy(X[150:]), torch.from_numpy(y[150:])), rng=0)
    items = audit(model, Pairs(X[:150], y[:150]), Pairs(X[150:], y[150:]), rng=0)
    assert pairs.auc == tensors.auc == items.auc and pairs.epsilon_lower_bound == items.epsilon_lower_bound
    with pytest.raises(DPTypeError, match=r"members=loader\.dataset"):
        audit(model, DataLoader(Pairs(X[:150], y[:150]), batch_size=10), (X[150:], y[150:]))


def test_a_run_result_audited_without_a_claim_is_held_to_its_own_epsilon_and_delta():
    # audit(result, ...) read the claim as infinite unless epsilon= was repeated, so a model trained at epsilon 1
    # that leaked refuted nothing; a run's result now states its own claim, a non-private one none
    from torch import nn

    X, labels, _ = _overfit_rows(d=4)
    members, non_members = (X[:60], labels[:60]), (X[60:], labels[60:])
    y = (labels == "yes").astype(int)
    config = dpcore.TrainConfig(epochs=1, batch_size=20, target_epsilon=2.0, delta=1e-4)
    trained = dpcore.train(X[:60], y[:60], config, model=nn.Linear(4, 2))
    result = audit(trained, (X[:60], y[:60]), (X[60:], y[60:]), rng=0)
    assert (result.epsilon, result.delta) == (trained.epsilon, trained.delta) and math.isfinite(result.epsilon)
    assert result.claim_note == ""
    run = dpcore.run_learner("dpsgd", members, bounds=(0, 1), epsilon=1.0, delta=1e-5, params={"epochs": 2})
    held = audit(run, members, non_members, rng=0)
    assert (held.epsilon, held.delta) == (run.epsilon, 1e-5)
    assert audit(run, members, non_members, epsilon=0.5, rng=0).epsilon == 0.5  # a claim given is the claim
    # a delta alone: the run's epsilon at that delta where its guarantee implies it, never below the run's own delta
    assert audit(run, members, non_members, delta=1e-3, rng=0).delta == 1e-3
    assert audit(run, members, non_members, delta=0.0, rng=0).delta == 1e-5
    assert audit(run.model, members, non_members, rng=0).epsilon == math.inf  # a model alone claims nothing
    baseline = dpcore.train(X[:60], y[:60], config.replace(private=False, target_epsilon=None), model=nn.Linear(4, 2))
    assert audit(baseline, (X[:60], y[:60]), (X[60:], y[60:]), rng=0).epsilon == math.inf


def test_a_train_result_of_a_one_logit_classifier_is_scored_by_its_cross_entropy_not_the_logits_squared_error():
    # the default loss read one output per row as a regressor's: the squared error of the logit against the 0/1
    # label ranks a confident right answer below a hesitant one, so an overfit classifier's members scored as
    # non-members (AUC well below 0.5) and the audit proved nothing about a model that leaks
    import torch
    import torch.nn.functional as F
    from torch import nn

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 30)).astype(np.float32)
    y = rng.integers(0, 2, 400)
    bce = lambda out, t: F.binary_cross_entropy_with_logits(out.reshape(-1), t.float(), reduction="none")  # noqa: E731
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(30, 256), nn.ReLU(), nn.Linear(256, 1))
    config = dpcore.TrainConfig(private=False, epochs=100, batch_size=50, optimizer="adam", learning_rate=0.01)
    trained = dpcore.train(X[:200], y[:200], config, model=net, loss=bce)
    members, non_members = (X[:200], y[:200]), (X[200:], y[200:])
    by_result = audit(trained, members, non_members, epsilon=1.0, delta=1e-5, rng=0)
    by_its_loss = audit(trained.model(), members, non_members, epsilon=1.0, delta=1e-5, loss=bce, rng=0)
    assert by_result.auc == by_its_loss.auc > 0.8 and by_result.refutes_claim
    with pytest.warns(DPCoreWarning, match=r"one value per row and the labels are 0/1 integers.*pass loss="):
        audit(trained.model(), members, non_members, rng=0)


def test_a_data_frame_given_as_members_is_refused_with_how_to_split_off_its_label():
    # a run trained on a DataFrame with label= was audited on the same DataFrames, and the refusal ("must be a pair
    # (X, y) ... got DataFrame") did not say how to make the pair
    import pandas as pd

    X, labels, _ = _overfit_rows(d=4)
    df = pd.DataFrame(X, columns=list("abcd")).assign(label=labels)
    run = dpcore.run_learner("dpsgd", df.iloc[:60], label="label", bounds=(0, 1), epsilon=1.0, params={"epochs": 1})
    with pytest.raises(DPTypeError, match=r"got DataFrame: split off the label column, members=\(df\.drop\(columns="
                                          r"LABEL\), df\[LABEL\]\)"):
        audit(run, df.iloc[:60], df.iloc[60:])
    rest = df.drop(columns="label")
    assert 0 <= audit(run, (rest[:60], df.label[:60]), (rest[60:], df.label[60:]), rng=0).auc <= 1


@pytest.mark.parametrize("method", ["bonferroni", "split"])
def test_too_few_records_for_any_bound_are_refused_with_how_many_would_do(method):
    # 8 members beside 8 non-members: even a perfect attack's Clopper-Pearson limits (Bonferroni over the thresholds)
    # cannot separate, so the audit could only read 0 whatever the model did; the old code returned that 0 as a result
    with pytest.raises(DPValueError, match=r"with 8 member\(s\) and 8 non-member\(s\), even an attack that told every "
                                           r"member from every non-member would prove no epsilon > 0.*give at least "
                                           r"\d+ of each"):
        audit(None, np.ones(8), np.zeros(8), method=method, rng=0)
    enough = int(re.search(r"at least (\d+) of each", _refusal(method)).group(1))
    assert audit(None, np.ones(enough), np.zeros(enough), method=method, rng=0).epsilon_lower_bound > 0.0


def _refusal(method: str) -> str:
    with pytest.raises(DPValueError) as refused:
        audit(None, [1.0, 2.0], [0.0, 0.5], method=method, rng=0)
    return str(refused.value)


def test_a_confidence_level_is_written_rounded_down_never_as_a_certainty():
    # at confidence 0.999 the refusal read "at 100% confidence", a certainty no Clopper-Pearson bound gives
    with pytest.raises(DPValueError, match=r"at 99\.9% confidence") as refused:
        audit(None, np.ones(8), np.zeros(8), confidence=0.999, rng=0)
    assert "100%" not in str(refused.value)
