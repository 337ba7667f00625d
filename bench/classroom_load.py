"""A classroom on one server: K browser sessions press Train at once, beside one session alone, in one run.

Starts ``streamlit run app.py`` headless on a free port, then drives headless Chromium (Debian's
``chromium`` through the PyPI ``playwright``): first the home page and then one session pressing Train on
the Train page's defaults, each alone on a fresh server (so it really trains); then, on another fresh
server, K sessions (default 20): K - D press Train on the defaults and D (default 5) on distinct inputs
(each its own seed), and 5 s after the clicks a late-comer opens the home page and waits for its first
chart. It prints each session's completion time, whether it saw an error or followed a run another
session had started, and for the sessions on the defaults how long after the shared run finished (its line on the
server's log) their page showed it, the late-comer's time to its first chart, the server's peak memory and CPU seconds,
and how busy the whole machine was, and how much of that was work outside this bench (a shared machine).

In a classroom every student's browser runs on the student's own laptop; here all of them share the
server's machine. So that twenty browsers do not take the server's cores, the class's Chromium runs in
Linux's idle scheduling class (``--class-browser idle``, the default: ``chrt --idle``; Chromium resets
nice values itself, so ``nice`` does not hold it back), using only the CPU the server leaves; ``normal``
puts it level with the server. The late-comer has a browser of its own at normal priority, as a
newcomer's laptop would. Each page stamps its own click and the moment it shows the finished run (a
MutationObserver in the page), so a session's time runs from its own click, and the bench's polling is
cheap and does not slow the browsers it measures. The last lines print the issue's targets beside the
measured numbers.

It also reads the CPU seconds of the class's browser (the process and its tabs' renderers, from /proc) from the clicks
to the shared run's end and from then until the last session on the defaults showed the result: on one machine the
tabs' drawing of the finished page is work the server's cores share. And it measures that drawing alone: a tab on a
fresh server with nobody else shows the Train page's finished run from the store, and its main thread's busy time
(the browser's own ``TaskDuration``) times the followers' tabs, over the cores, is the soonest they can all show a run
on this machine, whatever the server does. With ``--frames`` one more session on the defaults follows the run from a
browser of its own at normal priority (a student's own device, as near as one machine comes: its tab is not queued
behind the class's ten), reported apart from the class and beside the target.

With ``--frames`` each session on the defaults also says when the last message the server sent it before it showed the
result reached its browser (the browser's own network events): what comes before is the server's part of the wait,
what comes after is the page's (its main thread handling the messages and drawing them).

Usage: python bench/classroom_load.py [--sessions 20] [--distinct 5] [--timeout 900] [--class-browser idle] [--frames]
"""
from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
#: The class's sessions are tabs of one browser, but each stands for a student with the page in front: without these
#: Chromium treats every tab but the last opened as in the background and handles its messages and drawing later
#: (with four or five sessions following one run, the last-opened tab showed the result 3-5 s after the run ended, the
#: others 10-19 s, while the server had finished every session's page within 0.4 s of the run's end)
FOREGROUND = ["--disable-background-timer-throttling", "--disable-renderer-backgrounding",
              "--disable-backgrounding-occluded-windows"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def machine_busy_seconds() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, from /proc/stat."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    idle = ticks[3] + ticks[4]  # idle + iowait
    hz = os.sysconf("SC_CLK_TCK")
    return (sum(ticks) - idle) / hz, sum(ticks) / hz


def _processes() -> dict[int, tuple[int, str, float]]:
    """Every process: pid -> (parent pid, command name, CPU seconds used so far), from /proc."""
    out, hz = {}, os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    head, rest = f.read().rsplit(")", 1)
            except OSError:  # gone meanwhile
                continue
            fields = rest.split()
            out[int(entry)] = (int(fields[1]), head.split("(", 1)[1], (int(fields[11]) + int(fields[12])) / hz)
    return out


def _browsers_started_here() -> set[int]:
    """The Chromium browser processes (not their helpers) under this script."""
    procs, me = _processes(), os.getpid()

    def under_me(pid: int) -> bool:
        while pid > 1:
            if pid == me:
                return True
            pid = procs.get(pid, (0,))[0]
        return False

    chromium = {pid for pid, (_, name, _) in procs.items() if name.startswith(("chromium", "chrome"))}
    return {pid for pid in chromium if procs[pid][0] not in chromium and under_me(pid)}


def browser_cpu_seconds(root: int | None) -> float:
    """CPU seconds used so far by the browser process ``root`` and every process under it (its tabs' renderers)."""
    if root is None:
        return math.nan
    procs = _processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += procs.get(pid, (0, "", 0.0))[2]
        todo.extend(children.get(pid, []))
    return total


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
        #: the server's log, each line with the moment it arrived (a run's end is the moment its "finished" line does)
        self.lines: list[tuple[float, str]] = []
        self._reader = threading.Thread(target=self._read_log, daemon=True)
        self._reader.start()
        deadline = time.time() + 60
        while time.time() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.5)
        raise RuntimeError("the Streamlit server did not start within 60 s")

    def _read_log(self) -> None:
        for raw in self.proc.stderr:
            self.lines.append((time.time(), raw.decode(errors="replace").rstrip()))

    def finished_runs(self) -> list[tuple[float, int]]:
        """(when its line arrived, visitors following it) of every run the server's log says finished."""
        out = []
        for when, line in list(self.lines):
            if (m := re.search(r"run \S+ finished in [\d.]+ s, for (\d+) visitor", line)) is not None:
                out.append((when, int(m.group(1))))
        return out

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
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=5)
        return "\n".join(line for _, line in self.lines)


#: Stamps ``window.__dpcoreDone`` (ms since the epoch) once the page shows a finished run: the result table's
#: header is on the page and Streamlit's "running" widget is gone. Checked at most every 100 ms, on DOM changes.
DONE_STAMP = """(() => {
  let pending = false;
  const check = () => {
    pending = false;
    if (window.__dpcoreDone || !document.body) return;
    if (document.body.textContent.includes("Test accuracy (private)")
        && !document.querySelector('[data-testid="stStatusWidget"]')) window.__dpcoreDone = Date.now();
  };
  new MutationObserver(() => { if (!pending) { pending = true; setTimeout(check, 100); } })
    .observe(document, {subtree: true, childList: true, characterData: true});
})();"""
#: Stamps ``window.__dpcoreClicked`` and presses the Train button, in the page.
CLICK_TRAIN = """() => {
  const button = [...document.querySelectorAll("button")].find(b => b.innerText.trim() === "Train");
  window.__dpcoreClicked = Date.now();
  button.click();
}"""
#: Stamps ``window.__dpcoreChart`` when the first chart is drawn: the SVG inside a Plotly chart or a Vega-Lite one
#: (the home page's charts are Vega-Lite, dpcore.ui.vega), not the empty frame Plotly puts on the page first.
CHART_STAMP = """(() => {
  const obs = new MutationObserver(() => {
    if (!window.__dpcoreChart && document.querySelector(".js-plotly-plot .main-svg, .vega-embed svg.marks")) {
      window.__dpcoreChart = Date.now();
      obs.disconnect();
    }
  });
  obs.observe(document, {subtree: true, childList: true});
})();"""


def _stamp(page, name: str) -> float | None:
    """The page's own stamp (seconds since the epoch), or None while it has none."""
    ms = page.evaluate(f"window.{name} || 0")
    return ms / 1000 if ms else None


def _status(page) -> str:
    if page.get_by_text("Traceback").count() or page.locator('[data-testid="stException"]').count():
        return "ERROR"
    if page.get_by_text("Another visitor asked").count():
        return "followed another session's run"
    return "ok"


def open_home(browser, server: Server, timeout: float = 120.0):
    """Open the home page in a context of its own that stamps its first chart: (page, when it was opened)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(CHART_STAMP)
    page, start = context.new_page(), time.time()
    page.set_default_timeout(timeout * 1000)
    page.goto(server.url(), wait_until="commit")
    return page, start


def home_alone(browser, timeout: float = 120.0) -> float | None:
    """Seconds to the home page's first chart with nobody else on a fresh server (None: not drawn in time)."""
    server = Server()
    try:
        page, start = open_home(browser, server, timeout)
        while time.time() - start < timeout:
            if (stamp := _stamp(page, "__dpcoreChart")) is not None:
                return stamp - start
            time.sleep(0.2)
        return None
    finally:
        server.stop()


class Frames:
    """When the server's messages reached one page's browser (seconds since the epoch), read from the browser's own
    network events (Chrome DevTools Protocol), which stamp a frame when it arrives, however busy the page's main
    thread is: the last one before the page showed the run splits the wait into the server's part and the page's."""

    def __init__(self, context, page) -> None:
        self.offset: float | None = None  # wall clock minus the browser's monotonic clock
        self.arrived: list[float] = []
        cdp = context.new_cdp_session(page)
        cdp.on("Network.webSocketWillSendHandshakeRequest", self._handshake)
        cdp.on("Network.webSocketFrameReceived", self._frame)
        cdp.send("Network.enable")

    def _handshake(self, params: dict) -> None:
        self.offset = params["wallTime"] - params["timestamp"]

    def _frame(self, params: dict) -> None:
        if self.offset is not None:
            self.arrived.append(params["timestamp"] + self.offset)

    def last_before(self, when: float) -> float | None:
        return max((t for t in self.arrived if t <= when), default=None)


def drawing_alone(browser, repeats: int = 3, timeout: float = 180.0) -> float | None:
    """Seconds of one tab's main thread (Chrome DevTools Protocol's ``TaskDuration``) to show the Train page's
    finished run on a fresh server with nobody else: one session trains, then a second tab presses Train on the same
    inputs and draws the result from the store. The median of ``repeats`` such tabs. This is the drawing a follower's
    page does after the run however fast the server is: tabs that share this machine's cores cannot all show the run
    sooner than (tabs x this) / cores after it ends."""
    server = Server()
    try:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.add_init_script(DONE_STAMP)

        def open_train():
            page = context.new_page()
            page.set_default_timeout(timeout * 1000)
            page.goto(server.url("Train_a_network"), wait_until="commit")
            page.get_by_role("button", name="Train", exact=True).wait_for()
            page.wait_for_timeout(1500)  # the page's own first drawing done
            return page

        def wait_done(page) -> bool:
            start = time.time()
            while _stamp(page, "__dpcoreDone") is None:
                if time.time() - start > timeout:
                    return False
                time.sleep(0.05)
            page.wait_for_timeout(1000)  # the charts, drawn after their text
            return True

        first = open_train()
        first.evaluate(CLICK_TRAIN)
        if not wait_done(first):
            return None
        spent = []
        for _ in range(repeats):
            page = open_train()
            cdp = context.new_cdp_session(page)
            cdp.send("Performance.enable")

            def busy() -> float:
                return next(m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]
                            if m["name"] == "TaskDuration")

            before = busy()
            page.evaluate(CLICK_TRAIN)
            if not wait_done(page):
                return None
            spent.append(busy() - before)
            page.close()
        return sorted(spent)[len(spent) // 2]
    finally:
        server.stop()


def run_class(browser, sessions: int, distinct: int, timeout: float, *, late_browser=None,
              frames: bool = False, browser_pid: int | None = None, own_device=None) -> dict:
    """``late_browser``: the late-comer's own browser (None: no late-comer); ``frames``: also time when the server's
    messages reached each page (:class:`Frames`); ``browser_pid``: the class's browser process, whose CPU seconds
    (with its tabs') are read as the class goes; ``own_device``: a browser of its own, at normal priority, in which one
    more session on the defaults follows the shared run, as a student's own device would (reported apart)."""
    server = Server()
    late_comer = late_browser is not None
    try:
        pages, watched = [], []
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.add_init_script(DONE_STAMP)
        for _ in range(sessions):
            page = context.new_page()
            page.set_default_timeout(300_000)
            if frames:
                watched.append(Frames(context, page))
            page.goto(server.url("Train_a_network"), wait_until="commit")
            pages.append(page)
        for i, page in enumerate(pages):
            page.get_by_role("button", name="Train", exact=True).wait_for(timeout=180_000)
            if i >= sessions - distinct:  # distinct inputs: a seed of its own
                seed = page.get_by_role("spinbutton", name="Seed")
                seed.fill(str(100 + i))
                seed.press("Enter")
        probe = probe_frames = None
        if own_device is not None:
            probe_context = own_device.new_context(viewport={"width": 1280, "height": 900})
            probe_context.add_init_script(DONE_STAMP)
            probe = probe_context.new_page()
            probe.set_default_timeout(300_000)
            probe_frames = Frames(probe_context, probe)
            probe.goto(server.url("Train_a_network"), wait_until="commit")
            probe.get_by_role("button", name="Train", exact=True).wait_for(timeout=180_000)
        for page in pages:
            page.wait_for_timeout(300)
        cpu0, t0, busy0 = server.cpu_seconds(), time.time(), machine_busy_seconds()
        ours0 = browser_cpu_seconds(os.getpid())  # this script and every process under it: server, browsers
        browser_cpu = [(t0, browser_cpu_seconds(browser_pid))]  # (when, the class's browser's CPU seconds so far)
        for page in pages:  # one round trip each, so the last student clicks moments after the first
            page.evaluate(CLICK_TRAIN)
        if probe is not None:
            probe.evaluate(CLICK_TRAIN)
        probe_shown = None
        finished: dict[int, float] = {}
        shown: dict[int, float] = {}  # when each page showed the result (seconds since the epoch)
        late, late_time = None, None
        # until every session is done and, when there is one, the late-comer's chart has appeared
        while ((len(finished) < sessions or (late_comer and late_time is None)
                or (probe is not None and probe_shown is None)) and time.time() - t0 < timeout):
            if late_comer and late is None and time.time() - t0 > 5:
                late, late_start = open_home(late_browser, server, timeout)
            if late is not None and late_time is None and (stamp := _stamp(late, "__dpcoreChart")) is not None:
                late_time = stamp - late_start
            if probe is not None and probe_shown is None:
                probe_shown = _stamp(probe, "__dpcoreDone")
            for i, page in enumerate(pages):
                if i not in finished and (stamp := _stamp(page, "__dpcoreDone")) is not None:
                    finished[i] = stamp - _stamp(page, "__dpcoreClicked")
                    shown[i] = stamp
            browser_cpu.append((time.time(), browser_cpu_seconds(browser_pid)))
            time.sleep(1.0)
        rows = [(i, finished.get(i), _status(pages[i]), "distinct" if i >= sessions - distinct else "defaults")
                for i in range(sessions)]
        # the run every session on the defaults asked for is the one the most visitors followed; its end is when its
        # "finished" line reached the log, and each such session's lag is from then to its page showing the result
        runs = server.finished_runs()
        shared_end = max(runs, key=lambda r: r[1])[0] if runs else None
        lags = {i: shown[i] - shared_end for i in shown if shared_end is not None and i < sessions - distinct}
        # when the last message before the page showed the result reached its browser, after the shared run's end
        arrived = {i: last - shared_end for i in lags if frames and (last := watched[i].last_before(shown[i]))}
        # the class's browser's CPU seconds up to the last reading before the shared run ended, and from then until
        # the last of its sessions showed the result
        browser_run = browser_after = None
        if shared_end is not None and lags:
            before = max((r for r in browser_cpu if r[0] <= shared_end), key=lambda r: r[0])
            upto = min((r for r in browser_cpu if r[0] >= max(shown[i] for i in lags)), key=lambda r: r[0],
                       default=browser_cpu[-1])
            browser_run, browser_after = before[1] - browser_cpu[0][1], upto[1] - before[1]
        busy1 = machine_busy_seconds()
        ours = browser_cpu_seconds(os.getpid()) - ours0
        own = None
        if probe_shown is not None and shared_end is not None:
            last = probe_frames.last_before(probe_shown)
            own = (probe_shown - shared_end, None if last is None else last - shared_end, _status(probe))
        return {"rows": rows, "lags": lags, "arrived": arrived, "own_device": own, "browser_run": browser_run,
                "browser_after": browser_after, "late": late_time if late_comer else None,
                "cpu": server.cpu_seconds() - cpu0,
                "peak_mb": server.peak_mb(), "busy": busy1[0] - busy0[0], "ours": ours,
                "available": busy1[1] - busy0[1], "wall": time.time() - t0}
    finally:
        err = server.stop()
        if "Traceback" in err:
            print("server stderr had a traceback:\n" + err[-2000:], file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description="A class of browser sessions on a server this script starts (on this "
                                             "checkout, a free port), beside one session alone, in one run.")
    ap.add_argument("--sessions", type=int, default=20,
                    help="sessions that press Train at once (default 20), the late-comer besides")
    ap.add_argument("--distinct", type=int, default=5,
                    help="of them, how many ask for inputs of their own (default 5); the rest ask the same run")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds a session may take (default 900)")
    ap.add_argument("--frames", action="store_true",
                    help="also time when the server's last message reached each page (the browser's network events; "
                         "their bookkeeping costs the browsers a little)")
    ap.add_argument("--class-browser", choices=("idle", "normal"), default="idle",
                    help="scheduling of the class's browser: idle (only the CPU the server leaves) or normal")
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, ROOT)
    from dpcore.runtime.serving import default_workers

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("needs Debian's chromium (apt-get install chromium)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="dpcore-bench-") as tmp, sync_playwright() as p:
        class_exe = exe
        if a.class_browser == "idle":  # the class's Chromium, and every process it starts, in the idle class
            if not shutil.which("chrt"):
                print("--class-browser idle needs chrt (util-linux); or pass --class-browser normal", file=sys.stderr)
                return 1
            class_exe = os.path.join(tmp, "chromium-idle")
            with open(class_exe, "w") as f:
                f.write(f'#!/bin/sh\nexec chrt --idle 0 "{exe}" "$@"\n')
            os.chmod(class_exe, 0o755)
        before = _browsers_started_here()
        browser = p.chromium.launch(executable_path=class_exe, args=FLAGS + FOREGROUND)
        started = _browsers_started_here() - before
        browser_pid = started.pop() if len(started) == 1 else None
        late_browser = p.chromium.launch(executable_path=exe, args=FLAGS)
        home = home_alone(late_browser)
        drawing = drawing_alone(late_browser)
        alone = run_class(browser, 1, 0, a.timeout)
        own_device = p.chromium.launch(executable_path=exe, args=FLAGS + FOREGROUND) if a.frames else None
        crowd = run_class(browser, a.sessions, a.distinct, a.timeout, late_browser=late_browser, frames=a.frames,
                          browser_pid=browser_pid, own_device=own_device)
        if own_device is not None:
            own_device.close()
        browser.close()
        late_browser.close()
    single = alone["rows"][0][1]
    print(f"one session alone: {single:.1f} s, server {alone['cpu']:.0f} CPU s, "
          f"peak {alone['peak_mb']:.0f} MB")
    print(f"{a.sessions} sessions ({a.sessions - a.distinct} on the defaults, {a.distinct} with their own seed):")
    for i, t, status, kind in crowd["rows"]:
        lag = crowd["lags"].get(i)
        arrived = crowd["arrived"].get(i)
        print(f"  session {i:2d} ({kind:8s}): {'not done' if t is None else f'{t:6.1f} s'}  {status}"
              + ("" if lag is None else f"; shown {lag:.1f} s after the shared run finished (target 1.5 s)")
              + ("" if arrived is None else f", its last message from the server arrived {arrived:.1f} s after"))
    late = crowd["late"]
    print(f"late-comer's home page, first chart: {'not drawn' if late is None else f'{late:.1f} s'} "
          f"({'not drawn' if home is None else f'{home:.1f} s'} on a fresh server with nobody else)")
    others = max(0.0, crowd["busy"] - crowd["ours"])
    print(f"server: {crowd['cpu']:.0f} CPU s, peak {crowd['peak_mb']:.0f} MB; the whole machine: "
          f"{crowd['busy']:.0f} of {crowd['available']:.0f} CPU s busy over {crowd['wall']:.0f} s, of which "
          f"{crowd['ours']:.0f} this bench's (its server, browsers and script) and {others:.0f} other work on the "
          "machine" + (" (a shared machine: the idle-class browsers get only what that work leaves, so the times "
                       "above are longer than on a quiet one)" if others > 0.1 * crowd["available"] else ""))
    if crowd["browser_after"] is not None and not math.isnan(crowd["browser_after"]):
        n = a.sessions - a.distinct
        print(f"the class's browser (its {a.sessions} tabs): {crowd['browser_run']:.1f} CPU s from the clicks to the "
              f"shared run's end, {crowd['browser_after']:.1f} CPU s from then until its {n} sessions showed the "
              f"result ({crowd['browser_after'] / a.sessions:.2f} a tab), on {os.cpu_count()} cores")
    followers = a.sessions - a.distinct
    if drawing is not None:
        floor = followers * drawing / os.cpu_count()
        print(f"the finished Train page drawn alone (its result from the store, nobody else on the machine): "
              f"{drawing:.2f} s of its tab's main thread; the {followers} tabs on the defaults, sharing "
              f"{os.cpu_count()} cores, cannot all show the run sooner than {floor:.1f} s "
              "after it ends, however fast the server is (on the students' own devices each tab draws it in parallel)")
    if crowd["own_device"] is not None:
        lag, arrived, status = crowd["own_device"]
        print(f"one more session on the defaults, in a browser of its own at normal priority (as a student's own "
              f"device, though on this machine's 2 cores): {status}; shown {lag:.1f} s after the shared run finished"
              + ("" if arrived is None else f", its last message from the server {arrived:.1f} s after"))
    errors = sum(status == "ERROR" or t is None for _, t, status, _ in crowd["rows"])
    print(f"sessions with an error or not done: {errors}")
    workers = default_workers()
    lags = list(crowd["lags"].values())

    def worst(kind):
        times = [t for _, t, _, k in crowd["rows"] if k == kind]
        return math.inf if any(t is None for t in times) else max(times, default=0.0)

    print(f"\nthe issue's targets (W = {workers} run{'s' if workers != 1 else ''} at once on this machine; "
          f"class browser: {a.class_browser}):")
    checks = [
        ("errors", f"{errors}", "0", errors == 0),
        ("slowest identical run", f"{worst('defaults'):.1f} s", f"1.5 x alone = {1.5 * single:.1f} s",
         worst("defaults") <= 1.5 * single),
        ("slowest distinct run", f"{worst('distinct'):.1f} s",
         f"({a.distinct}/W + 1) x alone = {(a.distinct / workers + 1) * single:.1f} s",
         worst("distinct") <= (a.distinct / workers + 1) * single),
        ("slowest shown after its run", f"{max(lags):.1f} s" if lags else "not done", "1.5 s",
         bool(lags) and len(lags) == a.sessions - a.distinct and max(lags) <= 1.5),
        *([("  in a browser of its own", f"{crowd['own_device'][0]:.1f} s", "1.5 s (one session, apart)",
            crowd["own_device"][0] <= 1.5)] if crowd["own_device"] is not None else []),
        ("late-comer's first chart", "not drawn" if late is None else f"{late:.1f} s", "5 s",
         late is not None and late <= 5.0),
        ("server peak memory", f"{crowd['peak_mb'] / 1024:.2f} GB", "3 GB", crowd["peak_mb"] < 3 * 1024),
    ]
    for name, got, target, ok in checks:
        print(f"  {name:25s} {got:>10s}   target {target:32s} {'met' if ok else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
