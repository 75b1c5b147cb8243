"""Small helpers shared by the store tests (plain functions, no fixtures)."""

from __future__ import annotations

import os
import select
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from hermes_hookspecs import Message, Session, ToolCall

REPO_ROOT = Path(__file__).resolve().parents[2]


def user(text: str, **fields: object) -> Message:
    return Message(role="user", content=text, **fields)  # type: ignore[arg-type]


def assistant(text: str, **fields: object) -> Message:
    return Message(role="assistant", content=text, **fields)  # type: ignore[arg-type]


def tool_call(name: str = "terminal", call_id: str = "call_1") -> ToolCall:
    return ToolCall(name=name, arguments='{"command": "ls"}', id=call_id)


def fts_ids(connection: sqlite3.Connection, query: str) -> list[int]:
    """Message ids the word index finds for an FTS5 ``query``."""
    rows = connection.execute(
        "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid", (query,)
    )
    return [row[0] for row in rows]


def cjk_ids(connection: sqlite3.Connection, query: str) -> list[int]:
    """Message ids the trigram index finds for a phrase (3+ characters)."""
    rows = connection.execute(
        "SELECT rowid FROM messages_cjk WHERE messages_cjk MATCH ? ORDER BY rowid",
        (f'"{query}"',),
    )
    return [row[0] for row in rows]


def count(connection: sqlite3.Connection, sql: str, params: Sequence[object] = ()) -> int:
    value: int = connection.execute(sql, params).fetchone()[0]
    return value


def message_counts(connection: sqlite3.Connection) -> dict[str, tuple[int, int]]:
    """session id → (sessions.message_count, real number of message rows)."""
    rows = connection.execute(
        "SELECT s.id, s.message_count, "
        "(SELECT count(*) FROM messages m WHERE m.session_id = s.id) FROM sessions s"
    )
    return {session_id: (counter, real) for session_id, counter, real in rows}


class RecordingEvents:
    """A ``SessionEvents`` implementation that records what the store told it.

    ``titles`` is what ``generate_title`` answers, one per call (the last one repeats); an
    ``Exception`` instance is raised instead of answered.
    """

    def __init__(self, *titles: str | Exception | None) -> None:
        self._titles = list(titles) or [None]
        self.started: list[str] = []
        self.ended: list[tuple[str, str]] = []
        self.title_calls: list[tuple[str, list[str]]] = []
        self.title_threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def session_started(self, session: Session) -> None:
        self.started.append(session.id)

    def session_ended(self, session: Session, reason: str) -> None:
        self.ended.append((session.id, reason))

    def generate_title(self, session: Session, messages: Sequence[Message]) -> str | None:
        with self._lock:
            index = min(len(self.title_calls), len(self._titles) - 1)
            self.title_calls.append((session.id, [m.content for m in messages]))
            self.title_threads.append(threading.current_thread())
        answer = self._titles[index]
        if isinstance(answer, Exception):
            raise answer
        return answer


class LineReader:
    """Reads a child process's stdout line by line with a deadline (never hangs a test).

    The child must be started with ``stdout=subprocess.PIPE``.
    """

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        self._fd = process.stdout.fileno()
        self._buffer = b""
        self.eof = False

    def readline(self, timeout: float = 20.0) -> str | None:
        """The next line without its newline; None at end of output."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            if self.eof:
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("the child process said nothing in time")
            ready, _, _ = select.select([self._fd], [], [], remaining)
            if ready:
                chunk = os.read(self._fd, 65536)
                if chunk:
                    self._buffer += chunk
                else:
                    self.eof = True
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()


def start_python(code: str, *args: str) -> subprocess.Popen[bytes]:
    """Run ``code`` in a fresh interpreter of this environment, stdin/stdout/stderr piped."""
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def no_backup_process(store: Path) -> bool:
    """Whether no rolling-backup process (``python -m hermes_core.store.backups``) of the store
    file ``store`` is running (a command copies a store past 8 MB in one it does not wait for)."""
    wanted = str(store).encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"hermes_core.store.backups" in command and wanted in command:
            return False
    return True


def wait_for_backups(store: Path, timeout: float = 120.0) -> None:
    """Wait until the rolling-backup processes of ``store`` have ended (polling; the deadline
    only stops a hung test)."""
    deadline = time.monotonic() + timeout
    while not no_backup_process(store):
        assert time.monotonic() < deadline, f"a backup process of {store} is still running"
        time.sleep(0.05)
