"""The PATE page's plain-language warnings."""
from __future__ import annotations

from types import SimpleNamespace

from dpcore.ui.pate import pate_warnings


def _result(teacher: float, vote: float, student: float = 0.82, labels: float = 0.83):
    return SimpleNamespace(partition_sizes=[72] * 250, config=SimpleNamespace(teachers=250),
                           teacher_mean_accuracy=teacher, ensemble_accuracy=vote, student_accuracy=student,
                           label_accuracy=labels)


def test_weak_teachers_whose_vote_is_good_are_not_called_useless():
    # UCI Adult's defaults: one teacher 0.756, the noiseless vote 0.830, the most common class 0.751
    assert pate_warnings(_result(0.756, 0.830), n_classes=2, chance=0.751) == []


def test_a_vote_barely_above_the_most_common_class_is_said():
    (msg,) = pate_warnings(_result(0.756, 0.760), n_classes=2, chance=0.751)
    assert "barely better" in msg and "0.760 vs 0.751" in msg


def test_a_student_the_noise_left_below_the_most_common_class_is_said():
    # UCI Adult at ε = 0.1: the vote is good, but the noisy labels are worse than a coin
    (msg,) = pate_warnings(_result(0.756, 0.830, student=0.616, labels=0.575), n_classes=2, chance=0.751)
    assert "no better than always answering the most common class" in msg and "0.616 vs 0.751" in msg
    assert "57.5% of the noisy labels" in msg and "Raise ε" in msg


def test_a_vote_chart_going_below_zero_explains_zero_in_its_legend_not_over_the_diamonds():
    import numpy as np

    from dpcore.ui.pate import votes_figure

    result = SimpleNamespace(votes=[np.array([40.0, 10.0])], noisy_votes=[np.array([43.5, -6.2])],
                             noisy_labels=np.array([0]), true_public_labels=np.array([0]),
                             config=SimpleNamespace(query_mode="points"))
    fig = votes_figure(result, 0, ("<=50K", ">50K"))
    names = [t.name for t in fig.data]
    assert "zero votes (below it: noise only, no teacher votes)" in names
    assert not any("noise only" in (a.text or "") for a in fig.layout.annotations)  # no label inside the plot
    fig = votes_figure(SimpleNamespace(**{**vars(result), "noisy_votes": [np.array([43.5, 6.2])]}), 0, ("a", "b"))
    assert not any("zero votes" in (t.name or "") for t in fig.data)  # an axis that stays above 0 needs no line


def test_the_teachers_sweep_says_its_examples_per_teacher_are_a_mean():
    import pandas as pd

    from dpcore.ui.pate import sweep_display

    shown = sweep_display(pd.DataFrame({"teachers": [20], "examples_per_teacher": [53.9]}))
    assert "Examples per teacher (mean)" in shown.columns  # "53.9 examples per teacher" read as a count


def test_the_vote_chart_legend_names_its_series_as_the_table_beside_it_does_not_by_symbols():
    import numpy as np

    from dpcore.ui.pate import vote_table, votes_figure

    result = SimpleNamespace(votes=[np.array([40.0, 10.0])], noisy_votes=[np.array([43.5, 6.2])],
                             noisy_labels=np.array([0]), true_public_labels=np.array([0]),
                             config=SimpleNamespace(query_mode="points"))
    names = [t.name for t in votes_figure(result, 0, ("a", "b")).data]
    assert not [n for n in names if "n_j" in n or "argmax" in n]  # the paper's symbols, undefined on the page
    columns = [c.lower() for c in vote_table(result, 0, ("a", "b")).columns]
    for column in ("teacher votes", "votes + noise"):
        assert column in columns and any(n.startswith(column) for n in names)


def test_the_released_epsilons_noise_is_written_rounded_up_as_every_noise_scale_is():
    """The released data-dependent ε's noise (its std and the smooth-sensitivity σ) read to the nearest figure (0.0434
    as 0.043, σ_ss 2.0043 as 2) where every other noise scale on the pages rounds up (format_noise)."""
    from types import SimpleNamespace

    from dpcore.ui.pate import released_epsilon_text

    params = SimpleNamespace(order=20.0, beta=0.0329, sigma_ss=2.0043, cost=0.21)
    result = SimpleNamespace(epsilon=2.0, released=SimpleNamespace(epsilon=1.2, delta=1e-5, noise_std=0.0434,
                                                                   params=params))
    text = released_epsilon_text(result)
    assert "noise std ± 0.044)" in text and "σ = 2.01)" in text, text


def test_the_students_gap_beside_the_chart_is_the_difference_of_the_accuracies_written_beside_it():
    from dpcore.ui.pate import student_beside_chart

    # 0.8164 against 0.9486 read 0.816 against 0.949 and "13.2 points lower", where a student subtracting finds 13.3
    result = SimpleNamespace(student_accuracy=0.8164, nonprivate_accuracy=0.9486, answered_count=20, epsilon=5.0)
    line = student_beside_chart(result)
    assert "**Student accuracy 0.816**, against 0.949 without privacy (13.3 points lower)" in line


def test_the_data_split_legend_reads_in_the_bars_order_and_may_wrap_without_scrolling():
    # on a 390 px phone the three entries take two rows: in a 140 px figure with a 10 px top margin the legend
    # scrolled, and its opaque box covered the bar's top but for a grey stub at its end; its entries read in reverse
    import numpy as np

    from dpcore.ui.pate import split_figure

    result = SimpleNamespace(split_sizes={"private (teachers)": 1078, "public (student, unlabelled)": 269, "test": 450},
                             partition_sizes=np.array([20, 21]), votes=[np.zeros(10)] * 20, cluster_of_public_row=None,
                             config=SimpleNamespace(queries=20))
    fig = split_figure(result)
    assert [t.name.split(":")[0] for t in fig.data] == ["private (teachers)", "public (student)", "test"]
    assert fig.layout.legend.traceorder == "normal"
    assert fig.layout.legend.maxheight == 1  # the whole figure's height, not half of it
    assert fig.layout.margin.t >= 2 * 24 and fig.layout.legend.yanchor == "bottom"  # two rows above the bar
    assert fig.layout.legend.bgcolor == "rgba(0,0,0,0)"  # an overlap shows the bar through the legend
