"""``hermes mcp --import claude`` is a long-lived process that writes to the store (each
answer may import new Claude Code lines first) while the user's ``hermes sessions …``
commands come and go. Run both, then ``kill -9`` the server: every line an answer already
found is stored, every write a command reported held, the file is whole, and the server never
held a deleted store file (DESIGN §9; the class of tests in ``tests/beside_processes.py``)."""

from __future__ import annotations

import os
import signal
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest
from beside_processes import CliBeside, check_store
from installed_hermes import hermes_command
from mcp import ClientSession
from mcp_archive import build_archive, payload, server_environment, talk
from test_mcp_import import claude_line, claude_log

ROUNDS = 12


def server_pid(home: Path) -> int:
    """The process id of the ``hermes --home HOME mcp`` the client started."""
    wanted = [hermes_command(), "--home", str(home), "mcp"]
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if any(argv[i : i + 4] == wanted for i in range(len(argv))) or (
            len(argv) > 4 and argv[1:5] == wanted
        ):
            return int(entry)
    raise AssertionError("the hermes mcp server process was not found")


@pytest.mark.slow
def test_the_mcp_server_killed_beside_cli_commands_loses_nothing_it_answered(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    archive = build_archive(home)
    config = tmp_path / "claude"
    log = claude_log(config)
    env = server_environment(CLAUDE_CONFIG_DIR=str(config))
    found_words: list[str] = []
    holder: dict[str, Any] = {}

    async def scenario(session: ClientSession) -> None:
        pid = server_pid(home)
        cli = CliBeside(
            home=home,
            watched=pid,
            sessions=lambda: list(archive.ids.values()),
            env={**os.environ, "CLAUDE_CONFIG_DIR": str(config)},
            scratch=tmp_path,
            skip=frozenset({"gateway-status"}),
        )
        holder["cli"] = cli
        parent = "a1"
        for round_number in range(ROUNDS):
            word = f"egret{round_number:02d}x"
            with log.open("a", encoding="utf-8") as appended:
                appended.write(claude_line(f"u{round_number + 2}", parent, "user",
                                           f"now the {word} perch", round_number + 3))  # fmt: skip
            parent = f"u{round_number + 2}"
            answer = payload(await session.call_tool("session_search", {"query": word}))
            assert answer["results"], f"round {round_number}: {word} not found"
            found_words.append(word)  # acknowledged: an answer showed it
            await anyio.to_thread.run_sync(cli.step)
        os.kill(pid, signal.SIGKILL)
        holder["killed"] = pid

    ended: BaseException | None = None
    try:
        talk(home, scenario, "--import", "claude", "--import-every", "0", env=env)
    except Exception as error:  # the client's pipes may break at the kill
        ended = error
    assert "killed" in holder, f"the scenario failed before the kill: {ended!r}"

    cli = holder["cli"]
    assert cli.deleted == [], f"the server held deleted store files: {cli.deleted}"
    assert sum(cli.ran.values()) == ROUNDS
    check_store(home, [], cli)
    connection = sqlite3.connect(home / "state.db")
    try:
        stored = " ".join(
            row[0] or "" for row in connection.execute("SELECT content FROM messages")
        )
    finally:
        connection.close()
    missing = [word for word in found_words if word not in stored]
    assert not missing, f"answered, then lost at the kill: {missing}"
