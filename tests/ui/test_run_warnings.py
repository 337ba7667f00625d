"""A chart's many runs: one warning per thing said, with where on the x axis it was raised."""
from __future__ import annotations

from dpcore.ui.models import _RunWarnings


def test_a_learners_single_class_runs_are_folded_into_its_no_better_than_trivial_warning():
    runs = _RunWarnings("training rows", seeds=2)
    runs.xs = {43, 107, 214}
    worse = "Output perturbation is no more accurate on the test rows than always answering 'benign'. Advice."
    single = ("Output perturbation predicts the single class 'benign' for every test row: its accuracy is that "
              "class's share of the test rows, not skill. Advice.")
    other = "Objective perturbation is no more accurate on the test rows than always answering 'benign'. Advice."
    runs.found = {worse: {43: {0}}, single: {43: {1}, 107: {0}}, other: {43: {0}}}
    said = runs.messages()
    assert len(said) == 2  # not a third listing overlapping runs of the same learner
    folded = next(m for m in said if m.startswith("At training rows = 43, 107 (1 of 2 seeds): Output"))
    assert folded.endswith("In 2 of these runs it predicts the single class 'benign' for every test row.")
    assert any(m.startswith("At training rows = 43 (1 of 2 seeds): Objective") for m in said)


def test_dplloyds_count_of_scaled_records_says_it_is_read_from_the_private_rows_outside_the_guarantee():
    from dpcore.ui.models import dplloyd_run_text

    run = {"rounds": 3, "init": "uniform", "rows_clipped": 7, "n_train": 112}
    text = dplloyd_run_text(run, 1.0)
    assert "7 of 112 training records" in text
    assert "outside the guarantee" in text and "not part of what the run releases" in text
    assert "outside the guarantee" not in dplloyd_run_text({**run, "rows_clipped": 0}, 1.0)
