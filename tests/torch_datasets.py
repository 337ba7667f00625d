"""Torch datasets written by hand, for tests of what the library takes from a PyTorch user: a Dataset whose items are
(row, label) pairs, as a torchvision dataset gives."""
from __future__ import annotations

import torch
from torch.utils.data import Dataset


class Pairs(Dataset):
    """Item ``i`` is ``(torch.from_numpy(X[i]), int(y[i]))``: a row as a tensor and its label as an int."""

    def __init__(self, X, y):
        self.X, self.y = X, y

    def __len__(self):
        return len(self.X)

    def __getitem__(self, i):
        return torch.from_numpy(self.X[i]), int(self.y[i])
