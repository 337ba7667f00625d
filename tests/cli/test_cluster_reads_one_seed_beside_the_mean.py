"""``python -m dpcore cluster --seeds N`` reads a clustering against random centres by its mean over the seeds, as the
Clustering page does: a seed's own judgement is said as that seed's, beside the mean."""
from __future__ import annotations

import json

JUDGED = "is no more accurate on the test rows than centres drawn at random"


def _run(cli, algorithm: str):
    out = cli("cluster", "--dataset", "iris", "--algorithm", algorithm, "--epsilon", "1", "--seed", "0", "--seeds", "3",
              "--json")
    assert out.returncode == 0, out.stderr
    return out.stderr, json.loads(out.stdout.strip().splitlines()[-1])


def test_a_seed_no_better_than_random_centres_is_said_as_that_seeds_where_the_mean_is_above_them(cli):
    # DPLloyd on iris at epsilon 1: seed 0 scores 0.694, within random centres' spread, the mean over seeds 0 to 2
    # 0.843, above it. The command warned 'DPLloyd is no more accurate ... than centres drawn at random', unqualified,
    # above its own no_better_than_random_centres_over_seeds: false, where the page says 'DPLloyd (0.843) scores above
    # it. On seed 0 alone, DPLloyd (0.694) is within random centres' spread'
    err, got = _run(cli, "dplloyd")
    assert got["no_better_than_random_centres"] and not got["no_better_than_random_centres_over_seeds"]
    said = [line for line in err.splitlines() if JUDGED in line]
    assert said and all(line.startswith("warning: on seed 0 of 0 to 2 alone, ") for line in said)
    assert f"its mean accuracy, {got['accuracy_mean']:.3f}, is above random centres' spread" in said[0]
    assert [w for w in got["warnings"] if JUDGED in w] == [said[0].removeprefix("warning: ")]


def test_a_mean_no_better_than_random_centres_keeps_the_judgement_as_it_is(cli):
    err, got = _run(cli, "input-perturbation")
    assert got["no_better_than_random_centres_over_seeds"]
    said = [line for line in err.splitlines() if JUDGED in line]
    assert said and not any("alone" in line for line in said)
