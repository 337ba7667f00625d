"""train() on the forms a PyTorch user holds data in: a Dataset of (row, label) pairs, labels as one column; a
DataLoader is refused with what to give instead (DP-SGD draws its own Poisson batches, Abadi et al. 2016,
Algorithm 1, and the accountant assumes those)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from dpcore.exceptions import DPTypeError, DPValueError
from dpcore.training import TrainConfig, train
from tests.torch_datasets import Pairs

CONFIG = TrainConfig(epochs=1, batch_size=20, noise_multiplier=1.0)


def _rows(n=60):
    g = np.random.default_rng(0)
    X = g.normal(size=(n, 3)).astype(np.float32)
    return X, (X[:, 0] > 0).astype(np.int64)


def _trained_weight(X, y, **kw):
    torch.manual_seed(0)
    net = nn.Linear(3, 2)
    train(X, y, CONFIG, model=net, **kw)
    return net.weight.detach().clone()


def test_a_dataset_of_pairs_trains_as_its_rows_and_labels_do():
    X, y = _rows()
    expected = _trained_weight(X, y)
    assert torch.equal(_trained_weight(TensorDataset(torch.from_numpy(X), torch.from_numpy(y)), None), expected)
    assert torch.equal(_trained_weight(Pairs(X, y), None), expected)
    assert torch.equal(_trained_weight(X, y, X_test=Pairs(X, y), y_test=None), expected)


def test_a_dataloader_is_refused_with_its_dataset_named_as_the_way():
    X, y = _rows()
    loader = DataLoader(TensorDataset(torch.from_numpy(X), torch.from_numpy(y)), batch_size=10)
    with pytest.raises(DPTypeError, match=r"DataLoader.*its own batches.*loader\.dataset.*batch_size"):
        train(loader, None, CONFIG, model=nn.Linear(3, 2))


def test_labels_missing_are_named():
    X, _ = _rows()
    with pytest.raises(DPValueError, match="y is missing"):
        train(X, None, CONFIG, model=nn.Linear(3, 2))


@pytest.mark.parametrize("column", [lambda y: y.reshape(-1, 1), lambda y: torch.from_numpy(y).unsqueeze(1)],
                         ids=["numpy", "torch"])
def test_class_indices_as_one_column_are_the_classes(column):
    # shape (n, 1) was read as one-hot rows of a single class: "classification needs at least 2 classes"
    X, y = _rows()
    assert torch.equal(_trained_weight(X, column(y), X_test=X, y_test=column(y)), _trained_weight(X, y))


def test_a_float64_module_predicts_as_it_trained():
    # its result's predict() fed it float32 rows: "mat1 and mat2 must have the same dtype", after training had worked
    X, y = _rows()
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    res = train(X.astype(np.float64), y, CONFIG, model=net)
    with torch.no_grad():
        expected = net(torch.from_numpy(X.astype(np.float64)))
    assert res.predict_output(X).dtype == np.float64
    assert np.allclose(res.predict_output(X), expected.numpy())
    assert np.array_equal(res.predict(X), expected.argmax(1).numpy())


def test_a_single_logit_for_two_classes_is_read_as_binary_cross_entropy_reads_it():
    # with nn.BCEWithLogitsLoss and one output, the history's accuracy and predict() took the argmax of one column:
    # class 0 for every row, whatever the model learnt
    X, y = _rows(200)
    torch.manual_seed(0)
    net = nn.Linear(3, 1)
    loss = lambda out, target: nn.functional.binary_cross_entropy_with_logits(  # noqa: E731
        out[:, 0], target.float(), reduction="none")
    res = train(X, y, TrainConfig(epochs=3, batch_size=20, noise_multiplier=0.5), model=net, loss=loss)
    with torch.no_grad():
        logit = net(torch.from_numpy(X))[:, 0]
    expected = (logit > 0).long().numpy()
    assert np.array_equal(res.predict(X), expected) and 0 < expected.sum() < len(expected)
    assert res.history["accuracy"].iloc[-1] == pytest.approx((expected == y).mean())
    assert np.allclose(res.predict_proba(X)[:, 1], torch.sigmoid(logit).numpy())


class _Squeezed(nn.Module):
    """A regression module whose output is one value per batch row, shape (B,)."""

    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Linear(3, 1)

    def forward(self, x):
        return self.layer(x).squeeze(-1)


REGRESSION = TrainConfig(epochs=1, batch_size=20, noise_multiplier=1.0, task="regression", learning_rate=0.1)


def test_a_loss_giving_a_column_of_losses_is_one_loss_per_row():
    # nn.MSELoss(reduction="none") on one output per row gives shape (B, 1): it was refused as "several values in
    # each" row, with a sum to write by hand
    X, _ = _rows()
    t = X @ np.array([1.0, -2.0, 0.5], dtype=np.float32)
    torch.manual_seed(0)
    net = nn.Linear(3, 1)
    res = train(X, t, REGRESSION, model=net, loss=nn.MSELoss(reduction="none"))
    assert res.steps > 0 and np.isfinite(res.history["mse"].iloc[-1])


@pytest.mark.filterwarnings("ignore:Using a target size:UserWarning")  # torch's own words for the broadcast
def test_a_loss_whose_rows_mix_by_broadcasting_is_refused_with_the_shapes_named():
    # outputs (B,) against targets (B, 1) broadcast to (B, B): summed per row as the refusal of a (B, k) loss
    # suggested, every example's loss held the other rows' outputs (refused before as a weight used outside its
    # layer, which it was not)
    X, _ = _rows()
    t = X @ np.array([1.0, -2.0, 0.5], dtype=np.float32)
    for loss in (nn.MSELoss(reduction="none"), lambda out, y: nn.functional.mse_loss(out, y, reduction="none").sum(1)):
        with pytest.raises(DPValueError, match=r"your loss for a row changes with the other rows.*\(B,\) against "
                                               r"targets \(B, 1\) broadcast"):
            train(X, t, REGRESSION, model=_Squeezed(), loss=loss)
    with pytest.raises(DPValueError, match=r"shape \(B,\): keep it \(B, 1\), without a \.squeeze\(\)"):
        train(X, t, REGRESSION, model=_Squeezed())
    fixed = train(X, t, REGRESSION, model=_Squeezed(),
                  loss=lambda out, y: nn.functional.mse_loss(out, y.reshape(out.shape), reduction="none"))
    assert fixed.steps > 0


def test_a_module_given_first_is_named_with_the_order_train_takes():
    # train(net, X, y) said "config must be a TrainConfig, got ndarray"
    X, y = _rows()
    with pytest.raises(DPTypeError, match=r"X is a torch module \(Linear\): .*train\(X, y, TrainConfig\(\.\.\.\), "
                                          r"model=net\)"):
        train(nn.Linear(3, 2), X, y)


def test_labels_given_beside_a_test_dataset_are_refused_by_name():
    # X_test=Dataset with y_test=labels was read as rows: "X_test must be numeric, could not convert: ...
    # inhomogeneous shape"
    X, y = _rows()
    with pytest.raises(DPValueError, match=r"X_test is a torch Dataset, which holds the labels too: give y_test=None"):
        train(X, y, CONFIG, model=nn.Linear(3, 2), X_test=Pairs(X, y), y_test=y)
    assert train(X, y, CONFIG, model=nn.Linear(3, 2), X_test=Pairs(X, y)).steps > 0


def test_a_dataset_of_other_items_is_refused_with_what_an_item_holds():
    # a Dataset of dicts ({"x": row, "y": label}, as Hugging Face datasets give) or of triples was refused as "not
    # (row, label) pairs" without saying what its items were
    X, y = _rows()

    class Dicts(torch.utils.data.Dataset):
        def __len__(self):
            return len(X)

        def __getitem__(self, i):
            return {"x": torch.from_numpy(X[i]), "y": int(y[i])}

    class Triples(Dicts):
        def __getitem__(self, i):
            return X[i], y[i], i

    with pytest.raises(DPTypeError, match=r"not \(row, label\) pairs \(one is a dict with keys 'x', 'y'\): give its "
                                          r"rows and labels as tensors or arrays \(X, y\), or a Dataset whose "
                                          r"__getitem__ returns \(row, label\)"):
        train(Dicts(), None, CONFIG, model=nn.Linear(3, 2))
    with pytest.raises(DPTypeError, match=r"\(one is a tuple of 3\)"):
        train(Triples(), None, CONFIG, model=nn.Linear(3, 2))
