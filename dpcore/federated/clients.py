"""Simulated clients: disjoint shards of a training set, IID or label-skewed.

References
----------
McMahan, Moore, Ramage, Hampson, Agüera y Arcas. "Communication-Efficient
Learning of Deep Networks from Decentralized Data." AISTATS 2017, Section 3
(the pathological non-IID partition: sort by label, cut into shards, two shards per client).
"""
from __future__ import annotations

import numpy as np

from ..exceptions import DPValueError
from ..rng import as_generator
from ..types import ArrayLike, RngLike
from ..validation import check_int


def partition_clients(
    y: ArrayLike, *, clients: int, non_iid: bool = False, shards_per_client: int = 2, rng: RngLike = None
) -> tuple[np.ndarray, ...]:
    """Give each of ``clients`` simulated clients a disjoint shard of the rows of ``y``.

    Parameters
    ----------
    y : array of int, shape (n,)
        Labels (used only to build label-skewed shards).
    clients : int
        Number of clients, 1 <= clients <= n.
    non_iid : bool
        False: a random, near-equal split (IID). True: McMahan et al.'s
        pathological split: rows sorted by label, cut into
        ``clients * shards_per_client`` contiguous shards, each client gets
        ``shards_per_client`` of them, so it sees only a few classes.
    shards_per_client : int
    rng : int, Generator or None

    Returns
    -------
    tuple of sorted int arrays, pairwise disjoint, covering every row.

    Examples
    --------
    >>> parts = partition_clients([0, 0, 1, 1, 2, 2], clients=3, rng=0)
    >>> sorted(int(i) for p in parts for i in p)
    [0, 1, 2, 3, 4, 5]
    """
    y = np.asarray(y)
    n = y.shape[0]
    if isinstance(clients, (int, np.integer)) and not isinstance(clients, bool) and clients < 1:
        raise DPValueError(f"clients must be >= 1, got {clients}; federated learning needs at least one client")
    clients = check_int(clients, "clients", minimum=1)
    if clients > n:
        raise DPValueError(f"clients={clients} is more than the {n} training examples; every client needs data. "
                           f"Use at most {n} clients.")
    g = as_generator(rng)
    if not non_iid:
        perm = g.permutation(n)
        return tuple(np.sort(p) for p in np.array_split(perm, clients))
    shards_per_client = check_int(shards_per_client, "shards_per_client", minimum=1)
    n_shards = clients * shards_per_client
    if n_shards > n:
        raise DPValueError(f"clients * shards_per_client = {n_shards} shards is more than the {n} examples; "
                           "use fewer clients or fewer shards per client")
    # sort by label, ties in random order, then cut into contiguous shards
    order = np.lexsort((g.random(n), y))
    shards = np.array_split(order, n_shards)
    assign = g.permutation(n_shards).reshape(clients, shards_per_client)
    return tuple(np.sort(np.concatenate([shards[s] for s in row])) for row in assign)


def label_counts(y: ArrayLike, parts: ArrayLike, n_classes: int) -> np.ndarray:
    """Per-client class counts: shape (clients, n_classes)."""
    y = np.asarray(y, dtype=np.int64)
    return np.stack([np.bincount(y[p], minlength=n_classes) for p in parts])
