"""One chat's state over the turn engine: which session is current, when it is created, and
what ``/title``, ``/new``, ``/compress``, ``/branch`` and ``/resume`` do to it.

The session row is created at the first message (SPEC S4: a ``/title`` before it is queued
under the id the session will get), with the CLI id form (6 hex digits, S3), the working
directory and git facts. Every message goes through :meth:`TurnEngine.run_turn`, which stores
each step as it happens; nothing here writes messages. This module draws nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_hookspecs import Session, UserFacingError

from .crumbs import CrumbJar
from .workspace import describe_workspace

if TYPE_CHECKING:
    from hermes_core.agent import TurnEngine, TurnListener, TurnResult
    from hermes_core.store.protocol import Store


class ChatError(UserFacingError):
    """A chat action that cannot be done now; the message is one line."""


class Conversation:
    """The current session of one chat and the actions on it."""

    def __init__(
        self,
        store: Store,
        engine: TurnEngine,
        *,
        model: str | None = None,
        crumbs: CrumbJar | None = None,
        terminal: str | None = None,
        directory: Callable[[], Path] = Path.cwd,
    ) -> None:
        self.store = store
        self.engine = engine
        self.model = model
        self._crumbs = crumbs
        self._terminal = terminal
        self._directory = directory
        self.session_id = self._fresh_id()
        self.started = False
        """Whether the current session's row exists (False until the first message)."""
        self.handed_off = False
        """True once ``/handoff`` moved the session to a platform: leaving does not end it."""

    @staticmethod
    def _fresh_id() -> str:
        from hermes_core.store.ids import new_session_id

        return new_session_id(gateway=False)

    def _remember(self) -> None:
        if self._crumbs is not None and self._terminal is not None:
            self._crumbs.write(self._terminal, self.session_id)

    def _switch(self, session_id: str) -> None:
        self.session_id = session_id
        self.started = True
        self._remember()

    # -- the current session -----------------------------------------------------------

    def session(self) -> Session | None:
        """The current session's row, or None before the first message."""
        return self.store.get_session(self.session_id) if self.started else None

    def attach(self, session_id: str) -> Session:
        """Continue ``session_id`` (a resume): its end marks are cleared, the terminal's crumb
        points at it."""
        self.store.reopen_session(session_id)
        self._switch(session_id)
        return self.store.get_session(session_id)

    def ensure_started(self) -> str:
        """Create the current session's row if it does not exist yet; its id."""
        if not self.started:
            place = describe_workspace(self._directory())
            self.store.create_session(
                "cli",
                session_id=self.session_id,
                cwd=place.cwd,
                git_branch=place.git_branch,
                git_repo_root=place.git_repo_root,
                model=self.model,
            )
            self._switch(self.session_id)
        return self.session_id

    def send(
        self,
        text: str,
        *,
        listener: TurnListener | None = None,
        cancel: threading.Event | None = None,
    ) -> TurnResult:
        """One turn: the user's ``text`` and everything the model does in reply."""
        self.ensure_started()
        result = self.engine.run_turn(self.session_id, text, listener=listener, cancel=cancel)
        if result.session_id != self.session_id:
            self._switch(result.session_id)  # compressed automatically into a continuation
        return result

    def end(self, reason: str = "user_exit") -> Session | None:
        """End the current session (if it was started) with ``reason``."""
        if not self.started:
            return None
        return self.store.end_session(self.session_id, reason)

    # -- slash-command actions ---------------------------------------------------------

    def title(self) -> str | None:
        """The current title (None when untitled or not started)."""
        session = self.session()
        return session.title if session is not None else None

    def set_title(self, name: str) -> str:
        """Title the current session; before its first message the title is queued and
        applied when the row is created. Returns the title as stored."""
        from hermes_core.store.titles import sanitize_title

        if self.started:
            stored = self.store.set_title(self.session_id, name).title
            return stored or name
        self.store.queue_title(self.session_id, name)
        return sanitize_title(name) or name

    def new(self, name: str | None = None) -> None:
        """``/new``: end the current session (reason ``new_session``) and begin a fresh one,
        titled ``name`` when given (a title in use is refused before anything changes)."""
        fresh = self._fresh_id()
        if name:
            self.store.queue_title(fresh, name)
        self.end("new_session")
        self.session_id = fresh
        self.started = False

    def compress(self, listener: TurnListener | None = None) -> Session:
        """``/compress``: a continuation session seeded with a summary (S6)."""
        if not self.started or not self.store.get_session(self.session_id).message_count:
            raise ChatError("nothing to compress yet")
        continuation = self.engine.compress(self.session_id, listener=listener)
        self._switch(continuation.id)
        return continuation

    def branch(self) -> Session:
        """``/branch``: continue in a child session holding the history so far; the original
        is ended with reason ``branched`` and left as it is."""
        if not self.started:
            raise ChatError("nothing to branch yet: send a message first")
        child = self.engine.branch(self.session_id)
        self.end("branched")
        self._switch(child.id)
        return child

    def resume(self, reference: str) -> Session:
        """``/resume NAME``: leave the current session (ended as ``user_exit``) and continue
        the one ``reference`` names (id, prefix or title)."""
        from hermes_core.store import StoreError

        try:
            target = self.store.resolve(reference)
        except StoreError as error:
            raise ChatError(str(error)) from None
        if target == self.session_id and self.started:
            raise ChatError("that is the current session")
        self.end("user_exit")
        return self.attach(target)
