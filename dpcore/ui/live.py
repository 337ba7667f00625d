"""How often a live view redraws: often for one visitor, less often while a class follows runs together.

Every visitor following a run builds its own figure and progress text from the run's events, in the server's
one Python process, and every browser then draws them. Twenty visitors each redrawing a chart twice a second
build forty figures a second, holding the interpreter lock the run itself needs, and keep their browsers busy
drawing charts nobody has time to read. (In ``bench/classroom_load.py`` the spacing alone made no clear
difference; most of the lock went to Streamlit's module watcher and garbage collection, switched off in
``.streamlit/config.toml``. The spacing bounds the cost as classes grow.) So the
pause between two redraws grows with the number of visitors following a run on this server
(:func:`dpcore.runtime.serving.watchers`): alone, a chart is redrawn every :data:`CHART_SECONDS`; with n visitors,
every n times that, so the server builds about the same number of figures a second however large the class.
The last event of a run is always drawn.
"""
from __future__ import annotations

import math
import time

from ..runtime.serving import watchers

#: Seconds between two redraws of a live chart for a visitor alone on the server.
CHART_SECONDS = 0.5
#: Seconds between two updates of a progress bar's text for a visitor alone on the server.
BAR_SECONDS = 0.1


def pause(base: float) -> float:
    """Seconds between two redraws: ``base`` for one visitor, ``base`` times the number following runs."""
    return base * max(1, watchers())


class Every:
    """Says when to redraw: at most once per :func:`pause` of ``base`` seconds, and always for the last event.

    Examples
    --------
    >>> due = Every(60.0)
    >>> due(), due(), due(last=True)
    (True, False, True)
    """

    def __init__(self, base: float) -> None:
        self.base = float(base)
        self._last = -math.inf

    def __call__(self, *, last: bool = False) -> bool:
        now = time.monotonic()
        if last or now - self._last >= pause(self.base):
            self._last = now
            return True
        return False
