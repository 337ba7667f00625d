"""Page tests: AppTest paths are resolved from the project root, whatever file calls them.

Every chart a page test renders is also checked for colour-blind readers and narrow screens
(:func:`dpcore.ui.palette.colour_clashes` and :func:`~dpcore.ui.palette.legend_problems`) when the test ends,
so a new chart is held to the palette's rules by the tests that already drive its page.
"""
from __future__ import annotations

import json
import pathlib

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.ui.palette import colour_clashes, legend_problems

ROOT = pathlib.Path(__file__).resolve().parents[2]


def page(path: str, timeout: float = 180) -> AppTest:
    """``AppTest`` for ``path`` relative to the project root (e.g. ``"pages/2_Train_a_network.py"``)."""
    return AppTest.from_file(str(ROOT / path), default_timeout=timeout)


def chart_problems(at: AppTest) -> list[str]:
    """What :mod:`dpcore.ui.palette` finds wrong with each chart (Plotly or Vega-Lite) ``at`` shows now."""
    found = []
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        title = (spec["layout"].get("title") or {}).get("text") or (spec["data"][0].get("name") if spec["data"]
                                                                     else "")
        found += [f"chart {title!r}: {p}" for p in colour_clashes(spec) + legend_problems(spec)]
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        found += [f"chart {spec.get('title') or chart.proto.id!r}: {p}"
                  for p in colour_clashes(spec) + legend_problems(spec)]
    return found


@pytest.fixture
def app_page():
    return page


@pytest.fixture(autouse=True)
def charts_readable_by_everyone():
    """Record every AppTest a page test makes; when the test ends, check the charts each shows last. (Its own
    patch, not the ``monkeypatch`` fixture: a test that asks for that one gets runs of its own, tests/conftest.py.)"""
    made: list[AppTest] = []
    original = AppTest.from_file.__func__

    def from_file(cls, *args, **kwargs):
        made.append(original(cls, *args, **kwargs))
        return made[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(AppTest, "from_file", classmethod(from_file))
        yield
    problems = sorted({p for at in made for p in chart_problems(at)})
    assert not problems, "charts a colour-blind or phone reader cannot read:\n" + "\n".join(problems)
