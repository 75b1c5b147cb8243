"""Talking to the installed ``hermes acp`` as an editor does: the ACP Python SDK's client side
over the process's stdin/stdout, with the model stand-in (tests/standins/openai_server.py) as
the configured endpoint (imported by name: a module called ``conftest`` resolves to whichever
conftest loaded last).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.schema import AgentMessageChunk, TextContentBlock, UserMessageChunk
from installed_hermes import hermes_command
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.builtins.model_titles import TITLE_PROMPT

API_KEY = "sk-standin-acp"
TITLE_MARK = TITLE_PROMPT[:40]
STEP_TIMEOUT = 60.0


@pytest.fixture
def server() -> Iterator[OpenAIStandIn]:
    """The stand-in endpoint; automatic-title requests always get the same short answer."""
    with OpenAIStandIn(api_key=API_KEY) as standin:
        standin.add(Reply(text="Editor chat", match=TITLE_MARK, times=None, usage=(5, 2)))
        yield standin


def agent_env(home: Path, server: OpenAIStandIn | None) -> dict[str, str]:
    """The environment of ``hermes acp``: its own home, the stand-in as the model."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("HERMES_", "OPENAI_"))
    }
    env["HERMES_HOME"] = str(home)
    env["HOME"] = str(home.parent / "user")
    if server is not None:
        env["HERMES_MODEL_BASE_URL"] = server.base_url
        env["HERMES_MODEL"] = "standin-model"
        env["OPENAI_API_KEY"] = API_KEY
    return env


def hermes(home: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``hermes --home HOME ARGS…`` run to its end (the CLI beside the agent)."""
    return subprocess.run(
        [hermes_command(), "--home", str(home), *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env=env,
    )


def shown_session(home: Path, env: dict[str, str], session_id: str) -> dict[str, Any]:
    """What ``hermes sessions show ID --json`` prints."""
    shown = hermes(home, env, "sessions", "show", session_id, "--json")
    assert shown.returncode == 0, shown.stderr
    session: dict[str, Any] = json.loads(shown.stdout)
    return session


def shown_messages(home: Path, env: dict[str, str], session_id: str) -> list[dict[str, Any]]:
    """The messages ``hermes sessions show ID --json`` prints."""
    messages: list[dict[str, Any]] = shown_session(home, env, session_id)["messages"]
    return messages


@dataclass
class Editor:
    """The client side: records every ``session/update`` it is sent."""

    updates: list[tuple[str, Any]] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self.arrived.set()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("hermes acp asked for a permission")

    def agent_text(self, session_id: str) -> list[str]:
        """The ``agent_message_chunk`` texts sent for ``session_id``, in order."""
        return [
            update.content.text
            for sid, update in self.updates
            if sid == session_id
            and isinstance(update, AgentMessageChunk)
            and isinstance(update.content, TextContentBlock)
        ]

    def user_text(self, session_id: str) -> list[str]:
        return [
            update.content.text
            for sid, update in self.updates
            if sid == session_id
            and isinstance(update, UserMessageChunk)
            and isinstance(update.content, TextContentBlock)
        ]

    async def wait_for_text(self, session_id: str, pieces: int) -> None:
        """Until at least ``pieces`` answer chunks arrived for ``session_id``."""

        async def poll() -> None:
            while len(self.agent_text(session_id)) < pieces:
                self.arrived.clear()
                await self.arrived.wait()

        await asyncio.wait_for(poll(), STEP_TIMEOUT)


@dataclass
class Running:
    conn: ClientSideConnection
    editor: Editor
    process: asyncio.subprocess.Process

    async def stderr(self) -> str:
        assert self.process.stderr is not None
        return (await self.process.stderr.read()).decode("utf-8", "replace")


@asynccontextmanager
async def hermes_acp(
    home: Path, server: OpenAIStandIn | None, *, cwd: Path | None = None
) -> AsyncIterator[Running]:
    """The installed ``hermes --home HOME acp`` as a separate process, initialised."""
    editor = Editor()
    async with spawn_agent_process(
        lambda _agent: editor,  # type: ignore[arg-type,return-value]
        hermes_command(),
        "--home",
        str(home),
        "acp",
        env=agent_env(home, server),
        cwd=cwd or home.parent,
        transport_kwargs={"shutdown_timeout": 30.0},
    ) as (conn, process):
        answer = await asyncio.wait_for(conn.initialize(protocol_version=1), STEP_TIMEOUT)
        assert answer.protocol_version == 1
        yield Running(conn, editor, process)


def run(coroutine: Any) -> Any:
    """Run one scenario to its end."""
    return asyncio.run(coroutine)
