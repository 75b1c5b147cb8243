"""The gateway as users run it, beside the commands they run: a real ``hermes gateway run``
(api-server platform, several workers) answers several conversations at once while ``hermes
sessions list/show/search/stats/rename/pin/export/optimize/repair --check-only`` and ``hermes
gateway status`` come and go, each in its own process; then ``kill -9`` of the gateway.

Every turn the gateway acknowledged (HTTP 200 with the answer, streamed or not) must be in the
store with its answer, every rename and pin a command reported must have held, the file must
pass ``PRAGMA integrity_check``, and no short process may ever have left the gateway holding
a deleted ``state.db-wal`` (the outside tester's report: one ``sessions list`` beside the
gateway, and half of the acknowledged turns were gone after a kill -9).

No sleeps: each conversation's turn *n* waits until the commands beside it have run
``n * STEPS // TURNS`` times, so turns and commands interleave the same way on every run, and
the gateway is killed while the conversations still send."""

from __future__ import annotations

import http.client
import json
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from beside_processes import CliBeside, Turn, check_store, deleted_store_files
from gateway_process import API_KEY, GatewayProcess, environment, write_config
from standins.openai_server import TITLE_REQUEST_MARK, OpenAIStandIn, Reply

pytestmark = pytest.mark.slow

CONVERSATIONS = 4
WORKERS = 3
ROTATIONS = 3
"""Each command of the rotation runs this many times."""
TURNS = 24
"""Turns each conversation may send; it stops earlier when the commands are done."""


class Conversation:
    """One client of the api-server: sends its turns one after the other, each answered by a
    reply scripted for it alone, and remembers what was acknowledged."""

    def __init__(self, name: str, base_url: str, standin: OpenAIStandIn) -> None:
        self.name = name
        self.url = urllib.parse.urlsplit(base_url)
        self.standin = standin
        self.acknowledged: list[Turn] = []
        self.session_id: str | None = None
        self.failure: str | None = None

    def texts(self, number: int) -> tuple[str, str]:
        return (
            f"torture question <<{self.name}:{number}>>",
            f"answer to {self.name} turn {number}",
        )

    def send(self, number: int) -> bool:
        """One turn (every third one streamed); True when it was acknowledged."""
        question, answer = self.texts(number)
        # Matched by the marker: concurrent conversations never take each other's reply.
        self.standin.add(Reply(text=answer, match=f"<<{self.name}:{number}>>"))
        stream = number % 3 == 2
        body = json.dumps(
            {
                "model": "hermes-agent",
                "messages": [{"role": "user", "content": question}],
                "stream": stream,
            }
        )
        connection = http.client.HTTPConnection(self.url.hostname, self.url.port, timeout=60)
        try:
            connection.request(
                "POST",
                f"{self.url.path}/chat/completions",
                body=body,
                headers={
                    "Content-Type": "application/json",
                    "Authorization": f"Bearer {API_KEY}",
                    "X-Hermes-Conversation": self.name,
                },
            )
            response = connection.getresponse()
            payload = response.read()
        except (OSError, http.client.HTTPException):
            return False  # the gateway was killed mid-turn: not acknowledged
        finally:
            connection.close()
        if response.status != 200:
            self.failure = f"{self.name} turn {number}: HTTP {response.status} {payload[:200]!r}"
            return False
        text = _streamed_text(payload) if stream else _answer(payload)
        if text is None:
            return False  # cut off before the end of the stream
        if text != answer:
            self.failure = f"{self.name} turn {number}: answered {text!r}, not {answer!r}"
            return False
        session_id = response.getheader("X-Hermes-Session")
        if self.session_id is None:
            self.session_id = session_id
        elif session_id != self.session_id:
            self.failure = f"{self.name}: moved from {self.session_id} to {session_id}"
            return False
        self.acknowledged.append(Turn(session_id or "", question, answer))
        return True


def _answer(payload: bytes) -> str | None:
    try:
        return str(json.loads(payload)["choices"][0]["message"]["content"])
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def _streamed_text(payload: bytes) -> str | None:
    """The text of a server-sent-events answer; None unless it ended with ``[DONE]``."""
    pieces, done = [], False
    for line in payload.decode("utf-8", "replace").splitlines():
        if not line.startswith("data: "):
            continue
        data = line[len("data: ") :]
        if data == "[DONE]":
            done = True
            break
        for choice in json.loads(data).get("choices", []):
            pieces.append(choice.get("delta", {}).get("content") or "")
    return "".join(pieces) if done else None


class Progress:
    """How many commands have finished, and whether they are all done (the clock of the
    conversations)."""

    def __init__(self) -> None:
        self.condition = threading.Condition()
        self.commands = 0
        self.finished = False

    def command_done(self) -> None:
        with self.condition:
            self.commands += 1
            self.condition.notify_all()

    def finish(self) -> None:
        with self.condition:
            self.finished = True
            self.condition.notify_all()

    def wait_for(self, commands: int) -> bool:
        """Wait until ``commands`` commands are done; False once they are all done."""
        with self.condition:
            self.condition.wait_for(lambda: self.finished or self.commands >= commands, 120)
            return not self.finished


@pytest.fixture
def standin() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn() as server:
        # Automatic titles: never answered, so a title request (which quotes the first
        # messages) cannot take a turn's reply; the model-free fallback titles the session.
        server.add(Reply.failure(400, match=TITLE_REQUEST_MARK, times=None))
        yield server


def test_turns_acknowledged_beside_short_commands_survive_a_kill_9(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    home = tmp_path / "home"
    write_config(
        home,
        standin.base_url,
        {"api-server": {"api_key": API_KEY, "port": 0, "model_name": "hermes-agent"}},
        workers=WORKERS,
    )
    gateway = GatewayProcess(home)
    with gateway:
        assert gateway.process is not None
        pid = gateway.process.pid
        base_url = gateway.addresses["api-server"]
        conversations = [
            Conversation(f"conv{index}", base_url, standin) for index in range(CONVERSATIONS)
        ]
        for conversation in conversations:  # every conversation has its session first
            assert conversation.send(0), conversation.failure
        cli = CliBeside(
            home=home,
            watched=pid,
            sessions=lambda: [c.session_id for c in conversations if c.session_id],
            env=environment(home),
            scratch=tmp_path,
        )
        steps = ROTATIONS * len(cli.rotation)
        progress = Progress()

        def converse(conversation: Conversation) -> None:
            for number in range(1, TURNS):
                if not progress.wait_for(number * steps // TURNS):
                    return
                if not conversation.send(number):
                    return

        def commands() -> None:
            try:
                for _ in range(steps):
                    cli.step()
                    progress.command_done()
            finally:
                progress.finish()

        errors: list[BaseException] = []

        def recording(target: object, *args: object) -> threading.Thread:
            def run() -> None:
                try:
                    target(*args)  # type: ignore[operator]
                except BaseException as error:
                    errors.append(error)

            thread = threading.Thread(target=run)
            thread.start()
            return thread

        threads = [recording(converse, c) for c in conversations]
        commands_thread = recording(commands)
        commands_thread.join()
        # The conversations are still sending: kill the gateway under them.
        deleted_at_end = deleted_store_files(pid)
        gateway.kill()
        for thread in threads:
            thread.join(120)
    assert cli.deleted == [] and deleted_at_end == [], (
        f"the WAL was deleted under the gateway: {(cli.deleted or deleted_at_end)[:2]}"
    )
    assert not errors, errors[0]
    assert all(c.failure is None for c in conversations), [c.failure for c in conversations]
    assert cli.ran == dict.fromkeys(cli.rotation, ROTATIONS)
    acknowledged = [turn for c in conversations for turn in c.acknowledged]
    # The turns really interleaved with the commands: most were sent while they ran.
    assert len(acknowledged) >= CONVERSATIONS * TURNS // 2, len(acknowledged)
    assert cli.titles and cli.pinned
    check_store(home, acknowledged, cli)
