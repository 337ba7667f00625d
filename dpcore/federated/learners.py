"""Registers ``dp-fedavg``, ``fedavg-local-dp`` and ``fedavg`` with the shared learner registry.

``params`` (all optional): ``clients``, ``rounds``, ``client_fraction``, ``local_epochs``,
``batch_size``, ``learning_rate``, ``server_learning_rate``, ``model`` ("softmax" | "mlp"),
``hidden``, ``non_iid``, ``shards_per_client``; private variants also ``clip_norm``,
``noise_multiplier`` (without it, sigma is calibrated so the run costs ``epsilon``) and
``accountant``. Epsilon is user-level (a client's whole data is the unit of privacy).
"""
from __future__ import annotations

from ..learners import register
from ..learners.base import LearnerSpec, RunResult, TestOutputs
from .accounting import DP_FEDAVG_NEIGHBOURING, LOCAL_DP_NEIGHBOURING
from .fedavg import FedAvgConfig, train_fedavg_split

_COMMON = ("clients", "rounds", "client_fraction", "local_epochs", "batch_size", "learning_rate",
           "server_learning_rate", "model", "hidden", "non_iid", "shards_per_client")
_PRIVATE = _COMMON + ("clip_norm", "noise_multiplier", "accountant")
_NEIGHBOURING = {"central": DP_FEDAVG_NEIGHBOURING, "local": LOCAL_DP_NEIGHBOURING, "none": None}


def _runner(name: str, mode: str):
    def run(split, *, epsilon, delta, seed, params, on_epoch=None) -> RunResult:
        p = dict(params)
        kw = {k: p[k] for k in p}
        if "non_iid" in kw:
            kw["non_iid"] = bool(kw["non_iid"])
        if mode != "none" and kw.get("noise_multiplier") is None:
            kw["target_epsilon"] = epsilon
        cfg = FedAvgConfig(mode=mode, delta=delta, seed=seed, **kw)
        r = train_fedavg_split(split, cfg, on_epoch=on_epoch)
        extras = {"client_sizes": r.client_sizes, "client_label_counts": r.client_label_counts,
                  "seconds_per_round": r.seconds_per_round}
        return RunResult(name, split.dataset.name, split.task, {"accuracy": r.accuracy}, r.epsilon, r.delta,
                         noise_multiplier=r.noise_multiplier, seconds=r.seconds, history=r.history, extras=extras,
                         event=None if mode == "none" else r.dp_event, neighbouring=_NEIGHBOURING[mode],
                         test_outputs=TestOutputs(r.test_proba, "probability"))

    return run


register(LearnerSpec(
    "dp-fedavg", "DP-FedAvg (server noise, user-level DP)", ("classification",), True, _runner("dp-fedavg", "central"),
    params=_PRIVATE, baseline="fedavg",
    description="Federated averaging with Poisson client sampling, per-client update clipping and Gaussian noise "
                "at the server (McMahan et al. 2018); user-level DP accounted by dp_accounting."))
register(LearnerSpec(
    "fedavg-local-dp", "FedAvg with local DP (client noise)", ("classification",), True,
    _runner("fedavg-local-dp", "local"), params=_PRIVATE, baseline="fedavg",
    description="Each client clips and noises its own update before sending: private even from the server, "
                "at a much larger noise cost."))
register(LearnerSpec(
    "fedavg", "FedAvg (non-private)", ("classification",), False, _runner("fedavg", "none"),
    params=_COMMON, uses_delta=False,
    description="Federated averaging (McMahan et al. 2017) with no clipping and no noise."))
