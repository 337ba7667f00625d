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


def check_epsilon_button(open_page, *, prefix: str, metric: str, mode: tuple[str, str]) -> None:
    """A page whose target ε sits at the top of a form has a button beside it that applies it (the form's own button
    is two screens below ε at 1280x720, in the sidebar or on the stage when presenting), in both layouts: ε's slot
    holds the box ``{prefix}.eps`` and, right under it, the button ``{prefix}.apply``, and pressing it after typing 2
    shows the ``metric`` tile at 2. With ``mode = (radio key, value)`` chosen, ε is not used and the button is gone.
    ``open_page(present)`` returns the page's AppTest, set up but not run."""
    for present in (False, True):
        at = open_page(present)
        if present:
            at.query_params["present"] = "1"
        at.run()
        assert not at.exception, at.exception
        slot = next(iter(at.get("form")[0].children.values()))  # ε's own slot, the form's first child
        keys = [getattr(c, "key", None) for c in slot.children.values()]
        assert [k for k in keys if k] == [f"{prefix}.eps", f"{prefix}.apply"]
        assert keys.index(f"{prefix}.apply") == keys.index(f"{prefix}.eps") + 1  # right under the box: the verdict's
        # few lines below it pushed the button off a 720-pixel screen
        at.number_input(key=f"{prefix}.eps").set_value(2.0)
        at.button(key=f"{prefix}.apply").click().run()
        assert not at.exception, at.exception
        assert next(m.value for m in at.metric if m.label == metric) == "2"
    at.radio(key=mode[0]).set_value(mode[1]).run()
    assert not [b for b in at.button if b.key == f"{prefix}.apply"]


def upload_rare_label(path: str, picker: str, *, rows: int, shift: float, bounds: str) -> AppTest:
    """``path``'s page with a generated CSV uploaded in its dataset picker (key ``picker``): three features around 0
    and an "outcome" label 5 % "yes", whose rows' features are moved by ``shift``; ``bounds`` declared for them."""
    import numpy as np

    rng = np.random.default_rng(5)
    y = (rng.random(rows) < 0.05).astype(int)
    X = rng.normal(size=(rows, 3)) + shift * y[:, None]
    text = "a,b,c,outcome\n" + "".join(f"{r[0]:.3f},{r[1]:.3f},{r[2]:.3f},{'yes' if t else 'no'}\n"
                                       for r, t in zip(X, y))
    at = page(path).run()
    at.selectbox(key=picker).set_value("upload").run()
    at.get("file_uploader")[0].set_value(("ward.csv", text.encode(), "text/csv")).run()
    at.text_area(key=f"{picker}.bounds.your_file").set_value(bounds).run()
    return at


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


def vega_chart(at: AppTest, alt: str) -> tuple[dict, list[dict]]:
    """The Vega-Lite chart ``at`` shows with the text alternative ``alt`` (its key is not in its message): its spec
    (as the browser gets it) and the rows of every dataset behind it (Streamlit moves them out of the spec, as
    Arrow)."""
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    chart = next(c for c in at.get("vega_lite_chart") if c.proto.alt == alt)
    rows = [r for d in chart.proto.datasets for r in convert_arrow_bytes_to_pandas_df(d.data.data).to_dict("records")]
    if chart.proto.data.data:
        rows += convert_arrow_bytes_to_pandas_df(chart.proto.data.data).to_dict("records")
    return json.loads(chart.proto.spec), rows


def panel_titles(spec: dict) -> list[str]:
    """The titles of a stack of panels (a Vega-Lite ``vconcat``), top to bottom."""
    return [p["title"]["text"] if isinstance(p["title"], dict) else p["title"] for p in spec["vconcat"]]


def axis_titles(spec: dict, channel: str = "y") -> list[str]:
    """Every ``channel`` axis title in a Vega-Lite spec, in the order of its views."""
    found, stack = [], [spec]
    while stack:
        node = stack.pop(0)
        if isinstance(node, dict):
            title = (node.get("encoding", {}).get(channel) or {}).get("title")
            if title:
                found.append(title)
            stack += [v for k, v in node.items() if k in ("layer", "vconcat", "hconcat", "concat", "spec")]
        elif isinstance(node, list):
            stack += node
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
