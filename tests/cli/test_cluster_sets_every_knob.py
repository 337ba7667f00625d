"""``python -m dpcore cluster --set KEY=VALUE``: every knob the Clustering page offers under "More settings" (DPLloyd's
start, budget shares, row bound; input perturbation's clipping) reaches the run from the command line too, checked by
the learner's own declaration."""
from __future__ import annotations

import json
import warnings

import numpy as np

from dpcore.datasets.csv_upload import load_csv_unlabelled
from dpcore.learners import run_learner
from dpcore.models.cluster_rows import cluster_rows


def _json(cli, *argv):
    out = cli("cluster", *argv, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_knob_set_on_the_command_line_is_the_runs(cli):
    got = _json(cli, "--dataset", "iris", "--algorithm", "dplloyd", "--seeds", "1", "--set", "init=uniform",
                "--set", "count_fraction=0.3")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same = run_learner("dplloyd", "iris", epsilon=1.0, seed=0,
                           params={"init": "uniform", "count_fraction": 0.3, "neighbouring": "replace-one"})
        plain = run_learner("dplloyd", "iris", epsilon=1.0, seed=0, params={"neighbouring": "replace-one"})
    assert got["intra_cluster_variance"] == same.metrics["intra_cluster_variance"]
    assert got["intra_cluster_variance"] != plain.metrics["intra_cluster_variance"]  # the knob changed the run


def test_a_knob_set_reaches_a_file_clustered_without_a_label(cli, tmp_path):
    rng = np.random.default_rng(0)
    rows = np.vstack([rng.normal(c, 0.5, (100, 2)) for c in (0, 3, 6)])
    path = tmp_path / "rows.csv"
    path.write_text("a,b\n" + "".join(f"{a:.4f},{b:.4f}\n" for a, b in rows))
    got = _json(cli, "--data", str(path), "--algorithm", "dplloyd", "--bounds", "*=-3:9", "--seed", "0",
                "--set", "init=uniform")
    rows_only = load_csv_unlabelled(path.read_text(), bounds="*=-3:9")
    same = cluster_rows(rows_only, "dplloyd", k=3, epsilon=1.0, seed=0,
                        params={"init": "uniform", "neighbouring": "replace-one"})
    assert got["intra_cluster_variance"] == round(same.within_total, 6)


def test_a_knob_the_algorithm_does_not_take_or_a_bad_value_is_refused_by_name(cli):
    for argv, says in [(["--algorithm", "dplloyd", "--set", "nonsense=1"], "does not take parameter(s) nonsense"),
                       (["--algorithm", "lloyd", "--set", "init=grid"], "'lloyd' does not take parameter(s) init"),
                       (["--algorithm", "dplloyd", "--set", "init=foo"], "--set init=foo: init must be one of"),
                       (["--algorithm", "dplloyd", "--set", "k=4"], "give --k 4 instead")]:
        out = cli("cluster", "--dataset", "iris", *argv)
        assert out.returncode == 2 and says in out.stderr and "Traceback" not in out.stderr, out.stderr
