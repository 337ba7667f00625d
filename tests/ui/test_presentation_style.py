"""Presentation mode's type: larger for a projector, but a phone that opens the projector's address keeps charts it
can read."""
from __future__ import annotations

import re

from dpcore.ui.present import STYLE


def test_presenting_enlarges_the_type_on_a_wide_screen_only_never_on_a_phone():
    # the root font size scales Streamlit's Plotly theme after the layout: on a 390 px phone the attack's ROC chart
    # stood its false-alarm ticks upright across the axis title
    wide = re.search(r"@media \(min-width: (\d+)px\) \{(.*?)\n\}", STYLE, re.S)
    assert wide is not None and int(wide[1]) > 640  # the app's phone breakpoint is max-width 640 px
    for rule in ("html { font-size", ".xtick text", "stMetricValue", "h1 {"):
        assert rule in wide[2], rule
    outside = STYLE.replace(wide[0], "")
    assert "font-size" not in outside  # nothing grows on a phone
