"""A small archive for the ``hermes mcp`` tests, and a way to talk to the real server.

:func:`build_archive` writes sessions of several origins, workspaces and ages into a home;
:func:`talk` starts the installed ``hermes --home HOME mcp …`` as a separate process through
the MCP SDK's own stdio client and runs a scenario against it (imported by name: a module
called ``conftest`` resolves to whichever conftest loaded last).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import anyio
from hermes_hookspecs import Message
from installed_hermes import hermes_command
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from hermes_core.store import SessionStore

DAY = 86_400.0
SECRET = "ghp_" + "Q8s2Lk4Vb7Nn1Xz5Cc9Rr3Tt6Yy0Uu2Ii4Oo"
"""A GitHub token planted in one session (the redaction rules catch it)."""

T = TypeVar("T")


@dataclass
class Archive:
    home: Path
    ids: dict[str, str] = field(default_factory=dict)
    messages: dict[str, list[int]] = field(default_factory=dict)


def _add(
    store: SessionStore,
    archive: Archive,
    name: str,
    turns: list[tuple[str, str]],
    *,
    ago_days: float,
    source: str = "cli",
    cwd: str | None = None,
    title: str | None = None,
) -> None:
    started = time.time() - ago_days * DAY
    session = store.create_session(source, title=title, started_at=started, cwd=cwd)
    batch = [
        Message(role, text, timestamp=started + index * 10)  # type: ignore[arg-type]
        for index, (role, text) in enumerate(turns)
    ]
    archive.ids[name] = session.id
    archive.messages[name] = list(store.append_messages(session.id, batch))
    store.end_session(session.id, "user_exit")


def build_archive(home: Path) -> Archive:
    archive = Archive(home)
    with SessionStore.open(home) as store:
        _add(
            store,
            archive,
            "alpha_old",
            [
                ("user", "how do we rotate the flamingo certificates"),
                ("assistant", "rotate the flamingo certificates with the renew script"),
            ],
            ago_days=20,
            cwd="/work/alpha",
            title="Flamingo certificates",
        )
        long_turns = [("user", "start the pelican migration")]
        for step in range(1, 30):
            long_turns.append(("assistant", f"pelican migration step {step} done"))
            long_turns.append(("user", f"next step {step + 1}"))
        _add(store, archive, "alpha_new", long_turns, ago_days=1, cwd="/work/alpha/api")
        _add(
            store,
            archive,
            "beta",
            [
                ("user", "flamingo dashboard colours for the beta site"),
                ("assistant", f"set the token {SECRET} in the flamingo deploy settings"),
            ],
            ago_days=2,
            cwd="/work/beta",
            title="Beta flamingo dashboard",
        )
        _add(
            store,
            archive,
            "telegram",
            [("user", "remind me about the flamingo vet"), ("assistant", "noted: flamingo vet")],
            ago_days=3,
            source="telegram",
        )
    return archive


def server_environment(**extra: str) -> dict[str, str]:
    """The environment the server starts with (the test's own, a clean plugin choice)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("HERMES_")}
    env.update(extra)
    return env


def talk(
    home: Path,
    scenario: Callable[[ClientSession], Awaitable[T]],
    *options: str,
    env: dict[str, str] | None = None,
) -> T:
    """Start ``hermes --home HOME mcp OPTIONS…`` over stdio, initialise, run ``scenario``;
    the server stops when the client closes its stdin."""

    async def run() -> T:
        parameters = StdioServerParameters(
            command=hermes_command(),
            args=["--home", str(home), "mcp", *options],
            env=env or server_environment(),
        )
        async with (
            stdio_client(parameters) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await scenario(session)

    return anyio.run(run)


def payload(result: types.CallToolResult) -> dict[str, Any]:
    """The JSON payload of a successful tool call (the text, checked against the structure)."""
    assert not result.isError, result.content
    assert isinstance(result.content[0], types.TextContent)
    data: dict[str, Any] = json.loads(result.content[0].text)
    assert result.structuredContent == data
    return data


def error_text(result: types.CallToolResult) -> str:
    """The one-line message of a tool error."""
    assert result.isError, result.content
    assert isinstance(result.content[0], types.TextContent)
    text = result.content[0].text
    assert "\n" not in text and "Traceback" not in text
    return text
