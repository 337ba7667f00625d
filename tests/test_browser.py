"""A real browser: serve the app on localhost, open it in headless Chromium, look for exception text."""
from __future__ import annotations

import pathlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from dpcore.ui.navigation import PAGES

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--disable-quic", "--disable-component-update", "--disable-sync"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            urllib.request.urlopen(url + "/_stcore/health", timeout=1)
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("streamlit did not start")
    yield url
    proc.terminate()
    proc.wait(timeout=20)


#: a chart drawn in the page: Plotly's SVG or Vega-Lite's (the home page's, dpcore.ui.vega)
CHART = ".main-svg, .vega-embed svg.marks"


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium); "
                                              ".ci/run installs it")
# deep link first: a fresh server opened on a page (before anyone has visited /) must route it through app.py
@pytest.mark.parametrize("path,expected,tab", [("/Accountant", "Privacy accountant", "Accountant · dpcore"),
                                               ("/", "What does ε mean?", "What ε means · dpcore"),
                                               ("/What_epsilon_means", "What does ε mean?", "What ε means · dpcore")])
def test_page_renders_in_headless_chromium_with_the_apps_own_menu(server, tmp_path, path, expected, tab):
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 2000})
        page.goto(server + path, wait_until="networkidle", timeout=60_000)
        page.get_by_text(expected).first.wait_for(timeout=60_000)
        # a rendered chart: plotly draws an SVG with class main-svg, Vega-Lite one with class marks (slow machines
        # take a while)
        page.locator(CHART).first.wait_for(timeout=90_000)
        page.wait_for_timeout(1000)
        page.screenshot(path=str(tmp_path / "page.png"), full_page=True)
        body = page.inner_text("body")
        charts = page.locator(CHART).count()
        title = page.title()
        links = page.locator('[data-testid="stSidebar"] [data-testid="stPageLink-NavLink"]')
        # the menu is folded (dpcore.ui.navigation.sidebar_menu): its entries' labels, shown or not
        menu = [t.strip() for t in links.evaluate_all(
            "els => els.map(e => (e.querySelector('[data-testid=stMarkdownContainer]') || e).textContent)")]
        # the entry of the page being shown is lit (Streamlit tints its background)
        lit = [m for m, tint in zip(menu, links.evaluate_all(
            "els => els.map(e => getComputedStyle(e).backgroundColor)"), strict=True) if tint != "rgba(0, 0, 0, 0)"]
        auto_nav = page.locator('[data-testid="stSidebarNav"]').count()
        browser.close()
    assert expected in body
    # the app's own menu (dpcore.ui.navigation.PAGES, drawn by app.py), every page in order ...
    assert menu == [p.title for p in PAGES]
    # ... not Streamlit's list of pages/, and the router set the tab title
    assert auto_nav == 0
    assert title == tab
    assert lit == [tab.split(" · ")[0]]
    for bad in ("Traceback", "Exception:", "Error:", "Page not found"):
        assert bad not in body
    assert charts >= 1


def _axe_scan():
    """``scripts/axe_scan.py`` (the same scan a developer runs by hand), imported from its file."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("axe_scan", ROOT / "scripts" / "axe_scan.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_the_accessibility_scan_catches_missing_alt_text_low_contrast_and_a_page_wider_than_a_phone():
    playwright = pytest.importorskip("playwright.sync_api")
    pytest.importorskip("axe_playwright_python")
    axe = _axe_scan()
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page()
        page.set_content('<html lang="en"><head><title>t</title></head><body><main><h1>Broken</h1>'
                         '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">'
                         '<p style="color:#bbbbbb;background:#ffffff">faint caption</p></main></body></html>')
        found = {v["id"] for v in axe.violations(page)}
        page.set_content('<div data-testid="stMain"><p>fits</p><div style="width:800px">too wide</div></div>')
        too_wide = axe.phone_overflow(page)
        browser.close()
    assert {"image-alt", "color-contrast"} <= found
    assert [v["id"] for v in too_wide] == ["horizontal-overflow"] and len(too_wide[0]["nodes"]) == 1


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_every_page_has_no_serious_accessibility_violation_before_and_after_its_main_run(server):
    """axe-core on every page once rendered and, where there is one, after its main button's run finished:
    zero critical and zero serious violations (alt text on every picture, 4.5:1 text contrast, ...); then the
    same page on a 390 px phone: nothing sticks out sideways but tables and charts that scroll in their frame;
    then, switched to presentation mode by its sidebar toggle, the key control and headline chart on a 1280 x 720
    first screen. Three pages are open at once, each in its own browser, as a class would have them."""
    pytest.importorskip("playwright.sync_api")
    pytest.importorskip("axe_playwright_python")
    axe = _axe_scan()
    report = []
    paths = [axe.url_path(info.path) for info in PAGES]
    scanned = axe.scan_pages(server, paths, executable=CHROMIUM, workers=3)  # three visitors at once
    assert list(scanned) == paths
    for path, stages in scanned.items():
        assert [s for s, _, _ in stages][-2:] == ["phone", "presentation mode"]
        assert len(stages) == (4 if path in axe.MAIN_BUTTONS else 3)
        for stage, found, body in stages:
            assert "Traceback" not in body, f"{path} ({stage}) shows a traceback"
            report += [f"{path} ({stage}):\n{axe.describe(v)}" for v in found]
    assert not report, "\n".join(report)


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_the_presentation_check_catches_a_control_below_the_first_screen_and_an_open_sidebar(server, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    axe = _axe_scan()
    # the home page's "times asked" slider sits in its third section, far below a 720 px screen
    monkeypatch.setitem(axe.KEY_CONTROLS, "/", "Times the same question is asked")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        found = axe.presentation_layout(browser, server, "/")
        page = browser.new_page(viewport=axe.PROJECTOR)  # without ?present=1 the sidebar stays open
        page.goto(server + "/", wait_until="networkidle")
        page.locator('[data-testid="stHeading"]').first.wait_for()
        sidebar_open = page.locator('[data-testid="stSidebar"]').first.get_attribute("data-collapsed") == "false"
        browser.close()
    assert [v["id"] for v in found] == ["presentation-first-screen"]
    assert "Times the same question is asked" in found[0]["nodes"][0]["target"][0]
    assert sidebar_open  # the attribute the check reads tells an open sidebar from a folded one
