"""The ACP methods of ``hermes acp``: one editor connection over the store and the turn engine.

- ``initialize``: protocol version 1, ``loadSession``, ``session/list``; text prompts.
- ``session/new``: a Hermes session of source ``acp`` whose working directory (and git facts)
  are the editor's ``cwd``; the model must be configured.
- ``session/load``: any stored session, whatever its origin, replayed as notifications and
  then continued by ``session/prompt``.
- ``session/prompt``: one turn through :class:`hermes_core.agent.TurnEngine` (which stores the
  user's turn before the model is called and each answer as it ends), streamed as
  ``session/update``; ``end_turn``, or ``cancelled`` after ``session/cancel``.
- ``session/list``: the stored sessions (see :mod:`.listing`).

Sessions this connection wrote to are ended (``user_exit``) when the editor closes the
connection, as the terminal chat ends its session (a platform's routed session is left open);
a session it created in which nothing was said is removed.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, InitializeResponse, LoadSessionResponse, NewSessionResponse
from acp.schema import (
    AgentCapabilities,
    Implementation,
    ListSessionsResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionListCapabilities,
)

from hermes_core import __version__
from hermes_core.chat.workspace import describe_workspace
from hermes_core.store.errors import SessionNotFound

from .errors import answers, failed, invalid, unknown_session
from .listing import list_page
from .replay import replay_updates
from .turns import Update, UpdateQueue, prompt_text

if TYPE_CHECKING:
    from acp.interfaces import Client
    from hermes_hookspecs import Session

    from hermes_core.agent import TurnResult
    from hermes_core.store.protocol import Store

    from .runtime import Runtime

SOURCE = "acp"
EXIT_REASON = "user_exit"


@dataclass
class OpenSession:
    """A session this connection created or loaded."""

    hermes_id: str
    """The stored session the next turn goes to (a compression continuation after one)."""
    cancel: threading.Event | None = None
    """Set by ``session/cancel``; present while a turn runs."""
    written: bool = False
    """A turn ran in it through this connection (it is ended when the connection closes)."""
    created: bool = False
    """``session/new`` made it (left without a message, it is removed when the connection
    closes: nothing was said, as the terminal chat records no session without a message)."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class HermesAgent:
    """The agent side of one editor connection."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.sessions: dict[str, OpenSession] = {}
        self._client: Client | None = None

    def on_connect(self, conn: Client) -> None:
        """Keep the connection: updates are sent through it."""
        self._client = conn

    async def _send(self, session_id: str, update: Update) -> None:
        assert self._client is not None
        await self._client.session_update(session_id, update)

    # -- initialize ---------------------------------------------------------------------

    @answers
    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        """Protocol version 1 (the only one there is), whatever the editor asked for."""
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="hermes", title="Hermes", version=__version__),
            auth_methods=[],
        )

    # -- sessions -----------------------------------------------------------------------

    @answers
    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        """A new ``acp`` session in the editor's ``cwd``."""
        directory = _absolute(cwd)
        found = await self.runtime.call(lambda _store: self.runtime.model())  # one line if none
        model = found.settings.model

        def create(store: Store) -> Session:
            place = describe_workspace(directory)
            return store.create_session(
                SOURCE,
                cwd=place.cwd,
                git_branch=place.git_branch,
                git_repo_root=place.git_repo_root,
                model=model,
            )

        session = await self.runtime.call(create)
        self.sessions[session.id] = OpenSession(session.id, created=True)
        return NewSessionResponse(session_id=session.id)

    @answers
    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse:
        """Replay ``session_id``'s history (any origin), then continue it here."""
        _absolute(cwd)
        opened = self.sessions.get(session_id)
        target = opened.hermes_id if opened is not None else session_id

        def history(store: Store) -> list[Update]:
            if not _exists(store, target):
                raise unknown_session(session_id)
            return list(replay_updates(store.iter_messages(target)))

        updates = await self.runtime.call(history)
        for update in updates:
            await self._send(session_id, update)
        if opened is None:
            self.sessions[session_id] = OpenSession(session_id)
        return LoadSessionResponse()

    @answers
    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """A page of the stored sessions, newest activity first."""
        return await self.runtime.call(
            lambda store: list_page(store, self.runtime.home, cwd, cursor)
        )

    # -- turns --------------------------------------------------------------------------

    @answers
    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        """One turn, streamed; ``end_turn``, or ``cancelled`` after ``session/cancel``."""
        opened = self.sessions.get(session_id)
        if opened is None:
            if not await self.runtime.call(lambda store: _exists(store, session_id)):
                raise unknown_session(session_id)
            raise invalid(f"session {session_id} is not open here: load it first (session/load)")
        text = prompt_text(prompt)
        if not text.strip():
            raise invalid("the prompt has no text")
        if opened.lock.locked():
            raise invalid(f"session {session_id} is already answering a prompt")
        async with opened.lock:
            cancel = threading.Event()
            opened.cancel = cancel
            try:
                await self.runtime.call(lambda _store: self.runtime.model())  # one line if none
            except BaseException:
                opened.cancel = None
                raise
            queue = UpdateQueue(asyncio.get_running_loop())
            sending = asyncio.ensure_future(
                queue.send_all(lambda update: self._send(session_id, update))
            )
            target = opened.hermes_id

            def turn(store: Store) -> TurnResult:
                try:
                    if not opened.written:
                        _reopen(store, target)
                    opened.written = True
                    return self.runtime.engine(store).run_turn(
                        target, text, listener=queue, cancel=cancel
                    )
                finally:
                    queue.finish()

            try:
                result = await self.runtime.call(turn)
            except BaseException:
                cancel.set()  # the editor went away (or the store failed): stop the model
                sending.cancel()
                raise
            finally:
                opened.cancel = None
            await sending
        opened.hermes_id = result.session_id  # a compression continues in a new session
        if result.interrupted or cancel.is_set():
            return PromptResponse(stop_reason="cancelled")
        if result.error:
            raise failed(result.error)
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Stop the turn in flight in ``session_id`` (what was said is kept)."""
        opened = self.sessions.get(session_id)
        if opened is not None and opened.cancel is not None:
            opened.cancel.set()

    # -- the end ------------------------------------------------------------------------

    def stop_turns(self) -> None:
        """Cancel every turn still running (the editor went away)."""
        for opened in self.sessions.values():
            if opened.cancel is not None:
                opened.cancel.set()

    def finish(self, store: Store) -> None:
        """End the sessions this connection wrote to (not a platform's routed session); remove
        the ones it created in which nothing was said."""
        for opened in self.sessions.values():
            if opened.created and not opened.written:
                if store.message_count(opened.hermes_id) == 0:
                    store.delete_session(opened.hermes_id)
                continue
            if not opened.written:
                continue
            session = store.get_session(opened.hermes_id)
            if session.session_key is None and session.ended_at is None:
                store.end_session(session.id, EXIT_REASON)


def _exists(store: Store, session_id: str) -> bool:
    try:
        store.get_session(session_id)
    except SessionNotFound:
        return False
    return True


def _reopen(store: Store, session_id: str) -> None:
    """Continuing an ended session clears its end marks (as resuming it in the chat does); a
    platform's routed session is left to the gateway's rules."""
    session = store.get_session(session_id)
    if session.ended_at is not None and session.session_key is None:
        store.reopen_session(session_id)


def _absolute(cwd: str) -> Path:
    directory = Path(cwd)
    if not directory.is_absolute():
        raise invalid(f"cwd {cwd!r} is not an absolute path")
    return directory
