"""Per-dataset DP-SGD presets: settings a person gets without tuning.

How they were chosen (and why that is not a leak of the test set): for each
dataset we took the training rows of the seed-0 split only, held out a fifth of
them as a validation set, and ran a small grid (model linear/MLP, pixels or low-frequency
DCT features, sample rate 0.1-1, epochs 10-120, learning rate 0.5-6, clip norm
0.25-6, weight decay, parameter averaging on/off) at
epsilon = 1, delta = 1e-5, two seeds each, keeping the best validation accuracy.
The test rows were never looked at. The grid search itself touched the private
training rows a few dozen times, a cost that a strict deployment would account
for (Papernot & Steinke, Hyperparameter tuning with Rényi DP, ICLR 2022) or
avoid by tuning on public data; the ``default`` presets were not tuned on the
dataset they are applied to.

Lessons that transfer (and match De et al. 2022 and Tramèr & Boneh 2021): on a
few thousand records, large batches (q around 0.25) with a few hundred
steps beat many small noisy steps; a linear model on bound-scaled
pixels beats an MLP at epsilon <= 2 because fewer parameters receive noise; and
an exponential moving average of the iterates (free post-processing) removes
much of the noise; and on 28x28 images a fixed low-frequency DCT (a public,
data-independent transform) cuts the weights from 7850 to 1450 for a gain of
about 3 points of validation accuracy at epsilon 1.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ..validation import check_int


@dataclass(frozen=True)
class Preset:
    """Model and optimiser settings for one dataset.

    ``sample_rate`` is the Poisson rate q; the expected batch size is
    ``round(q n)`` for the n training rows actually used.
    """

    model: str
    sample_rate: float
    epochs: int
    learning_rate: float
    clip_norm: float
    ema: float = 0.9
    hidden: int = 128
    activation: str = "tanh"
    momentum: float = 0.0
    features: str = "pixels"
    dct_size: int = 0
    note: str = ""

    def batch_size(self, n: int) -> int:
        """Expected batch size for ``n`` training rows."""
        n = check_int(n, "n", minimum=1)
        return max(1, min(n, int(round(self.sample_rate * n))))

    def as_dict(self) -> dict:
        return asdict(self)


PRESETS: dict[str, Preset] = {
    "digits": Preset(
        model="linear", sample_rate=0.24, epochs=30, learning_rate=0.5, clip_norm=1.0, ema=0.9,
        note="linear model on bound-scaled pixels, Poisson rate 0.24, 30 epochs, lr 0.5, averaged iterates; "
             "tuned on a validation fifth of the training rows (validation accuracy 0.88 at epsilon 1, 6 seeds)",
    ),
    "mnist5k": Preset(
        model="linear", sample_rate=0.25, epochs=40, learning_rate=1.0, clip_norm=1.0, ema=0.9,
        features="dct", dct_size=12,
        note="linear model on the 12x12 low-frequency DCT of the pixels, Poisson rate 0.25, 40 epochs, lr 1, "
             "averaged iterates; tuned on a validation fifth of the training rows (validation accuracy 0.86 at "
             "epsilon 1)",
    ),
    "default": Preset(
        model="linear", sample_rate=1.0, epochs=30, learning_rate=2.0, clip_norm=1.0, ema=0.9,
        note="untuned default for small tabular sets: full-batch noisy gradient descent with averaging",
    ),
    "default_large": Preset(
        model="linear", sample_rate=0.1, epochs=10, learning_rate=2.0, clip_norm=1.0, ema=0.9,
        note="untuned default for sets above 5000 training rows",
    ),
}


def preset_for(dataset) -> Preset:
    """The preset of a dataset (a registry name or a ``Dataset``), or a generic default.

    Examples
    --------
    >>> preset_for("digits").model
    'linear'
    >>> preset_for("iris") is PRESETS["default"]
    True
    """
    name = dataset if isinstance(dataset, str) else getattr(dataset, "name", "")
    if name in PRESETS:
        return PRESETS[name]
    n = getattr(dataset, "n_samples", 0)
    return PRESETS["default_large"] if n > 6700 else PRESETS["default"]
