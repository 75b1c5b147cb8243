"""The terminal chat as people use it, beside the commands they run in another terminal: the
installed ``hermes chat`` in a pseudo-terminal answers message after message while ``hermes
sessions list/show/search/stats/rename/pin/export/optimize/repair --check-only`` run in turn,
each in its own process — between the messages, and while an answer is still streaming —
then ``kill -9`` of the chat mid-answer.

Every answer the chat showed and got back to its prompt for (the turn is stored before the
prompt returns) must be in the store after its message, every rename and pin held, the file
whole, and no short process may ever have left the chat holding a deleted ``state.db-wal``
(DESIGN §9; ``tests/beside_processes.py``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path

import pexpect
import pytest
from beside_processes import CliBeside, Turn, check_store, deleted_store_files
from chat_helpers import PROMPT, chat_env, say, spawn_chat
from installed_hermes import hermes_command
from standins.openai_server import OpenAIStandIn, Reply

pytestmark = pytest.mark.slow

MESSAGES = 6
COMMANDS_BETWEEN = 2
"""Commands run after each answered message; a whole rotation runs during one answer."""


def _session_ids(home: Path, env: dict[str, str]) -> list[str]:
    listed = subprocess.run(
        [hermes_command(), "--home", str(home), "sessions", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [row["id"] for row in json.loads(listed.stdout)]


def test_answers_shown_beside_short_commands_survive_a_kill_9(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    home = tmp_path / "home"
    env = chat_env(tmp_path, server)
    during = threading.Event()  # the answer commands run under
    never = threading.Event()  # the answer the chat is killed in
    turns: list[Turn] = []
    child = spawn_chat(env, "chat")
    try:
        cli: CliBeside | None = None
        for number in range(MESSAGES + 1):
            question = f"torture message {number}"
            answer = f"Answer number {number}, from the stand-in."
            held = number == MESSAGES // 2
            last = number == MESSAGES
            hold = during if held else never if last else None
            server.add(Reply(text=answer, hold=hold, hold_after_chunks=2))
            if number == 0:
                say(child, question)  # at the first prompt
            else:
                child.send(question + "\r")  # at the prompt the last answer ended with
            if hold is not None:
                # The user turn is stored before the model is asked; requests so far: one
                # per message, plus the automatic title's after the first.
                server.wait_for_requests(number + 2)
                if last:
                    break  # killed mid-answer: never acknowledged
                assert cli is not None
                cli.run_rotation()
                during.set()
            child.expect_exact(answer)
            child.expect_exact(PROMPT)  # the turn is stored: acknowledged
            if number == 0:
                server.wait_for_requests(2)  # the automatic title came and went
                session_ids = _session_ids(home, env)
                assert len(session_ids) == 1
                cli = CliBeside(
                    home=home,
                    watched=child.pid,
                    sessions=lambda ids=session_ids: ids,
                    env=env,
                    scratch=tmp_path,
                    skip=frozenset({"gateway-status"}),
                )
            assert cli is not None
            turns.append(Turn(cli.sessions()[0], question, answer))
            for _ in range(COMMANDS_BETWEEN):
                cli.step()
        deleted_at_end = deleted_store_files(child.pid)
        os.kill(child.pid, signal.SIGKILL)
        child.expect(pexpect.EOF)
        child.close()
    finally:
        during.set()
        never.set()
        if child.isalive():
            child.close(force=True)
    assert child.signalstatus == signal.SIGKILL, "the chat was really killed"
    assert cli is not None
    assert cli.deleted == [] and deleted_at_end == [], (
        f"the WAL was deleted under the chat: {(cli.deleted or deleted_at_end)[:2]}"
    )
    assert set(cli.ran) == set(cli.rotation), cli.ran  # every command ran at least once
    assert cli.titles and cli.pinned
    assert len(turns) == MESSAGES
    check_store(home, turns, cli)
