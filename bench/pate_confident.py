"""Would Confident-GNMax help PATE under a data-independent guarantee? MNIST 5k, validation rows.

Confident-GNMax (Papernot et al. 2018, Algorithm 1) answers a query only when the noisy largest vote count,
``max_j n_j + N(0, sigma_check^2)``, reaches a threshold; the answer is then GNMax with ``sigma_answer``. The
paper's epsilon is data-dependent (it depends on how many queries pass). For a guarantee that does not depend on
the data, this script runs the checks and answers under a Renyi filter (Feldman & Zrnic 2021): at one fixed Renyi
order, every check costs the Gaussian mechanism's RDP (sensitivity 1) and every answer GNMax's (sensitivity
sqrt 2), both composed with dp_accounting's RDP accountant, and the queries stop as soon as one more check plus
answer would exceed the target epsilon. The student learns the rows of the answered clusters only.

It prints, per setting, the student's validation accuracy beside plain GNMax on all clusters at the same
epsilon, with the app's PATE defaults otherwise (HOG, nearest-neighbour teachers, cluster queries).

Usage: python bench/pate_confident.py [--epsilons 1,2] [--splits 3]
"""
from __future__ import annotations

import argparse
import sys
import warnings

import dp_accounting
import numpy as np
import pandas as pd
from dp_accounting.rdp import rdp_privacy_accountant as rdp

sys.path.insert(0, ".")
sys.path.insert(0, "bench")
from erm_regularization import validation_splits  # noqa: E402

from dpcore.pate.analysis import calibrate_noise_scale  # noqa: E402
from dpcore.pate.learners import default_queries, default_teachers  # noqa: E402
from dpcore.pate.pipeline import PateConfig, pate_split, public_queries, with_features  # noqa: E402
from dpcore.pate.teachers import fit_classifier, partition_indices, predict, train_teachers  # noqa: E402

DELTA = 1e-5
#: (threshold as a share of the teachers, sigma_check and sigma_answer as multiples of plain GNMax's sigma, order)
SETTINGS = [(t, c, a, o) for t in (0.6, 0.75) for c, a in ((1.5, 0.7), (2.0, 0.6)) for o in (16.0, 32.0)]


def _accountant(order: float, events) -> rdp.RdpAccountant:
    acc = rdp.RdpAccountant(orders=[order], neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    for e in events:
        acc.compose(e)
    return acc


def confident_gnmax(votes, *, threshold, sigma_check, sigma_answer, epsilon, order, rng) -> tuple[dict, float]:
    """Answered query -> noisy label, and the filter's epsilon, for queries taken in a random (public) order."""
    check = dp_accounting.GaussianDpEvent(sigma_check)  # max vote count: sensitivity 1
    answer = dp_accounting.GaussianDpEvent(sigma_answer / np.sqrt(2.0))  # vote histogram: L2 sensitivity sqrt 2
    spent, answered = [], {}
    for q in rng.permutation(len(votes)):
        if _accountant(order, spent + [check, answer]).get_epsilon(DELTA) > epsilon:
            break  # the filter: stop before a check and its answer could exceed the budget
        spent.append(check)
        if votes[q].max() + rng.normal(0.0, sigma_check) >= threshold:
            spent.append(answer)
            answered[int(q)] = int(np.argmax(votes[q] + rng.normal(0.0, sigma_answer, votes.shape[1])))
    return answered, _accountant(order, spent).get_epsilon(DELTA)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epsilons", default="1,2")
    ap.add_argument("--splits", type=int, default=3)
    a = ap.parse_args()
    rows = []
    for sp in validation_splits("mnist5k", a.splits):
        T, K = default_teachers(sp), default_queries(sp)
        cfg = PateConfig(query_mode="clusters", queries=K, features="hog", teacher_model="knn", seed=sp.seed)
        d = with_features(pate_split(sp, seed=sp.seed), "hog")
        rng = np.random.default_rng(sp.seed)
        teachers = train_teachers(d.X_private, d.y_private, partition_indices(d.y_private.size, T, rng=rng),
                                  model="knn", rng=rng)
        q = public_queries(d, cfg, rng)
        votes = q.votes(teachers, d)

        def student(rows_mask, labels_of_row):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = fit_classifier("logreg", d.X_public[rows_mask], labels_of_row, random_state=0)
            return float(np.mean(predict(m, d.X_test) == d.y_test))

        for eps in (float(e) for e in a.epsilons.split(",")):
            sigma = calibrate_noise_scale(aggregator="gnmax", target_epsilon=eps, delta=DELTA, queries=K)
            labels = np.argmax(votes + rng.normal(0.0, sigma, votes.shape), axis=1)
            rows.append({"epsilon": eps, "setting": "plain GNMax, every cluster", "answered": K,
                         "epsilon_spent": eps, "accuracy": student(np.ones(d.y_public.size, bool),
                                                                   labels[q.assignment])})
            for share, c, s, order in SETTINGS:
                answered, spent = confident_gnmax(votes, threshold=share * T, sigma_check=c * sigma,
                                                  sigma_answer=s * sigma, epsilon=eps, order=order, rng=rng)
                mask = np.isin(q.assignment, list(answered))
                labs = np.array([answered.get(int(c_), -1) for c_ in q.assignment[mask]])
                acc = student(mask, labs) if np.unique(labs).size > 1 else np.nan
                rows.append({"epsilon": eps, "setting": f"confident: threshold {share:g} T, check {c:g} sigma, "
                             f"answer {s:g} sigma, order {order:g}", "answered": len(answered),
                             "epsilon_spent": spent, "accuracy": acc})
        print(f"  split {sp.seed} done ({T} teachers, {K} clusters)", file=sys.stderr, flush=True)
    t = pd.DataFrame(rows).groupby(["epsilon", "setting"], sort=False).mean(numeric_only=True).reset_index()
    pd.set_option("display.width", 200)
    print(t.round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
