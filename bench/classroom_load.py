"""A classroom on one server: K browser sessions press Train at once, beside one session alone, in one run.

Starts ``streamlit run app.py`` headless on a free port, then drives headless Chromium (Debian's
``chromium`` through the PyPI ``playwright``): first one session alone presses Train on the Train page's
defaults (a fresh server, so it really trains); then, on another fresh server, K sessions (default 20):
K - D press Train on the defaults and D (default 5) on distinct inputs (each its own seed), and a
late-comer opens the home page half-way and waits for its first chart. It prints each session's
completion time and whether it saw an error or followed a run another session had started, the
late-comer's time to its first chart, and the server's peak memory and CPU seconds.

The browsers run on the same machine as the server, so on a small machine they take much of the CPU:
the server's CPU seconds are the number to compare with one session alone.

Usage: python bench/classroom_load.py [--sessions 20] [--distinct 5] [--timeout 900]
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self) -> None:
        self.port = _free_port()
        # a cache of finished runs of its own: a fresh server must really train, not read an earlier run's result
        self.cache = tempfile.TemporaryDirectory(prefix="dpcore-bench-cache-")
        env = {**os.environ, "DPCORE_CACHE_DIR": self.cache.name}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.port", str(self.port)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        deadline = time.time() + 60
        while time.time() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.5)
        raise RuntimeError("the Streamlit server did not start within 60 s")

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}/{path}"

    def cpu_seconds(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def peak_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self) -> str:
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err.decode(errors="replace")


def _done(page) -> bool:
    return (page.get_by_text("Test accuracy (private)").count() > 0
            and page.locator('[data-testid="stStatusWidget"]').count() == 0)


def _status(page) -> str:
    if page.get_by_text("Traceback").count() or page.locator('[data-testid="stException"]').count():
        return "ERROR"
    if page.get_by_text("Another visitor asked").count():
        return "followed another session's run"
    return "ok"


def run_class(browser, sessions: int, distinct: int, timeout: float, *, late_comer: bool) -> dict:
    server = Server()
    try:
        pages = []
        for _ in range(sessions):
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(300_000)
            page.goto(server.url("Train_a_network"), wait_until="commit")
            pages.append(page)
        for i, page in enumerate(pages):
            page.get_by_role("button", name="Train", exact=True).wait_for(timeout=180_000)
            if i >= sessions - distinct:  # distinct inputs: a seed of its own
                seed = page.get_by_role("spinbutton", name="Seed")
                seed.fill(str(100 + i))
                seed.press("Enter")
        for page in pages:
            page.wait_for_timeout(300)
        cpu0, t0 = server.cpu_seconds(), time.time()
        for page in pages:
            page.get_by_role("button", name="Train", exact=True).click()
        finished: dict[int, float] = {}
        late, late_time = None, None
        # until every session is done and, when there is one, the late-comer's chart has appeared
        while (len(finished) < sessions or (late_comer and late_time is None)) and time.time() - t0 < timeout:
            if late_comer and late is None and time.time() - t0 > 5:
                late, late_start = browser.new_page(viewport={"width": 1280, "height": 900}), time.time()
                late.set_default_timeout(300_000)
                late.goto(server.url(), wait_until="commit")
            if late is not None and late_time is None and late.locator(".js-plotly-plot").count() > 0:
                late_time = time.time() - late_start
            for i, page in enumerate(pages):
                if i not in finished and _done(page):
                    finished[i] = time.time() - t0
            pages[0].wait_for_timeout(500)
        rows = [(i, finished.get(i), _status(pages[i]), "distinct" if i >= sessions - distinct else "defaults")
                for i in range(sessions)]
        return {"rows": rows, "late": late_time if late_comer else None, "cpu": server.cpu_seconds() - cpu0,
                "peak_mb": server.peak_mb()}
    finally:
        err = server.stop()
        if "Traceback" in err:
            print("server stderr had a traceback:\n" + err[-2000:], file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--distinct", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=900.0)
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("needs Debian's chromium (apt-get install chromium)", file=sys.stderr)
        return 1
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=FLAGS)
        alone = run_class(browser, 1, 0, a.timeout, late_comer=False)
        crowd = run_class(browser, a.sessions, a.distinct, a.timeout, late_comer=True)
        browser.close()
    print(f"one session alone: {alone['rows'][0][1]:.1f} s, server {alone['cpu']:.0f} CPU s, "
          f"peak {alone['peak_mb']:.0f} MB")
    print(f"{a.sessions} sessions ({a.sessions - a.distinct} on the defaults, {a.distinct} with their own seed):")
    for i, t, status, kind in crowd["rows"]:
        print(f"  session {i:2d} ({kind:8s}): {'not done' if t is None else f'{t:6.1f} s'}  {status}")
    late = crowd["late"]
    print(f"late-comer's home page, first chart: {'not drawn' if late is None else f'{late:.1f} s'}")
    print(f"server: {crowd['cpu']:.0f} CPU s, peak {crowd['peak_mb']:.0f} MB")
    errors = sum(status == "ERROR" or t is None for _, t, status, _ in crowd["rows"])
    print(f"sessions with an error or not done: {errors}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
