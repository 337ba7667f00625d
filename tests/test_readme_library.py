"""The README's "The library" section runs as written: every python block in it is executed, in order, in one
namespace (the examples build on each other), with small data and few steps."""
from __future__ import annotations

import pathlib
import re
import warnings

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _library_blocks() -> list[str]:
    text = README.read_text()
    section = text.split("\n## The library\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_library_section_has_the_three_examples_and_the_reference_block():
    blocks = _library_blocks()
    assert len(blocks) >= 4
    joined = "\n".join(blocks)
    for needed in ('run_learner("dpsgd", df, label=', "model=net, loss=", "audit(net, members, non_members"):
        assert needed in joined
    # the history printed is read from held-out rows: without X_test it is the training rows' accuracy, a statistic
    # of the private rows no epsilon covers
    assert "X_test=" in joined


def test_every_python_block_of_the_library_section_runs(capsys):
    namespace: dict = {"__name__": "readme"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the examples' own warnings (few rows, single class) are not the point
        for block in _library_blocks():
            exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - the README's own code
    assert namespace["mine"].epsilon <= 1.0 + 1e-9
    assert set(namespace["mine"].model.predict(namespace["df"].drop(columns="buys"))) <= {"yes", "no"}
    assert namespace["result"].epsilon <= 2.0 + 1e-9
    assert 0.0 <= namespace["report"].auc <= 1.0
    assert namespace["ledger"].epsilon > 0
    # a pickled run predicts as before and a pickled ledger goes on spending it
    assert namespace["again"].epsilon == namespace["mine"].epsilon
    assert list(namespace["again"].model.predict(namespace["df"].drop(columns="buys").head(3))) == list(
        namespace["mine"].model.predict(namespace["df"].drop(columns="buys").head(3)))
    assert len(namespace["kept"].events) == 2 and namespace["kept"].epsilon > namespace["mine"].epsilon
    assert capsys.readouterr().out  # the examples print what they show
