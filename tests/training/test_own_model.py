"""DP-SGD on a user's own nn.Module and per-example loss: per-example gradients, the white-box step, accounting,
the device, and the layers refused by name."""
from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad, vmap
from torch.nn.utils import prune

from dpcore.accounting import dpsgd_epsilon
from dpcore.exceptions import DPValueError
from dpcore.training import GhostClipper, PrivateGradient, TrainConfig, train

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                                 reason="no CUDA device here"))]


class TokensAndFeatures(nn.Module):
    """A user's module: an embedding of a token column, LayerNorm, a 1-D 'image' through Conv2d + GroupNorm."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(7, 3, padding_idx=0)
        self.conv = nn.Conv2d(1, 4, (1, 3), padding=(0, 1))
        self.norm = nn.GroupNorm(2, 4)
        self.ln = nn.LayerNorm(4 * 5 + 3 * 2)
        self.head = nn.Linear(4 * 5 + 3 * 2, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens = x[:, :2].long()
        img = x[:, 2:].reshape(x.shape[0], 1, 1, 5)
        h = torch.tanh(self.norm(self.conv(img))).flatten(1)
        return self.head(self.ln(torch.cat([h, self.embed(tokens).flatten(1)], 1)))


def _data(n=40, seed=0):
    g = np.random.default_rng(seed)
    X = np.concatenate([g.integers(0, 7, size=(n, 2)), g.normal(size=(n, 5))], 1)
    return X, g.integers(0, 3, size=n)


def _model(seed=0):
    torch.manual_seed(seed)
    m = TokensAndFeatures().double()
    with torch.no_grad():  # non-trivial affine parameters, so their gradients are exercised
        for layer in (m.norm, m.ln):
            layer.weight.uniform_(0.5, 1.5)
            layer.bias.uniform_(-0.5, 0.5)
    return m


def _vmap_grads(model, loss, x, y):
    params = {k: v.detach() for k, v in model.named_parameters()}

    def one(p, xi, yi):
        return loss(functional_call(model, p, (xi[None],)), yi[None])[0]

    g = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)
    return torch.cat([g[k].reshape(x.shape[0], -1) for k, _ in model.named_parameters()], 1)


def test_per_example_norms_and_clipped_sum_of_layernorm_groupnorm_embedding_match_vmap():
    model, loss = _model(), nn.CrossEntropyLoss(reduction="none")
    X, y = _data(12)
    x, t = torch.as_tensor(X), torch.as_tensor(y)
    per_example = _vmap_grads(model, loss, x, t)
    clipper = GhostClipper(model, loss=loss)
    _, norms = clipper.loss_and_norms(x, t, task="classification")
    torch.testing.assert_close(norms, per_example.norm(dim=1), rtol=1e-9, atol=1e-12)
    factors = torch.rand(12, dtype=torch.double)
    sums = [torch.zeros_like(p) for p in model.parameters()]
    clipper.accumulate_clipped_sum(factors, sums)
    torch.testing.assert_close(torch.cat([s.flatten() for s in sums]), factors @ per_example, rtol=1e-9,
                               atol=1e-12)


def _one_record_steps(model, loss, C: float, x, t) -> list[torch.Tensor]:
    """The noiseless clipped sum of each record alone (a batch of one per step), as the step releases it."""
    sums: list[torch.Tensor] = []
    step = PrivateGradient(model, GhostClipper(model, loss=loss), task="classification", clip_norm=C,
                           noise_multiplier=0.0, expected_batch_size=1.0, generator=torch.Generator().manual_seed(0),
                           on_step=lambda i, s: sums.append(s.clone()))
    for i in range(len(x)):
        step(x[i:i + 1], t[i:i + 1])
    return sums


def test_one_records_clipped_contribution_is_at_most_c_and_the_noise_has_std_sigma_c():
    C, sigma = 0.3, 2.0
    model, loss = _model(), nn.CrossEntropyLoss(reduction="none")
    X, y = _data(30)
    x, t = torch.as_tensor(X), torch.as_tensor(y)
    raw = _vmap_grads(model, loss, x, t).norm(dim=1)
    assert (raw > C).sum() >= 5  # the bound binds for several records: the check is not vacuous
    contributions = torch.stack(_one_record_steps(model, loss, C, x, t)).norm(dim=1)
    assert float(contributions.max()) <= C * (1 + 1e-9)
    torch.testing.assert_close(contributions, torch.minimum(raw, torch.tensor(C, dtype=raw.dtype)), rtol=1e-5,
                               atol=1e-9)
    # an empty batch releases pure noise N(0, sigma^2 C^2) on every parameter: its std, measured
    sums = []
    noisy = PrivateGradient(model, GhostClipper(model, loss=loss), task="classification", clip_norm=C,
                            noise_multiplier=sigma, expected_batch_size=1.0,
                            generator=torch.Generator().manual_seed(1), on_step=lambda i, s: sums.append(s.clone()))
    for _ in range(200):
        noisy(x[:0], t[:0])
    draws = torch.cat(sums)
    assert draws.numel() > 20_000
    assert abs(float(draws.std()) / (sigma * C) - 1) < 0.02
    assert abs(float(draws.mean())) < 0.02 * sigma * C


class _FrozenEmbeddingDropout(nn.Module):
    """A fine-tuned module: a frozen embedding and first layer, dropout, a trained LayerNorm and head."""

    def __init__(self) -> None:
        super().__init__()
        self.embed, self.body = nn.Embedding(7, 3), nn.Linear(5, 8)
        self.embed.requires_grad_(False)
        self.body.requires_grad_(False)
        self.drop, self.ln, self.head = nn.Dropout(0.3), nn.LayerNorm(8 + 6), nn.Linear(8 + 6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.cat([torch.tanh(self.body(x[:, 2:])), self.embed(x[:, :2].long()).flatten(1)], 1)
        return self.head(self.ln(self.drop(h)))


def test_one_records_clipped_contribution_is_at_most_c_with_frozen_layers_and_dropout_in_training_mode():
    C = 0.05
    torch.manual_seed(0)
    model, loss = _FrozenEmbeddingDropout().double().train(), nn.CrossEntropyLoss(reduction="none")
    X, y = _data(30)
    x, t = torch.as_tensor(X), torch.as_tensor(y)
    sums = _one_record_steps(model, loss, C, x, t)
    contributions = torch.stack(sums).norm(dim=1)
    assert sums[0].numel() == sum(p.numel() for p in model.parameters() if p.requires_grad)  # the trained ones only
    assert float(contributions.max()) <= C * (1 + 1e-9)
    assert int((contributions > C * (1 - 1e-4)).sum()) >= 5  # the bound binds: the check is not vacuous


@pytest.mark.parametrize("device", DEVICES)
def test_train_runs_your_module_on_its_device_and_accounts_as_dpsgd(device):
    X, y = _data(200, seed=3)
    model = _model().float().to(device)
    cfg = TrainConfig(epochs=3, batch_size=20, noise_multiplier=1.1, clip_norm=1.0, learning_rate=0.1)
    res = train(X, y, cfg, model=model, loss=nn.CrossEntropyLoss(reduction="none"))
    assert res.steps == 30
    assert res.epsilon == pytest.approx(dpsgd_epsilon(noise_multiplier=1.1, sample_rate=0.1, steps=30, delta=1e-5),
                                        rel=1e-9)
    assert all(isinstance(v, np.ndarray) for v in res.state.values())  # brought back to the CPU
    assert next(model.parameters()).device.type == device  # trained in place, where it lives
    trained = res.model()
    assert next(trained.parameters()).device.type == "cpu"
    torch.testing.assert_close(trained.head.weight, model.head.weight.detach().cpu())
    assert res.predict(X[:5]).shape == (5,)


def test_a_loss_averaged_over_the_batch_is_refused():
    X, y = _data(40)
    with pytest.raises(DPValueError, match=r"one loss per example.*reduction='none'"):
        train(X, y, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0), model=_model().float(),
              loss=nn.CrossEntropyLoss())



def test_a_loss_of_several_values_per_example_is_refused_with_how_to_sum_them():
    # BCEWithLogitsLoss(reduction='none') on (B, 2) outputs gives (B, 2): the advice was "use reduction='none'",
    # which was already used
    X = np.random.default_rng(0).normal(size=(40, 3)).astype(np.float32)
    target = (X[:, :2] > 0).astype(np.float32)
    cfg = TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0, task="regression")
    with pytest.raises(DPValueError, match=r"got \(2, 2\) \(one row per example, several values in each: add them up, "
                                           r"e\.g\. .*\.sum\(dim=1\)\)"):
        train(X, target, cfg, model=nn.Linear(3, 2), loss=nn.BCEWithLogitsLoss(reduction="none"))
    bce = nn.BCEWithLogitsLoss(reduction="none")
    assert train(X, target, cfg, model=nn.Linear(3, 2), loss=lambda out, t: bce(out, t).sum(dim=1)).steps > 0
    # a column of losses, (B, 1), is one loss per example as it is, summed or not
    torch.manual_seed(0)
    column = train(X, target[:, :1], cfg, model=nn.Linear(3, 1), loss=bce)
    torch.manual_seed(0)
    summed = train(X, target[:, :1], cfg, model=nn.Linear(3, 1), loss=lambda out, t: bce(out, t).sum(dim=1))
    assert all(np.array_equal(column.state[k], summed.state[k]) for k in summed.state)


@pytest.mark.parametrize("model", [nn.Linear(3, 1), nn.Sequential(nn.Linear(3, 1), nn.Flatten(0))],
                         ids=["one logit as a column", "one logit per row"])
def test_a_loss_that_cannot_take_a_classifiers_labels_is_refused_with_the_shapes_and_what_to_write(model):
    # nn.BCEWithLogitsLoss on one logit per row and 0/1 labels: torch's ValueError ("Target size ... must be the same
    # as input size") escaped as a traceback, or its dtype error was said to be the model's ("could not
    # differentiate your model row by row"), though the docstring offers a single logit for two classes
    X = np.random.default_rng(0).normal(size=(40, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    cfg = TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0)
    with pytest.raises(DPValueError, match=r"your loss could not take the model's outputs \(shape \((2, 1|2,)\), "
                                           r"torch.float32\) and the labels \(shape \(2,\), torch.int64\).*class "
                                           r"indices.*binary_cross_entropy_with_logits\(out.reshape\(-1\), y.float"):
        train(X, y, cfg, model=model, loss=nn.BCEWithLogitsLoss(reduction="none"))
    written = train(X, y, cfg, model=model, loss=lambda out, t: F.binary_cross_entropy_with_logits(
        out.reshape(-1), t.float(), reduction="none"))
    assert written.steps > 0


def test_a_classifier_giving_one_logit_per_row_as_a_vector_is_evaluated_and_predicts_its_classes():
    # a module ending in .squeeze(-1) / Flatten(0) for nn.BCEWithLogitsLoss trained, but its history's accuracy was
    # NaN and predict() / predict_proba() raised IndexError (they read out[:, 0]); a regressor's predict too
    X = np.random.default_rng(0).normal(size=(200, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    cfg = TrainConfig(epochs=3, batch_size=50, noise_multiplier=0.5, learning_rate=1.0)
    torch.manual_seed(0)
    result = train(X, y, cfg, model=nn.Sequential(nn.Linear(3, 1), nn.Flatten(0)), loss=lambda out, t:
                   F.binary_cross_entropy_with_logits(out, t.float(), reduction="none"))
    logits = result.predict_output(X)
    assert logits.shape == (200,)
    assert np.array_equal(result.predict(X), (logits > 0).astype(int))
    assert np.allclose(result.predict_proba(X)[:, 1], 1 / (1 + np.exp(-logits)), atol=1e-6)
    assert result.history["accuracy"].iloc[-1] == pytest.approx(float(np.mean(result.predict(X) == y)))
    regression = train(X, X[:, 0], cfg.replace(task="regression"), model=nn.Sequential(nn.Linear(3, 1), nn.Flatten(0)),
                       loss=lambda out, t: (out - t.reshape(-1)) ** 2)
    assert regression.predict(X).shape == (200,)


@pytest.mark.parametrize("layer, advice", [(nn.PReLU(), "Freeze it"),
                                           (nn.InstanceNorm1d(2, affine=True), "use GroupNorm(C, C)")])
def test_a_layer_without_a_per_example_rule_is_refused_by_name_with_the_supported_list(layer, advice):
    model = nn.Sequential(nn.Linear(3, 4), nn.Unflatten(1, (2, 2)) if isinstance(layer, nn.InstanceNorm1d)
                          else nn.Identity(), layer, nn.Flatten(), nn.Linear(4, 2))
    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 2
    with pytest.raises(DPValueError) as err:
        train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=model)
    msg = str(err.value)
    assert f"layer '2' ({type(layer).__name__})" in msg and "mixes" not in msg  # each example is its own
    assert "Linear, Conv2d, LayerNorm, GroupNorm, Embedding" in msg and advice in msg
    layer.requires_grad_(False)  # frozen, it is only applied
    train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=model)


class _Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn, self.head = nn.MultiheadAttention(2, 1, batch_first=True), nn.Linear(4, 2)

    def forward(self, x):
        seq = x.reshape(x.shape[0], 2, 2)
        return self.head(self.attn(seq, seq, seq)[0].flatten(1))


class _Recurrent(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn, self.head = nn.LSTM(1, 3, batch_first=True), nn.Linear(3, 2)

    def forward(self, x):
        return self.head(self.rnn(x.unsqueeze(-1))[0][:, -1])


@pytest.mark.parametrize("make, named, advice", [
    (_Attention, "layer 'attn' (MultiheadAttention)", "four Linear layers (query, key, value, output) around "
                                                      "torch.nn.functional.scaled_dot_product_attention"),
    (_Recurrent, "layer 'rnn' (LSTM)", "a feed-forward model over the sequence")], ids=["attention", "lstm"])
def test_attention_and_recurrent_layers_are_refused_with_what_computes_them_here(make, named, advice):
    # they were refused by name with the supported list only, and no way to write them
    X, y = np.random.default_rng(0).normal(size=(20, 4)), np.arange(20) % 2
    with pytest.raises(DPValueError) as err:
        train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=make())
    assert named in str(err.value) and advice in str(err.value)


@pytest.mark.parametrize("make", [lambda: nn.BatchNorm1d(4), lambda: nn.BatchNorm1d(4, affine=False),
                                  lambda: nn.BatchNorm1d(4).requires_grad_(False)],
                         ids=["trainable", "affine=False", "frozen"])
def test_a_batchnorm_is_refused_even_without_trainable_parameters(make):
    # frozen or affine=False it still normalises each example by its batch in training mode (one record moves the
    # others' gradients) and keeps running statistics of the private rows that the released model would carry
    layer = make()
    model = nn.Sequential(nn.Linear(3, 4), layer, nn.Linear(4, 2))
    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 2
    with pytest.raises(DPValueError, match=r"layer '1' \(BatchNorm1d\) normalises every example by the statistics "
                                           r"of its batch.*running means.*use GroupNorm or LayerNorm instead"):
        train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=model)
    assert int(layer.num_batches_tracked) == 0  # refused before any batch went through it
    train(X, y, TrainConfig(epochs=1, batch_size=5, private=False), model=model)  # a non-private baseline may


def test_a_layer_keeping_running_statistics_of_the_rows_is_refused():
    model = nn.Sequential(nn.Linear(3, 4), nn.Unflatten(1, (2, 2)), nn.InstanceNorm1d(2, track_running_stats=True),
                          nn.Flatten(), nn.Linear(4, 2))
    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 2
    with pytest.raises(DPValueError, match=r"layer '2' \(InstanceNorm1d\) keeps running statistics.*"
                                           "track_running_stats=False"):
        train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=model)


def test_train_refuses_labels_that_are_not_class_indices_and_warns_when_delta_exceeds_one_over_n():
    X = np.random.default_rng(0).normal(size=(50, 3))
    y = np.where(X[:, 0] > 0, 8, 5)
    with pytest.raises(DPValueError, match=r"labels are \{5, 8\}.*would read these as 9 classes"):
        train(X, y, TrainConfig(model="linear", epochs=1, batch_size=10, noise_multiplier=1.0))
    with pytest.warns(Warning, match=r"delta=0.1 is larger than 1/n"):
        train(X, (y == 8).astype(int), TrainConfig(model="linear", epochs=1, batch_size=10, noise_multiplier=1.0,
                                                   delta=0.1))
    assert math.isfinite(train(X, y, TrainConfig(model="linear", epochs=1, batch_size=10, noise_multiplier=1.0),
                               n_outputs=9).epsilon)  # with n_outputs the indices are taken as given


def test_weights_tied_between_two_layers_are_refused():
    embed, head = nn.Embedding(5, 4), nn.Linear(4, 5, bias=False)
    head.weight = embed.weight  # a language model's tied input and output embeddings

    class Tied(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed, self.head = embed, head

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(self.embed(x[:, 0].long()))

    X, y = np.arange(20)[:, None] % 5, np.arange(20) % 5
    with pytest.raises(DPValueError, match="weight tying"):
        train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=Tied(), n_outputs=5)


class _TokenEmbedding(nn.Module):
    def __init__(self, **options) -> None:
        super().__init__()
        self.embed, self.head = nn.Embedding(6, 3, **options), nn.Linear(6, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(x.long()).flatten(1))


def _tokens():
    X = np.random.default_rng(0).integers(0, 6, size=(40, 2))
    X[:2] = [[0, 1], [2, 3]]  # the first two rows share no index: the check of two rows' gradients cannot tell
    return X, np.arange(40) % 2


def test_an_embedding_scaling_its_gradient_by_the_batchs_counts_is_refused_by_name():
    # torch divides an index's gradient by how many times the whole batch uses it, so one record's gradient moves
    # with the others: it used to train on an unscaled gradient, silently, where two rows shared no index
    X, y = _tokens()
    with pytest.raises(DPValueError, match=r"layer 'embed': Embedding with scale_grad_by_freq=True .*whole batch.*"
                                           "use scale_grad_by_freq=False"):
        train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=_TokenEmbedding(
            scale_grad_by_freq=True))
    train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=_TokenEmbedding())


def test_a_sparse_embedding_is_refused_with_what_to_use_not_torchs_error():
    X, y = _tokens()  # it raised torch's "add(sparse, dense) is not supported" from inside the step
    with pytest.raises(DPValueError, match=r"layer 'embed': Embedding with sparse=True.*use sparse=False"):
        train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=_TokenEmbedding(sparse=True))


@pytest.mark.parametrize("reparametrize, computed_from", [
    (lambda m: nn.utils.weight_norm(m), "'weight_g', 'weight_v'"),
    (lambda m: nn.utils.spectral_norm(m), "'weight_orig'"),
    (lambda m: prune.l1_unstructured(m, "weight", 0.5), "'weight_orig'")],
    ids=["weight_norm", "spectral_norm", "prune"])
def test_a_layer_whose_weight_is_computed_from_other_parameters_is_refused_naming_the_reparametrization(
        reparametrize, computed_from):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch's note that weight_norm moved
        model = nn.Sequential(reparametrize(nn.Linear(3, 2)))
    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 2
    with pytest.raises(DPValueError) as err:  # it read "Linear layer has a frozen parameter: unfreeze it"
        train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=model)
    msg = str(err.value)
    assert f"layer '0' (Linear) computes its weight from the parameter(s) {computed_from}" in msg
    assert "remove_weight_norm / remove_spectral_norm / prune.remove" in msg and "frozen" not in msg


def test_a_parametrized_layer_is_refused_with_how_to_remove_the_parametrization():
    model = nn.Sequential(nn.utils.parametrizations.weight_norm(nn.Linear(3, 2)))
    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 2
    with pytest.raises(DPValueError, match=r"layer '0' \(ParametrizedLinear\).*its weight is computed by a "
                                           r"parametrization.*remove_parametrizations"):
        train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=model)


def test_a_layer_half_frozen_is_refused_naming_it_and_both_ways_out():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    model[2].weight.requires_grad_(False)
    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 2
    with pytest.raises(DPValueError, match=re.escape(  # it read "Linear layer has a frozen parameter", no name
            "layer '2' (Linear) has its weight frozen and its bias trained: per-example clipping counts every "
            "parameter of a trained layer; freeze the whole layer (model.2.requires_grad_(False)) or unfreeze "
            "model.2.weight")):
        train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=model)
    model[2].requires_grad_(False)
    train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=model)


def test_a_layer_applied_twice_in_one_forward_pass_is_refused():
    class Twice(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = nn.Linear(3, 3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.layer(torch.tanh(self.layer(x)))

    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 3
    with pytest.raises(DPValueError, match="applied more than once"):
        train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=Twice())


class _Unused(nn.Module):
    def __init__(self, functional: bool) -> None:
        super().__init__()
        self.functional = functional
        self.head, self.spare = nn.Linear(3, 2), nn.Linear(3, 2)

    def forward(self, x):
        if self.functional:  # the layer's weights, but not the layer's call
            return F.linear(x, self.head.weight, self.head.bias)
        return self.head(x)


@pytest.mark.parametrize("functional, named", [(False, "'spare' (Linear)"), (True, "'head' (Linear), 'spare'")])
def test_a_trained_layer_the_forward_pass_does_not_call_is_refused_by_name(functional, named):
    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 2
    with pytest.raises(DPValueError, match=rf"layer\(s\) {re.escape(named)}.*did not call them as modules"):
        train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=_Unused(functional))
    model = _Unused(False)
    model.spare.requires_grad_(False)  # frozen, the unused layer is no longer trained
    train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=model)


class _AlsoFunctional(nn.Module):
    """Calls its layer as a module and uses the same weight again through F.linear: the second use's gradient is
    not seen by the layer's hooks."""

    def __init__(self) -> None:
        super().__init__()
        self.body, self.head = nn.Linear(3, 3), nn.Linear(3, 2)

    def forward(self, x):
        h = torch.tanh(self.body(x))
        return self.head(h + F.linear(h, self.body.weight))


class _ChangesInputInPlace(nn.Module):
    """Changes the head's input in place after the head has used it: the input the hooks recorded is no longer the
    one the head saw, so the per-example gradients would be computed from other values."""

    def __init__(self) -> None:
        super().__init__()
        self.body, self.head = nn.Linear(3, 4), nn.Linear(4, 2)

    def forward(self, x):
        h = self.body(x)
        out = self.head(h)
        h.mul_(3.0)
        return out


def _autograd_per_example(model, X, y):
    """Each row's gradient by autograd alone (one backward per row), the independent reference of the check."""
    rows, target = torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y)
    params = [p for p in model.parameters() if p.requires_grad]
    return [torch.cat([g.flatten() for g in torch.autograd.grad(
        F.cross_entropy(model(rows[i:i + 1]), target[i:i + 1]), params)]) for i in range(len(rows))]


class _PartlyWithoutGradients(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body, self.head = nn.Linear(4, 4), nn.Linear(4, 2)

    def forward(self, x):
        with torch.no_grad():
            h = self.body(x)  # trainable, but run without a graph
        return self.head(torch.tanh(h))


def test_a_trained_layer_run_without_gradients_is_refused_by_name_with_both_ways_out():
    # it read "the forward pass ran without gradients", naming no layer, while only one did
    X, y = np.random.default_rng(0).normal(size=(40, 4)), np.arange(40) % 2
    model = _PartlyWithoutGradients()
    with pytest.raises(DPValueError, match=r"^layer\(s\) 'body' \(Linear\) ran without gradients.*freeze them with "
                                           r"requires_grad_\(False\)"):
        train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=model)
    model.body.requires_grad_(False)
    assert math.isfinite(train(X, y, TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0), model=model).epsilon)


def test_a_trained_weight_also_used_outside_its_layers_call_is_refused_before_training():
    X, y = _rows(d=3)
    with pytest.raises(DPValueError, match=r"per-example gradients of your model do not add up to torch's own "
                                           r"gradient \('body\.weight' differs"):
        train(X, y, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0), model=_AlsoFunctional())
    # the reference: the hooks' clipped sum (factor 1) of two rows against autograd's, by hand
    model = _AlsoFunctional()
    clipper = GhostClipper(model)
    rows, target = torch.as_tensor(X[:2], dtype=torch.float32), torch.as_tensor(y[:2])
    clipper.loss_and_norms(rows, target, task="classification")
    got = [torch.zeros_like(p) for p in model.parameters()]
    clipper.accumulate_clipped_sum(torch.ones(2), got)
    clipper.remove()
    want = sum(_autograd_per_example(model, X[:2], y[:2]))
    assert not torch.allclose(torch.cat([g.flatten() for g in got]), want, rtol=1e-3, atol=1e-6)


def test_a_layers_input_changed_in_place_after_the_call_is_refused_before_training():
    X, y = _rows(d=3)
    # the clipper names the layer whose input changed (it reads the input the layer saw, and checks its version)
    with pytest.raises(DPValueError, match=r"the input of layer\(s\) .* was changed in place after the layer read "
                                           r"it.*write that op out of place"):
        train(X, y, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0), model=_ChangesInputInPlace())
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):  # autograd's own verdict, by hand
        _autograd_per_example(_ChangesInputInPlace(), X[:2], y[:2])


def test_a_module_using_each_trained_layer_once_through_its_call_passes_the_gradient_check():
    X, y = _rows(d=3)
    model = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Tanh(), nn.Linear(4, 2))  # hooks, not the dense path
    out = train(X, y, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0), model=model)
    assert math.isfinite(out.epsilon)


def _rows(n=30, d=4):
    X = np.random.default_rng(0).normal(size=(n, d))
    return X, (X[:, 0] > 0).astype(int)


def test_a_module_that_does_not_take_xs_columns_is_refused_before_training():
    X, y = _rows()
    with pytest.raises(DPValueError, match=r"could not run on rows of X \(4 columns\).*first layer must take"):
        train(X, y, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0), model=nn.Sequential(nn.Linear(5, 2)))
    tokens = np.random.default_rng(0).integers(0, 5, size=(30, 4))
    with pytest.raises(DPValueError, match=r"an Embedding takes them as indices after x\.long\(\)"):
        train(tokens, y, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0),
              model=nn.Sequential(nn.Embedding(5, 2), nn.Flatten(), nn.Linear(8, 2)))


def test_a_module_with_fewer_outputs_than_classes_is_refused_and_more_are_accepted():
    X, y = _rows()
    y3 = y + (X[:, 1] > 1)
    with pytest.raises(DPValueError, match=r"outputs of shape \(2,\) per row, but the labels hold 3 classes"):
        train(X, y3, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0), model=nn.Sequential(nn.Linear(4, 2)))
    train(X, y, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0), model=nn.Sequential(nn.Linear(4, 3)))


class _Squeezed(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(x).squeeze(-1)


def test_a_regression_module_whose_output_would_broadcast_across_the_batch_is_refused():
    # (B,) outputs against (B, 1) targets broadcast to (B, B): every example's loss held every row's output, so
    # no example had a gradient of its own; and 2 outputs for 1 target were fit to it silently
    X, y = _rows()
    cfg = TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0, task="regression")
    for model in (_Squeezed(), nn.Sequential(nn.Linear(4, 2))):
        with pytest.raises(DPValueError, match=r"for 1 target\(s\) per row: its last layer needs 1 output"):
            train(X, X[:, 0], cfg, model=model)
    own = lambda out, t: (out - t.reshape(-1)).pow(2)  # noqa: E731  # the user's loss decides the shapes
    assert train(X, X[:, 0], cfg, model=_Squeezed(), loss=own).steps > 0


def test_text_labels_and_image_shaped_rows_are_refused_with_what_to_do():
    X, y = _rows()
    with pytest.raises(DPValueError, match=r"y holds 'yes', 'no' \.\.\..*np\.unique\(y, return_inverse=True\)"):
        train(X, np.where(y == 1, "yes", "no"), TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0))
    with pytest.raises(DPValueError, match=r"got shape \(30, 1, 2, 2\).*nn\.Unflatten\(1, \(1, 2, 2\)\)"):
        train(X.reshape(30, 1, 2, 2), y, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0))



def test_real_valued_or_negative_labels_under_classification_are_refused_with_the_values_and_what_to_do():
    # they were refused as "classification labels must be integers 0..k-1", without the values or the way out
    X, y = _rows()
    cfg = TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0)
    with pytest.raises(DPValueError, match=rf"y holds {X[0, 0]:g}, .*TrainConfig\(task='regression'\)"):
        train(X, X[:, 0], cfg, model=nn.Sequential(nn.Linear(4, 1)))
    with pytest.raises(DPValueError, match=r"y holds -1 \.\.\..*np\.unique\(y, return_inverse=True\)"):
        train(X, 2 * y - 1, cfg)
    assert train(X, X[:, 0], cfg.replace(task="regression"), model=nn.Sequential(nn.Linear(4, 1))).steps > 0

class _BatchCentred(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(x - x.mean(0, keepdim=True))  # every row's output depends on the whole batch


def test_a_module_whose_row_outputs_depend_on_the_rest_of_the_batch_is_refused():
    X, y = _rows()
    with pytest.raises(DPValueError, match=r"output for a row changes with the other rows of its batch.*no "
                                           "per-example clip bound"):
        train(X, y, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0), model=_BatchCentred())
    model = _BatchCentred()  # the check's reference: one row alone against the same row beside another, by hand
    rows = torch.as_tensor(X[:2], dtype=torch.float32)
    with torch.no_grad():
        assert not torch.allclose(model(rows)[:1], model(rows[:1]))
    train(X, y, TrainConfig(epochs=1, batch_size=10, private=False), model=model)  # a non-private baseline may


class _RunningCentred(nn.Module):
    """A user's own standardiser: a running mean of the rows it sees in training, kept as a buffer (as BatchNorm)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("mean", torch.zeros(4))
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.mean.mul_(0.9).add_(0.1 * x.mean(0))
        return self.head(x - self.mean)


class _CentredInTraining(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(x - x.mean(0, keepdim=True) if self.training else x)  # the batch's mean, training only


class _NoisyInTraining(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.head, self.drop = nn.Linear(4, 2), nn.Dropout(0.5)

    def forward(self, x):
        return self.head(self.drop(x + 0.1 * torch.randn_like(x) if self.training else x))  # per row: allowed


def test_a_module_keeping_a_running_statistic_of_the_rows_in_a_buffer_is_refused_and_left_as_it_was():
    # it trained, reported its epsilon and released the buffer, a noiseless mean of the private rows
    X, y = _rows()
    model = _RunningCentred()
    with pytest.raises(DPValueError, match=r"changes its buffer\(s\) 'mean' in a training forward pass.*without "
                                           "noise"):
        train(X + 3.0, y, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0), model=model)
    assert torch.equal(model.mean, torch.zeros(4)) and model.training  # the check put it back
    train(X, y, TrainConfig(epochs=1, batch_size=10, private=False), model=model)  # a non-private baseline may


def test_a_module_mixing_the_batch_only_in_training_mode_is_refused():
    # the evaluation-mode check of two rows passed it, and every step mixed the examples of its batch
    X, y = _rows()
    with pytest.raises(DPValueError, match=r"changes with the other rows of its batch in training mode.*no "
                                           "per-example clip bound"):
        train(X, y, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0), model=_CentredInTraining())


def test_a_module_drawing_its_own_noise_per_row_in_training_is_not_taken_for_one_mixing_the_batch():
    X, y = _rows()
    res = train(X, y, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0), model=_NoisyInTraining())
    assert math.isfinite(res.epsilon)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_a_half_precision_module_is_refused_for_its_precision_not_blamed_on_a_functional_call(dtype):
    # it was refused as "a trained weight is used outside its layer's call": the per-example gradients of two rows,
    # rounded to 8 or 11 significant bits, did not add up to torch's own
    X, y = _rows()
    model = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.Tanh(), nn.Linear(8, 2)).to(dtype)
    with pytest.raises(DPValueError, match=rf"model holds {str(dtype)[6:]} parameters.*Train it in float32 "
                                           r"\(model\.float\(\)\)"):
        train(X, y, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0), model=model)
    assert math.isfinite(train(X, y, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0),
                               model=model.float()).epsilon)


def test_a_dataframe_of_features_trains_without_torchs_read_only_warning():
    import warnings

    import pandas as pd

    X, y = _rows()
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # "The given NumPy array is not writable ..."
        res = train(frame, pd.Series(y), TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0),
                    model=nn.Sequential(nn.Linear(4, 2)), X_test=frame, y_test=y)
    assert res.steps > 0


def test_evaluation_rows_that_do_not_match_the_training_rows_are_refused_before_training():
    X, y = _rows()
    cfg = TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0)
    for X_test, y_test, said in [(X[:5, :3], y[:5], r"X_test has shape \(5, 3\).*X's 4 columns"),
                                 (X[:5], y[:4], r"y_test 4 labels"),
                                 (X[:5], np.where(y[:5] == 1, "yes", "no"), r"y_test must hold class indices 0\.\.1"),
                                 (X[:5], y[:5] + 2, r"y_test must hold class indices 0\.\.1"),
                                 (X[:5], None, "X_test was given without y_test")]:
        with pytest.raises(DPValueError, match=said):
            train(X, y, cfg, X_test=X_test, y_test=y_test)


def test_a_module_of_lazy_layers_is_sized_on_the_rows_and_trained():
    X, y = _rows()
    model = nn.Sequential(nn.LazyLinear(5), nn.Tanh(), nn.LazyLinear(2))
    res = train(X, y, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0), model=model)
    assert res.steps > 0 and model[0].in_features == 4 and type(model[2]) is nn.Linear


@pytest.mark.parametrize("private", [True, False], ids=["private", "non-private"])
@pytest.mark.parametrize("make", [lambda: nn.Sequential(nn.Flatten()), lambda: nn.Linear(3, 2).requires_grad_(False)],
                         ids=["no parameters", "all frozen"])
def test_a_module_with_no_trainable_parameters_is_refused_by_name(make, private):
    # it was an IndexError deep in the private step (a RuntimeError from autograd without privacy)
    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 2
    config = TrainConfig(epochs=1, batch_size=5, **({"noise_multiplier": 1.0} if private else {"private": False}))
    with pytest.raises(DPValueError, match=r"model has no trainable parameters.*requires_grad"):
        train(X, y, config, model=make())


class _ScaledLinear(nn.Module):
    """A learnable parameter held by the model itself, outside any layer."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(3, 2)
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x) * self.scale


def test_a_parameter_held_outside_any_layer_is_refused_naming_it_and_how_to_freeze_only_it():
    # it read "layer '' (_ScaledLinear) ... Freeze it with requires_grad_(False)": freezing the model froze all
    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 2
    config = TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0)
    with pytest.raises(DPValueError, match=r"^your model \(_ScaledLinear\) holds the trainable parameter\(s\) 'scale' "
                                           r"outside any layer.*model\.scale\.requires_grad_\(False\)") as err:
        train(X, y, config, model=_ScaledLinear())
    assert "layer ''" not in str(err.value)
    model = _ScaledLinear()
    model.scale.requires_grad_(False)
    train(X, y, config, model=model)


def test_a_trained_model_answers_a_data_frame_quietly_and_refuses_rows_of_another_width_by_their_shape():
    # a DataFrame's values reach numpy read-only (pandas' copy-on-write), which torch warned about on every predict;
    # rows of another width died in torch's "mat1 and mat2 shapes cannot be multiplied"
    import pandas as pd

    X, y = _rows()
    X = X.astype(np.float32)  # the DataFrame's values are then read as they are, not copied to float32
    res = train(X, y, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0), model=nn.Linear(4, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert res.predict(pd.DataFrame(X[:3])).tolist() == res.predict(X[:3]).tolist()
    with pytest.raises(DPValueError, match=r"could not run on X of shape \(3, 3\).*columns it was trained on"):
        res.predict(X[:3, :3])


class _Conv1dAs2d(nn.Module):
    """What the refusal of a Conv1d says to write: Conv2d with a (1, k) kernel on (B, C, 1, L)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 2, (1, 2))
        self.head = nn.Linear(2 * 2, 2)

    def forward(self, x):
        return self.head(self.conv(x.unsqueeze(1).unsqueeze(2)).squeeze(2).flatten(1))


def test_a_conv1d_is_refused_with_the_conv2d_that_computes_it():
    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 2
    cfg = TrainConfig(epochs=1, batch_size=5, noise_multiplier=1.0)
    conv1d = nn.Sequential(nn.Unflatten(1, (1, 3)), nn.Conv1d(1, 2, 2), nn.Flatten(), nn.Linear(4, 2))
    with pytest.raises(DPValueError, match=r"layer '1' \(Conv1d\).*use Conv2d with a \(1, k\) kernel"):
        train(X, y, cfg, model=conv1d)
    as2d = _Conv1dAs2d()
    with torch.no_grad():
        as2d.conv.weight.copy_(conv1d[1].weight.unsqueeze(2))
        as2d.conv.bias.copy_(conv1d[1].bias)
        as2d.head.load_state_dict(conv1d[3].state_dict())
        rows = torch.as_tensor(X[:4], dtype=torch.float32)
        assert torch.allclose(as2d(rows), conv1d(rows), atol=1e-6)  # the same function
    assert train(X, y, cfg, model=as2d).steps > 0


def test_a_module_class_given_for_an_instance_is_refused_by_its_name():
    # "model must be a torch.nn.Module, got type" did not say that the class itself was given
    from dpcore.exceptions import DPTypeError

    X = np.zeros((20, 3), dtype=np.float32)
    with pytest.raises(DPTypeError, match=r"got the class Linear itself: give an instance, model=Linear\(\.\.\.\)"):
        train(X, np.arange(20) % 2, TrainConfig(epochs=1, batch_size=10, noise_multiplier=1.0), model=nn.Linear)


def test_a_module_trained_again_says_its_weights_carry_the_earlier_runs():
    # a second train() on the same module reported the second run's epsilon (3) for weights that had spent two runs
    # of 3 on the same rows, and a private run after a non-private one reported a finite epsilon for weights that
    # have none; now each later run says so, and keeps it with its result
    from dpcore.exceptions import DPCoreWarning

    X = np.random.default_rng(0).normal(size=(200, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    cfg = TrainConfig(epochs=1, batch_size=20, target_epsilon=3.0)
    net = nn.Linear(3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DPCoreWarning)
        first = train(X, y, cfg, model=net)  # a fresh module: nothing to say
    with pytest.warns(DPCoreWarning, match=r"already trained by train\(\) 1 time\(s\) \(epsilon 3\), and its weights "
                                           r"carry those runs: .*composition.*PrivacyLedger"):
        second = train(X, y, cfg, model=net)
    assert any("already trained" in w for w in second.warnings) and first.epsilon == second.epsilon
    baseline = nn.Linear(3, 2)
    train(X, y, cfg.replace(private=False, target_epsilon=None), model=baseline)
    with pytest.warns(DPCoreWarning, match=r"epsilon inf \(non-private\).*no epsilon holds for the weights"):
        train(X, y, cfg, model=baseline)
