"""Take a full-page screenshot of a Streamlit page with Debian's Chromium (no browser download).

Usage: python scripts/screenshot.py URL OUT.png [--wait SECONDS] [--click "Button text"] [--width 1400]

Prints the app's sidebar menu (the st.page_link list app.py draws) and exits 1 if the page shows exception text,
if that menu is missing, or if Streamlit's auto-discovered page list shows instead.
"""
from __future__ import annotations

import argparse
import shutil
import sys

from playwright.sync_api import sync_playwright

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--disable-quic", "--disable-component-update", "--disable-sync"]


#: Streamlit's running indicator, and an element left from the previous run (drawn faded until the run redraws
#: or drops it: on a slow machine it can outlast the indicator, and a faded text fails a contrast check)
BUSY = '[data-testid="stStatusWidget"], [data-testid="stElementContainer"][data-stale="true"]'


def wait_until_idle(page, *, timeout: float = 180.0, quiet: float = 1.0, poll: float = 0.25) -> None:
    """Wait until Streamlit's running indicator and every faded element of the previous run have been gone for
    ``quiet`` seconds (a script is done and drawn), checking every ``poll`` seconds."""
    idle, waited = 0.0, 0.0
    while idle < quiet and waited < timeout:
        idle = idle + poll if page.locator(BUSY).count() == 0 else 0.0
        page.wait_for_timeout(poll * 1000)
        waited += poll


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("out")
    ap.add_argument("--wait", type=float, default=8.0,
                    help="seconds to let the page start (then it waits until the script has finished)")
    ap.add_argument("--click", action="append", default=[], help="button text to click (in order)")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=2600, help="viewport height (Streamlit scrolls inside it)")
    a = ap.parse_args()
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("chromium not found: apt-get install chromium", file=sys.stderr)
        return 2
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=FLAGS)
        page = browser.new_page(viewport={"width": a.width, "height": a.height})
        page.goto(a.url, wait_until="networkidle", timeout=60000)
        page.wait_for_timeout(a.wait * 1000)
        wait_until_idle(page)
        for text in a.click:
            page.get_by_role("button", name=text).first.click()
            page.wait_for_timeout(a.wait * 1000)
            wait_until_idle(page)
        page.screenshot(path=a.out, full_page=True)
        body = page.inner_text("body")
        # the menu is folded (dpcore.ui.navigation.sidebar_menu): its entries' text, shown or not
        menu = [t.strip() for t in page.locator('[data-testid="stSidebar"] [data-testid="stPageLink-NavLink"]')
                .evaluate_all("els => els.map(e => (e.querySelector('[data-testid=stMarkdownContainer]') || e)"
                              ".textContent)")]
        auto_nav = page.locator('[data-testid="stSidebarNav"]').count()
        title = page.title()
        browser.close()
    print(f"tab title: {title}; sidebar menu: {' | '.join(menu) or '(none)'}")
    bad = [w for w in ("Traceback", "Error:", "Exception", "Page not found") if w in body]
    if bad:
        print(f"page shows {bad}:\n{body[:3000]}", file=sys.stderr)
        return 1
    if not menu or auto_nav:
        print("the app's own sidebar menu is missing" if not menu else "Streamlit's auto-discovered page list shows",
              file=sys.stderr)
        return 1
    print(f"saved {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
