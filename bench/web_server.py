"""Figure (w): ``hermes serve`` — search through HTTP beside the in-process search, and the
first paint of a 10,000-message session in Debian's Chromium.

* ``web_search_p95_ratio_*``: the (s) query classes' words sent to the installed
  ``hermes serve`` (``GET /api/search``, what the page asks as you type) on a copy of the
  store, beside the very same search in-process (``run_search`` with the page's arguments
  and filters), interleaved in one run. Target: HTTP p95 ≤ 1.5 × in-process p95.
* ``web_first_paint_10k_*``: Chromium opens ``/session/<id>`` of a session of 10,000
  messages added to that copy; the browser's own ``first-contentful-paint`` timing, from
  navigation start. Target ≤ 300 ms. The page sends the first 200 messages only; beside it,
  in the same run, the same session as one ``hermes sessions export --format html`` file
  (all 10,000 messages at once), for comparison.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bench.search import open_read_only, percentile, query_classes
from hermes_core.store.store import STATE_DB_NAME, SessionStore

CHROMIUM = "/usr/bin/chromium"
LONG_MESSAGES = 10_000
FIRST_PAINT = """
new Promise((resolve) => {
  new PerformanceObserver((list) => {
    const entry = list.getEntriesByName('first-contentful-paint')[0];
    if (entry) { resolve(entry.startTime); }
  }).observe({ type: 'paint', buffered: true });
  setTimeout(() => resolve(null), 5000);
})
"""
"""The browser's first-contentful-paint time (ms from navigation start), once it is known."""


def _serve(home: Path) -> tuple[subprocess.Popen[str], str]:
    hermes = shutil.which("hermes", path=str(Path(sys.executable).parent)) or "hermes"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    process = subprocess.Popen(
        [hermes, "--home", str(home), "serve", "--port", "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    process.wait(timeout=30)
    if process.stdout is not None:
        process.stdout.close()


def _long_session(home: Path) -> str:
    from hermes_hookspecs import Message

    with SessionStore.open(home) as store:
        session = store.create_session("cli", title="Bench: ten thousand messages")
        words = "the parser reads the file and the lexer splits it into tokens " * 4
        store.append_messages(
            session.id,
            [
                Message("user" if i % 2 == 0 else "assistant", f"message {i}: {words}")
                for i in range(LONG_MESSAGES)
            ],
        )
        return session.id


def run_web(
    db_path: Path, workdir: Path, seed: int, repeats: int, paints: int
) -> tuple[list[float], list[float], list[float], int, list[float], int]:
    """(HTTP ms, in-process ms, first-paint ms, bytes of the first page, first-paint ms of
    the whole export file, its bytes)."""
    import httpx
    from hermes_web.archive import ListFilters, as_you_type

    from hermes_core.search import run_search

    home = workdir / "web-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    shutil.copyfile(db_path, home / STATE_DB_NAME)  # the cached store is never served
    long_id = _long_session(home)
    connection = open_read_only(db_path)
    classes, _counts = query_classes(connection, seed)
    queries = [
        q for c in classes if c.name in {"rare", "medium", "common", "two_terms"} for q in c.queries
    ]
    within = ListFilters().search_scope()
    process, url = _serve(home)
    through_http: list[float] = []
    in_process: list[float] = []
    paint: list[float] = []
    export_paint: list[float] = []
    first_page = export_bytes = 0
    try:
        with httpx.Client(base_url=url.split("/?")[0], timeout=60) as client:
            assert client.get(url).status_code == 303

            def local(query: str) -> None:
                arguments = {
                    "query": as_you_type(query),
                    "limit": 10,
                    "role_filter": "user,assistant",
                }
                run_search(connection, arguments, within=within)

            for query in queries:  # warm both
                client.get("/api/search", params={"q": query})
                local(query)
            for _ in range(repeats):
                for query in queries:
                    started = time.perf_counter()
                    answer = client.get("/api/search", params={"q": query})
                    through_http.append((time.perf_counter() - started) * 1000)
                    assert answer.status_code == 200, answer.text
                    started = time.perf_counter()
                    local(query)
                    in_process.append((time.perf_counter() - started) * 1000)
            first_page = len(client.get(f"/session/{long_id}").content)
        if Path(CHROMIUM).exists():
            paint = _first_paints(url, f"/session/{long_id}", paints)
            exported = workdir / "web-export-10k.html"
            _export(home, long_id, exported)
            export_bytes = exported.stat().st_size
            export_paint = _first_paints(None, exported.as_uri(), paints)
            exported.unlink()
    finally:
        _stop(process)
        connection.close()
        shutil.rmtree(home, ignore_errors=True)
    return through_http, in_process, paint, first_page, export_paint, export_bytes


def _export(home: Path, session_id: str, target: Path) -> None:
    hermes = shutil.which("hermes", path=str(Path(sys.executable).parent)) or "hermes"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    subprocess.run(
        [
            hermes,
            "--home",
            str(home),
            "sessions",
            "export",
            "--format",
            "html",
            "--session-id",
            session_id,
            str(target),
        ],
        check=True,
        capture_output=True,
        env=env,
        timeout=600,
    )


def _first_paints(sign_in: str | None, target: str, count: int) -> list[float]:
    """First-contentful-paint of ``target`` (a path on the server ``sign_in`` opens, or a
    file URL), ``count`` times after one warm-up visit."""
    from playwright.sync_api import sync_playwright

    base = sign_in.split("/?")[0] if sign_in else ""
    found: list[float] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context()
        page = context.new_page()
        if sign_in:
            page.goto(sign_in)
        for attempt in range(count + 1):
            page.goto(base + target)
            page.wait_for_load_state("load")
            value = page.evaluate(FIRST_PAINT)
            if attempt and value is not None:  # the first visit warms the browser
                found.append(float(value))
        browser.close()
    return found


def p50_p95(samples: Sequence[float]) -> str:
    return f"{statistics.median(samples):.1f} / {percentile(samples, 0.95):.1f}"
