"""Short ``hermes`` processes beside a long-lived one (a gateway, a chat) on one store.

The tests of this class (``tests/gateway/test_gateway_beside_cli.py``,
``tests/chat/test_chat_beside_cli.py``) run the installed commands a user runs while a
gateway or a chat holds the store open, then ``kill -9`` the long-lived process and check
the file. One ``open()``/``close()`` of ``state.db`` by path in the long-lived process drops
its POSIX locks; the next short process to close then believes it is the last one,
checkpoints and deletes the write-ahead log under it, and what the long-lived process
acknowledged afterwards is lost at its kill (DESIGN §9). What this module gives:

- :func:`deleted_store_files`: the store files a process holds whose name is gone
  (``/proc/<pid>/fd`` entries ending in ``(deleted)``), checked after every short process;
- :class:`CliBeside`: the commands, one after the other in a fixed rotation, each required to
  succeed, remembering the writes they reported (titles, pins);
- :func:`check_store`: after the kill, integrity, every acknowledged turn and every reported
  write, read with plain ``sqlite3``.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from installed_hermes import hermes_command

STATE_DB = "state.db"

COMMANDS = (
    "list",
    "show",
    "rename",
    "search",
    "stats",
    "pin",
    "gateway-status",
    "export",
    "optimize",
    "repair",
)
"""The rotation: readers, writers (rename, pin) and the maintenance commands (export,
``optimize`` — an FTS merge and a VACUUM —, ``repair --check-only``)."""


def deleted_store_files(pid: int) -> list[str]:
    """What process ``pid`` holds open of a ``state.db`` (or its ``-wal``/``-shm``) that no
    longer has a name."""
    found = []
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return found
    for descriptor in descriptors:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{descriptor}")
        except OSError:
            continue  # closed meanwhile
        if STATE_DB in os.path.basename(target) and target.endswith("(deleted)"):
            found.append(target)
    return found


@dataclass(frozen=True)
class Turn:
    """One acknowledged turn: the user's text and the answer the process gave for it."""

    session_id: str
    question: str
    answer: str


@dataclass
class CliBeside:
    """Runs ``hermes`` commands on ``home`` in the rotation :data:`COMMANDS`, each in a fresh
    process that must exit 0; after each, ``watched`` (the long-lived process) must hold no
    deleted store file.

    ``sessions`` gives the session ids that ``show``, ``rename`` and ``pin`` may use (taken
    in turn); ``skip`` leaves commands out (``gateway-status`` where no gateway runs)."""

    home: Path
    watched: int
    sessions: Callable[[], Sequence[str]]
    env: Mapping[str, str]
    scratch: Path
    skip: frozenset[str] = frozenset()
    titles: dict[str, str] = field(default_factory=dict)
    """Session id → the title its last successful rename set."""
    pinned: set[str] = field(default_factory=set)
    ran: dict[str, int] = field(default_factory=dict)
    """Command → how many times it ran (and succeeded)."""
    deleted: list[tuple[str, list[str]]] = field(default_factory=list)
    """(command, deleted files) for every check that found some."""
    steps: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def rotation(self) -> list[str]:
        return [name for name in COMMANDS if name not in self.skip]

    def run_rotation(self) -> None:
        for _ in self.rotation:
            self.step()

    def step(self) -> str:
        """Run the next command of the rotation; returns its name."""
        with self._lock:
            number = self.steps
            self.steps += 1
        rotation = self.rotation
        name = rotation[number % len(rotation)]
        ids = list(self.sessions())
        assert ids, "no session to run the commands on yet"
        session_id = ids[(number // len(rotation)) % len(ids)]
        args, check = self._command(name, number, session_id)
        done = subprocess.run(
            [hermes_command(), "--home", str(self.home), *args],
            env=dict(self.env),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, (
            f"hermes {' '.join(args)} exited {done.returncode}: {done.stderr or done.stdout}"
        )
        check(done.stdout)
        deleted = deleted_store_files(self.watched)
        with self._lock:
            self.ran[name] = self.ran.get(name, 0) + 1
            if deleted:
                self.deleted.append((name, deleted))
        return name

    def _command(
        self, name: str, number: int, session_id: str
    ) -> tuple[list[str], Callable[[str], None]]:
        def nothing(_: str) -> None:
            pass

        if name == "list":
            return ["sessions", "list", "--all", "--limit", "50"], nothing
        if name == "show":
            return ["sessions", "show", session_id], nothing
        if name == "search":
            return ["sessions", "search", "torture"], nothing
        if name == "stats":
            return ["sessions", "stats"], nothing
        if name == "gateway-status":
            return ["gateway", "status"], lambda out: _expect("Gateway: running", out)
        if name == "optimize":
            return ["sessions", "optimize"], nothing
        if name == "repair":
            return ["sessions", "repair", "--check-only"], lambda out: _expect(
                "no problems found", out
            )
        if name == "export":
            target = self.scratch / f"export-{number}.jsonl"

            def exported(out: str) -> None:
                _expect("Exported", out)
                assert target.stat().st_size > 0

            return ["sessions", "export", str(target)], exported
        if name == "rename":
            title = f"beside {number}"

            def renamed(out: str) -> None:
                _expect(f"Renamed {session_id} to '{title}'", out)
                with self._lock:
                    self.titles[session_id] = title

            return ["sessions", "rename", session_id, title], renamed
        if name == "pin":

            def pinned(out: str) -> None:
                _expect(f"Pinned {session_id}", out)
                with self._lock:
                    self.pinned.add(session_id)

            return ["sessions", "pin", session_id], pinned
        raise AssertionError(f"unknown command {name}")


def _expect(text: str, output: str) -> None:
    assert text in output, f"expected {text!r} in:\n{output}"


def check_store(home: Path, turns: Sequence[Turn], cli: CliBeside) -> None:
    """After the kill: the file is whole, every acknowledged turn is stored (the question,
    and the answer right after it), and every write a command reported held."""
    connection = sqlite3.connect(home / STATE_DB)
    try:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        by_session: dict[str, list[tuple[str, str]]] = {}
        for session_id in {turn.session_id for turn in turns}:
            by_session[session_id] = [
                (role, content or "")
                for role, content in connection.execute(
                    "SELECT role, content FROM messages WHERE session_id = ? ORDER BY id",
                    (session_id,),
                )
            ]
        missing = []
        for turn in turns:
            stored = by_session[turn.session_id]
            pair = [("user", turn.question), ("assistant", turn.answer)]
            if not any(stored[i : i + 2] == pair for i in range(len(stored) - 1)):
                missing.append(turn)
        assert not missing, f"{len(missing)} acknowledged turn(s) lost, e.g. {missing[:3]}"
        for session_id, title in cli.titles.items():
            row = connection.execute(
                "SELECT title FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            assert row == (title,), f"{session_id}: renamed to {title!r}, stored {row}"
        for session_id in cli.pinned:
            row = connection.execute(
                "SELECT pinned FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            assert row == (1,), f"{session_id}: pinned, stored {row}"
    finally:
        connection.close()
