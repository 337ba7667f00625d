"""Scan every page of a running app with axe-core (the accessibility engine) in Debian's Chromium.

Usage: python scripts/axe_scan.py http://127.0.0.1:8501 [--page /PATE] [--all-impacts]

For each page (every page of the app by default) it waits until the script has finished and scans; where the page
has a main button (``MAIN_BUTTONS``) it presses it, waits for the run and scans again; then it checks the page on a
390 px phone and, switched to presentation mode in the same session, at 1280 x 720 (key control and headline
chart on the first screen). It prints every violation of
impact "critical" or "serious" (all impacts with --all-impacts): the rule, how many elements and the first few
offending elements, and exits 1 when any critical or serious violation is found. ``tests/test_browser.py`` runs
the same scan.

Pages are scanned by ``--workers`` browsers at once (default 3), one session each, the way several students would
open them: most of a page's scan is waiting (for the page to load, its script to finish, the layout to settle), so
three at once take about half the time of one after another on a 2-core machine.
"""
from __future__ import annotations

import argparse
import pathlib
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # the repository, for dpcore
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # this folder, for screenshot.py
from screenshot import FLAGS, wait_until_idle  # noqa: E402  (the same browser flags and wait as screenshot.py)

from dpcore.ui.navigation import PAGES  # noqa: E402

BLOCKING = ("critical", "serious")
#: The button that starts each page's main run (pages without one are scanned once).
MAIN_BUTTONS = {"/Train_a_network": "Train", "/Tradeoff_explorer": "Run", "/Noisy_images": "Train",
                "/PATE": "Run PATE", "/Federated_learning": "Train", "/Attack_the_model": "Train and attack",
                "/Papers_reproduced": "Run it live"}


def url_path(path: str) -> str:
    """``pages/2_Train_a_network.py`` → ``/Train_a_network``; the home page → ``/``."""
    if path == PAGES[0].path:
        return "/"
    return "/" + path.split("/")[-1].removesuffix(".py").split("_", 1)[1]


def violations(page, *, impacts=BLOCKING) -> list[dict]:
    """axe-core's violations on the current page whose impact is one of ``impacts``."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [v for v in found if v.get("impact") in impacts]


#: Elements of the main area that stick out past the right edge of the viewport (scrollable tables, charts and
#: code blocks excepted: they scroll or shrink inside their own frame).
_OVERFLOW_JS = """() => {
  const width = window.innerWidth, out = [];
  for (const el of document.querySelectorAll('[data-testid="stMain"] *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= width + 1) continue;
    if (el.closest('[data-testid="stDataFrame"], [data-testid="stTable"], .js-plotly-plot, pre')) continue;
    out.push((el.getAttribute('data-testid') || el.tagName) + ' ends at ' + Math.round(r.right) + ' px');
  }
  return out;
}"""
PHONE = {"width": 390, "height": 844}


def phone_overflow(page, *, settle_ms: int = 500, tries: int = 6) -> list[dict]:
    """At a phone's 390 x 844: the elements wider than the screen, as one axe-style "serious" violation.

    An element counts once it still sticks out after the layout has had time to settle: checked ``settle_ms`` after
    the resize and again every ``settle_ms`` up to ``tries`` times, what is left in every check is reported. On a
    loaded machine (the suite's workers beside the browsers) one check 500 ms after the resize once caught the home
    page's expander still at its desktop width (835 px), and the same page passed alone."""
    page.set_viewport_size(PHONE)
    found = None
    for _ in range(tries):
        page.wait_for_timeout(settle_ms)
        now = page.evaluate(_OVERFLOW_JS)
        found = now if found is None else [f for f in now if f in found]
        if not found:
            return []
    return [{"id": "horizontal-overflow", "impact": "serious", "help": "Content wider than a 390 px phone screen",
             "nodes": [{"target": [f]} for f in found]}]


#: The control each page puts beside its headline chart in presentation mode (a label, or a button's name).
KEY_CONTROLS = {"/": "Epsilon (ε)", "/Accountant": "Noise multiplier σ", "/Train_a_network": "Epsilon (ε)",
                "/Clustering": "Epsilon (ε)", "/Classical_models": "ε for the training-size chart",
                "/Tradeoff_explorer": "button:Run", "/Noisy_images": "Epsilon (ε)",
                "/PATE": "Target ε for all queries", "/Federated_learning": "Target ε, user level",
                "/Attack_the_model": "Epsilon (ε)", "/Papers_reproduced": "Paper", "/Glossary": "Find a term"}
#: What stands for the headline on a page without a chart: its first picture, or the first words of its text.
HEADLINES = {"/Noisy_images": '[data-testid="stImage"]', "/Glossary": '[data-testid="stMain"] >> text=Judging ε.'}
PROJECTOR = {"width": 1280, "height": 720}


def presentation_layout(browser, base: str, path: str) -> list[dict]:
    """Open ``path`` with ``?present=1`` (a link to presentation mode) at 1280 x 720, run its main button, and check
    the first screen (:func:`first_screen`)."""
    page = browser.new_page(viewport=PROJECTOR)
    page.set_default_timeout(300_000)
    page.goto(base + path + "?present=1", wait_until="networkidle", timeout=120_000)
    page.locator('[data-testid="stHeading"]').first.wait_for()
    wait_until_idle(page, timeout=240.0)  # a second without the running indicator
    _press_main_button(page, path)
    found = first_screen(page, path)
    page.close()
    return found


def switch_to_presentation(page, path: str) -> list[dict]:
    """On an open page: back to 1280 x 720, the sidebar's *Presentation mode* switch turned on (the way a teacher
    does it mid-lesson), the main button pressed again where the page still shows it, then the first screen checked
    (:func:`first_screen`)."""
    page.set_viewport_size(PROJECTOR)
    page.wait_for_timeout(300)
    expand = page.locator('[data-testid="stExpandSidebarButton"]')
    if expand.count() and expand.first.is_visible():
        expand.first.click()
        page.wait_for_timeout(300)
    page.get_by_text("Presentation mode", exact=True).first.click()
    page.wait_for_timeout(500)  # the rerun starts
    wait_until_idle(page, timeout=240.0)
    _press_main_button(page, path, if_shown=True)  # a page that keeps its result hides the button
    return first_screen(page, path)


def _press_main_button(page, path: str, *, if_shown: bool = False) -> None:
    button = MAIN_BUTTONS.get(path)
    loc = page.get_by_role("button", name=button or "", exact=True)
    if button and not (if_shown and loc.count() == 0):
        loc.first.click()
        page.wait_for_timeout(500)  # the rerun starts
        wait_until_idle(page, timeout=240.0)


def first_screen(page, path: str) -> list[dict]:
    """Presentation mode at 1280 x 720: axe-style "serious" violations when the key control (:data:`KEY_CONTROLS`)
    or the headline (the first chart, or the first picture on the Noisy images page) does not start within the
    first screen with at least 120 px of it showing, or when the sidebar is left open over the stage. A page without
    a chart has its own headline (:data:`HEADLINES`)."""
    page.evaluate("window.scrollTo(0, 0)")
    page.locator('[data-testid="stMain"]').evaluate("el => el.scrollTo(0, 0)")
    problems = []
    control = KEY_CONTROLS[path]
    if control.startswith("button:"):
        where = page.get_by_role("button", name=control.split(":", 1)[1], exact=True).first
    else:
        where = page.get_by_text(control, exact=True).first
    headline = page.locator(HEADLINES.get(path, '[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"]'))
    limit = PROJECTOR["height"] - 120
    for what, loc in (("key control " + repr(control), where), ("headline chart", headline.first)):
        box = loc.bounding_box() if loc.count() else None
        if box is None or box["y"] > limit:
            problems.append(f"{what} starts at {'nowhere' if box is None else round(box['y'])} px, below "
                            f"{limit} px of a {PROJECTOR['height']} px screen")
    sidebar = page.locator('[data-testid="stSidebar"]')
    if sidebar.count() and sidebar.first.get_attribute("data-collapsed") == "false":
        problems.append("the sidebar is open over the stage")
    if not problems:
        return []
    return [{"id": "presentation-first-screen", "impact": "serious",
             "help": "Presentation mode at 1280 x 720: key control and headline on the first screen",
             "nodes": [{"target": [p]} for p in problems]}]


def describe(v: dict, *, limit: int = 3) -> str:
    targets = "; ".join(" ".join(map(str, n["target"])) for n in v["nodes"][:limit])
    return f"  [{v['impact']}] {v['id']} ×{len(v['nodes'])}: {v['help']} — {targets}"


def scan_page(browser, base: str, path: str, *, impacts=BLOCKING, width: int = 1280, height: int = 720,
              presentation: bool = True, look=None):
    """Open ``base + path``, scan it once rendered and, where it has a main button, again after its run.

    Returns ``[(stage, violations, body_text)]`` with stage ``"rendered"``, ``"after <button>"``, ``"phone"``: the
    final state resized to a 390 px phone, where nothing may stick out sideways, and, last (with
    ``presentation``), ``"presentation mode"``: the same session switched to it (:func:`switch_to_presentation`).
    ``look(path, page)``, if given, is called once the page has rendered, before its scan, in the same visit (a
    screenshot, the menu and the tab title without loading the page again).
    """
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(300_000)
    page.goto(base + path, wait_until="networkidle", timeout=120_000)
    page.locator('[data-testid="stHeading"]').first.wait_for()
    wait_until_idle(page, timeout=240.0)  # a second without the running indicator
    if look is not None:
        look(path, page)
    out = [("rendered", violations(page, impacts=impacts), page.inner_text("body"))]
    button = MAIN_BUTTONS.get(path)
    if button:
        page.get_by_role("button", name=button, exact=True).first.click()
        page.wait_for_timeout(500)  # the rerun starts
        wait_until_idle(page, timeout=240.0)
        out.append((f"after {button}", violations(page, impacts=impacts), page.inner_text("body")))
    out.append(("phone", phone_overflow(page), page.inner_text("body")))
    if presentation:
        out.append(("presentation mode", switch_to_presentation(page, path), page.inner_text("body")))
    page.close()
    return out


def scan_pages(base: str, paths, *, executable: str, workers: int = 3, impacts=BLOCKING,
               width: int = 1280, height: int = 720, look=None) -> dict:
    """:func:`scan_page` on each of ``paths``, ``workers`` pages at a time, each worker in its own thread with its
    own Playwright and Chromium (Playwright's synchronous API is not shared between threads); worker ``i`` opens
    ``paths[i]`` first. Returns ``{path: stages}`` in the order of ``paths``. ``look``: see :func:`scan_page` (it
    is called from the workers' threads)."""
    paths = list(paths)
    workers = max(1, min(int(workers), len(paths)))

    def run(share: list) -> dict:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=executable, args=FLAGS)
            try:
                return {path: scan_page(browser, base, path, impacts=impacts, width=width, height=height,
                                        look=look)
                        for path in share}
            finally:
                browser.close()

    with ThreadPoolExecutor(workers) as pool:
        done = {}
        for part in pool.map(run, [paths[i::workers] for i in range(workers)]):
            done.update(part)
    return {path: done[path] for path in paths}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("--page", action="append", default=[], help="a page path such as /PATE (default: all)")
    ap.add_argument("--all-impacts", action="store_true")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=720)
    ap.add_argument("--workers", type=int, default=3, help="pages scanned at once, each in its own browser")
    a = ap.parse_args()
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("chromium not found: apt-get install chromium", file=sys.stderr)
        return 2
    base = a.base.rstrip("/")
    paths = a.page or [url_path(p.path) for p in PAGES]
    impacts = ("critical", "serious", "moderate", "minor") if a.all_impacts else BLOCKING
    blocking = 0
    scanned = scan_pages(base, paths, executable=exe, workers=a.workers, impacts=impacts, width=a.width,
                         height=a.height)
    for path, stages in scanned.items():
        for stage, found, _ in stages:
            blocking += sum(v["impact"] in BLOCKING for v in found)
            print(f"{base}{path} ({stage}): {len(found)} violation rule(s)")
            for v in found:
                print(describe(v))
    return 1 if blocking else 0


if __name__ == "__main__":
    sys.exit(main())
