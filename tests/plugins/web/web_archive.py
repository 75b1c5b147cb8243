"""A small archive for the ``hermes serve`` tests, and the installed server run against it.

:func:`build_archive` writes, into a real home, sessions of several origins and workspaces,
a lineage (a parent, its compression continuation, a branch and a delegate), a session with
a script-like payload in every field a page shows, a long session and a planted secret — in ``state.db`` or in the PostgreSQL database the home's
``config.yaml`` names.
:class:`Served` starts the installed ``hermes --home HOME serve --port 0 …`` as a separate
process, reads the address from its first line and stops it at the end (imported by name: a
module called ``conftest`` resolves to whichever conftest loaded last).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from hermes_hookspecs import Message, ToolCall
from installed_hermes import hermes_command
from postgres_cluster import open_home_store

from hermes_core.store.protocol import Store

DAY = 86_400.0
SECRET = "ghp_" + "Q8s2Lk4Vb7Nn1Xz5Cc9Rr3Tt6Yy0Uu2Ii4Oo"
"""A GitHub token planted in one session (the redaction rules catch it)."""

ATTACK_HOST = "attacker.invalid"
PAYLOADS = (
    f"<img src=//{ATTACK_HOST}/img onerror=\"window.__xss='img';fetch('//{ATTACK_HOST}/f')\">",
    "<script>window.__xss='script'</script>",
    '"><svg onload="window.__xss=\'svg\'"><a href="javascript:window.__xss=\'a\'">x</a>',
    f"</textarea><iframe src=\"//{ATTACK_HOST}/frame\"></iframe><style>@import '//{ATTACK_HOST}/css';</style>",
    f'<meta http-equiv=refresh content="0;url=//{ATTACK_HOST}/"><base href="//{ATTACK_HOST}/">',
)
HOSTILE = " ".join(PAYLOADS)
"""Every payload in one string, planted in every field a page shows."""
SHORT_HOSTILE = f"<img src=//{ATTACK_HOST}/t onerror=window.__xss=1><script>window.__xss=2</script>"
"""For fields with a length limit (titles: 100 characters)."""
SOURCE_HOSTILE = f"<img src=//{ATTACK_HOST}/s onerror=window.__xss=3>"
"""A source name (at most 64 printable characters)."""
HOSTILE_WORD = "xenolith"
"""A word planted beside the payloads, so a search shows them in its snippet."""


@dataclass
class Archive:
    home: Path
    ids: dict[str, str] = field(default_factory=dict)


def _turns(store: Store, session_id: str, turns: list[tuple[str, str]], start: float) -> None:
    store.append_messages(
        session_id,
        [
            Message(role, text, timestamp=start + index * 10)  # type: ignore[arg-type]
            for index, (role, text) in enumerate(turns)
        ],
    )


def build_archive(home: Path, *, long_messages: int = 450) -> Archive:
    archive = Archive(home)
    now = time.time()
    with open_home_store(home) as store:
        planted = store.create_session(
            "cli", title="Quokka migration plan", started_at=now - 5 * DAY, cwd="/work/zoo"
        )
        _turns(
            store,
            planted.id,
            [
                ("user", "how do we move the quokka enclosure database"),
                ("assistant", "copy the quokka enclosure rows with the mover script"),
            ],
            now - 5 * DAY,
        )
        store.end_session(planted.id, "user_exit")
        archive.ids["planted"] = planted.id

        parent = store.create_session(
            "cli", title="Heron pipeline", started_at=now - 4 * DAY, cwd="/work/heron"
        )
        _turns(
            store,
            parent.id,
            [("user", "build the heron pipeline"), ("assistant", "the heron pipeline is built")],
            now - 4 * DAY,
        )
        continuation = store.continue_after_compression(parent.id)
        _turns(
            store,
            continuation.id,
            [("user", "heron pipeline part two"), ("assistant", "part two done")],
            now - 4 * DAY + 500,
        )
        branch = store.create_session(
            "cli",
            started_at=now - 4 * DAY + 600,
            parent_session_id=parent.id,
            parent_kind="branch",
            title="Heron side road",
        )
        _turns(store, branch.id, [("user", "try the heron side road")], now - 4 * DAY + 600)
        delegate = store.create_session(
            "cli",
            started_at=now - 4 * DAY + 700,
            parent_session_id=continuation.id,
            parent_kind="delegate",
            title="Heron helper",
        )
        _turns(store, delegate.id, [("user", "helper task for the heron")], now - 4 * DAY + 700)
        archive.ids.update(
            parent=parent.id, continuation=continuation.id, branch=branch.id, delegate=delegate.id
        )

        hostile = store.create_session(
            SOURCE_HOSTILE,
            title=f"{HOSTILE_WORD} {SHORT_HOSTILE}",
            started_at=now - 3 * DAY,
            cwd=f"/work/{HOSTILE}",
            model=HOSTILE,
            git_branch=HOSTILE,
        )
        store.append_messages(
            hostile.id,
            [
                Message("user", f"{HOSTILE_WORD} {HOSTILE}", timestamp=now - 3 * DAY),
                Message(
                    "assistant",
                    f"{HOSTILE_WORD} answer {HOSTILE}",
                    reasoning=HOSTILE,
                    tool_calls=[ToolCall(id=HOSTILE[:40], name=HOSTILE, arguments=HOSTILE)],
                    timestamp=now - 3 * DAY + 1,
                ),
                Message(
                    "tool",
                    f"{HOSTILE_WORD} tool output {HOSTILE}",
                    tool_name=HOSTILE,
                    tool_call_id=HOSTILE[:40],
                    timestamp=now - 3 * DAY + 2,
                ),
            ],
        )
        archive.ids["hostile"] = hostile.id

        secret = store.create_session(
            "telegram", title="Deploy settings", started_at=now - 2 * DAY, cwd="/work/deploy"
        )
        _turns(
            store,
            secret.id,
            [
                ("user", "which token do we use for the walrus deploy"),
                ("assistant", f"use {SECRET} for the walrus deploy"),
            ],
            now - 2 * DAY,
        )
        archive.ids["secret"] = secret.id

        long = store.create_session("cli", title="Long llama log", started_at=now - DAY)
        _turns(
            store,
            long.id,
            [
                ("user" if i % 2 == 0 else "assistant", f"llama line {i:05d}")
                for i in range(long_messages)
            ],
            now - DAY,
        )
        archive.ids["long"] = long.id

        pinned = store.create_session(
            "cli", title="Pinned penguin notes", started_at=now - 30 * DAY
        )
        _turns(store, pinned.id, [("user", "penguin notes")], now - 30 * DAY)
        store.set_pinned([pinned.id], True)
        archive.ids["pinned"] = pinned.id

        archived = store.create_session(
            "cli", title="Archived albatross", started_at=now - 40 * DAY
        )
        _turns(store, archived.id, [("user", "albatross facts")], now - 40 * DAY)
        store.end_session(archived.id, "user_exit")
        store.set_archived([archived.id], True)
        archive.ids["archived"] = archived.id
    return archive


def server_environment() -> dict[str, str]:
    """The test's environment without any HERMES_ setting (every plugin installed loads)."""
    return {key: value for key, value in os.environ.items() if not key.startswith("HERMES_")}


class Served:
    """A running ``hermes --home HOME serve --port 0 OPTIONS…``."""

    def __init__(self, home: Path, *options: str) -> None:
        self.process = subprocess.Popen(
            [hermes_command(), "--home", str(home), "serve", "--port", "0", *options],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=server_environment(),
        )
        assert self.process.stdout is not None
        self.first_line = self.process.stdout.readline().strip()
        if not self.first_line.startswith("http://127.0.0.1:"):
            self.stop()
            raise AssertionError(f"unexpected first line {self.first_line!r}")
        self.url = self.first_line
        parts = urlsplit(self.url)
        self.base = f"{parts.scheme}://{parts.netloc}"
        self.port = parts.port
        self.token = parts.query.removeprefix("token=")

    def stop(self) -> str:
        """Stop the server; returns what it wrote on stderr."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        errors = self.process.stderr.read() if self.process.stderr else ""
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return errors


APPEND_SCRIPT = """
import sys, time
from pathlib import Path
from hermes_hookspecs import Message
from hermes_core.plugins import PluginHost
from hermes_core.store.backends import open_store
with open_store(Path(sys.argv[1]), host=PluginHost()) as store:
    if sys.argv[2] == "new":
        session = store.create_session("cli", title=sys.argv[3])
        store.append_message(session.id, Message("user", sys.argv[3], timestamp=time.time()))
        print(session.id)
    else:
        store.append_message(sys.argv[2], Message("assistant", sys.argv[3], timestamp=time.time()))
"""


def append_from_another_process(home: Path, session_id: str, text: str) -> str:
    """Append ``text`` to a session (``session_id="new"``: a new session titled ``text``) from
    a separate Python process, as a chat or the gateway would; returns its output."""
    done = subprocess.run(
        [sys.executable, "-c", APPEND_SCRIPT, str(home), session_id, text],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()
