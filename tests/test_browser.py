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
#: the module's tests share one server (a module fixture) and its scan: one test worker runs them all
pytestmark = pytest.mark.xdist_group("browser")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_streamlit(port: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def server():
    """One Streamlit server for the module, on a port the system says is free; should another process (a parallel
    test worker, another suite) take that port first, the server exits and the next free port is tried."""
    for _attempt in range(5):
        port = _free_port()
        proc = _start_streamlit(port)
        url = f"http://127.0.0.1:{port}"
        for _ in range(240):
            if proc.poll() is not None:  # exited: the port was taken meanwhile
                break
            try:
                urllib.request.urlopen(url + "/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        else:
            proc.kill()
            pytest.fail("streamlit did not start")
        if proc.poll() is None:
            break
    else:
        pytest.fail("streamlit did not start on any of 5 free ports")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # still finishing a run nobody waits for any more
        proc.kill()
        proc.wait(timeout=20)


#: a chart drawn in the page: Plotly's SVG or Vega-Lite's (the home page's, dpcore.ui.vega)
CHART = ".main-svg, .vega-embed svg.marks"


def _look(page, shot: pathlib.Path | None = None) -> dict:
    """What a visitor sees of an open page: its text, charts, tab title, the sidebar's menu and which entry is
    lit, and whether Streamlit's own list of pages shows; with ``shot``, a full-page screenshot taken there."""
    if shot is not None:
        # a rendered chart: plotly draws an SVG with class main-svg, Vega-Lite one with class marks (slow machines
        # take a while)
        page.locator(CHART).first.wait_for(timeout=90_000)
        page.wait_for_timeout(1000)
        page.screenshot(path=str(shot), full_page=True)
    links = page.locator('[data-testid="stSidebar"] [data-testid="stPageLink-NavLink"]')
    # the menu is folded (dpcore.ui.navigation.sidebar_menu): its entries' labels, shown or not
    menu = [t.strip() for t in links.evaluate_all(
        "els => els.map(e => (e.querySelector('[data-testid=stMarkdownContainer]') || e).textContent)")]
    # the entry of the page being shown is lit (Streamlit tints its background)
    lit = [m for m, tint in zip(menu, links.evaluate_all(
        "els => els.map(e => getComputedStyle(e).backgroundColor)"), strict=True) if tint != "rgba(0, 0, 0, 0)"]
    return {"body": page.inner_text("body"), "charts": page.locator(CHART).count(), "title": page.title(),
            "menu": menu, "lit": lit,
            "auto_nav": page.locator('[data-testid="stSidebarNav"]').count(), "shot": shot}


#: (address, text shown, tab title) of the pages whose look is checked in full, with a screenshot
RENDERED = [("/Accountant", "Privacy accountant", "Accountant · dpcore"),
            ("/", "What does ε mean?", "What ε means · dpcore"),
            ("/What_epsilon_means", "What does ε mean?", "What ε means · dpcore")]


@pytest.fixture(scope="module")
def scanned(server, tmp_path_factory):
    """Every page of the app visited once by the accessibility scan (``scripts/axe_scan.py``), three visitors at
    once, each page's look (:func:`_look`) recorded in the same visit: ``(stages per address, look per address)``.

    The home page comes last, so the scan opens a fresh server on deep links (before anyone has visited /), which
    app.py must route."""
    pytest.importorskip("playwright.sync_api")
    pytest.importorskip("axe_playwright_python")
    axe = _axe_scan()
    shots = tmp_path_factory.mktemp("screenshots")
    shoot = {path for path, _, _ in RENDERED}
    paths = [axe.url_path(info.path) for info in PAGES[1:]] + [axe.url_path(PAGES[0].path)]
    looks = {}

    def look(path, page):
        looks[path] = _look(page, shots / f"{path.strip('/') or 'home'}.png" if path in shoot else None)

    scanned = axe.scan_pages(server, paths, executable=CHROMIUM, workers=3, look=look)
    assert list(scanned) == paths and set(looks) == set(paths)
    return scanned, looks


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium); "
                                              ".ci/run installs it")
@pytest.mark.parametrize("path,expected,tab", RENDERED)
def test_page_renders_in_headless_chromium_with_the_apps_own_menu(scanned, server, tmp_path, path, expected, tab):
    looks = scanned[1]
    if path not in looks:  # a page's other address (the home page by its name): a visit of its own
        playwright = pytest.importorskip("playwright.sync_api")
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": 1400, "height": 2000})
            page.goto(server + path, wait_until="networkidle", timeout=60_000)
            page.get_by_text(expected).first.wait_for(timeout=60_000)
            looks = {path: _look(page, tmp_path / "page.png")}
            browser.close()
    seen = looks[path]
    assert expected in seen["body"]
    assert seen["shot"].stat().st_size > 0
    # the app's own menu (dpcore.ui.navigation.PAGES, drawn by app.py), every page in order ...
    assert seen["menu"] == [p.title for p in PAGES]
    # ... not Streamlit's list of pages/, and the router set the tab title
    assert seen["auto_nav"] == 0
    assert seen["title"] == tab
    assert seen["lit"] == [tab.split(" · ")[0]]
    for bad in ("Traceback", "Exception:", "Error:", "Page not found"):
        assert bad not in seen["body"]
    assert seen["charts"] >= 1


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_every_page_shows_the_apps_menu_with_its_own_entry_lit_and_its_tab_title(scanned):
    """Every page as the scan first saw it: the app's menu, its own entry lit, its title on the tab."""
    for info in PAGES:
        seen = scanned[1][_axe_scan().url_path(info.path)]
        assert seen["menu"] == [p.title for p in PAGES] and seen["auto_nav"] == 0, info.path
        assert seen["title"] == f"{info.title} · dpcore" and seen["lit"] == [info.title], info.path


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
def test_every_page_has_no_serious_accessibility_violation_before_and_after_its_main_run(scanned):
    """axe-core on every page once rendered and, where there is one, after its main button's run finished:
    zero critical and zero serious violations (alt text on every picture, 4.5:1 text contrast, ...); then the
    same page on a 390 px phone: nothing sticks out sideways but tables and charts that scroll in their frame;
    then, switched to presentation mode by its sidebar toggle, the key control and headline chart on a 1280 x 720
    first screen. Three pages are open at once, each in its own browser, as a class would have them."""
    axe = _axe_scan()
    report = []
    for path, stages in scanned[0].items():
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
