"""``hermes serve`` with pages open beside a process writing the store and the user's own
``hermes sessions`` commands, then ``kill -9``: every acknowledged message is stored, the
file is intact, and the server never held a store file whose name was gone (DESIGN §9)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest
from beside_processes import deleted_store_files
from installed_hermes import run_hermes_in
from web_archive import Served, build_archive

WRITER = """
import sys, time
from pathlib import Path
from hermes_hookspecs import Message
from hermes_core.store import SessionStore
with SessionStore.open(Path(sys.argv[1])) as store:
    session = store.create_session("cli", title="Written beside the web app")
    print(session.id, flush=True)
    for number in range(int(sys.argv[2])):
        store.append_message(session.id, Message("user", f"beside line {number}"))
        print(number, flush=True)
        time.sleep(0.01)
"""
MESSAGES = 300


@pytest.mark.slow
def test_pages_open_beside_a_writer_and_the_cli_lose_nothing(tmp_path: Path) -> None:
    archive = build_archive(tmp_path / "home", long_messages=30)
    server = Served(archive.home, "--allow-writes")
    stop = threading.Event()
    failures: list[str] = []
    answered = [0]
    try:
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(archive.home), str(MESSAGES)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert writer.stdout is not None
        live_id = writer.stdout.readline().strip()

        def read_pages() -> None:
            with httpx.Client(base_url=server.base, timeout=30) as client:
                client.get(server.url)
                last = 0
                while not stop.is_set():
                    for path in (
                        "/api/list",
                        "/api/search?q=beside",
                        f"/session/{live_id}",
                        f"/api/session/{live_id}/after?last={last}",
                    ):
                        response = client.get(path)
                        if response.status_code != 200:
                            failures.append(f"{path}: {response.status_code} {response.text}")
                        elif "/after" in path:
                            last = response.json()["last"] or last
                        answered[0] += 1

        readers = [threading.Thread(target=read_pages) for _ in range(2)]
        for reader in readers:
            reader.start()
        for command in (("list",), ("show", archive.ids["planted"]), ("stats",)):
            done = run_hermes_in(archive.home, "sessions", *command)
            assert done.returncode == 0, done.stderr
            assert deleted_store_files(server.process.pid) == []
        acknowledged = [line.strip() for line in writer.stdout]
        assert writer.wait(timeout=120) == 0
        stop.set()
        for reader in readers:
            reader.join(timeout=60)
        assert failures == []
        assert answered[0] > 20
        assert deleted_store_files(server.process.pid) == []
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait(timeout=30)
    finally:
        stop.set()
        server.stop()
    assert len(acknowledged) == MESSAGES
    connection = sqlite3.connect(archive.home / "state.db")
    try:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        stored = connection.execute(
            "SELECT count(*) FROM messages WHERE session_id = ?", (live_id,)
        ).fetchone()[0]
    finally:
        connection.close()
    assert stored == MESSAGES
