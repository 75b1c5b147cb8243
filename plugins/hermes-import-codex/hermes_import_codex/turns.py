"""From classified rollout records to a clean transcript: ordered user and assistant turns.

The rules (SPEC I3, issue 4):

- a user turn is what the person typed: ``event_msg/user_message`` and the
  ``response_item/message`` (role ``user``) that repeats it are one message, the event's text
  preferred; injected context (environment, instructions, AGENTS.md…) is left out;
- everything the assistant does until the next user turn is **one** assistant message: its
  text, in order, with a ``[ran tool: NAME]`` note for each function, custom-tool, local-shell
  (and web-search, image-generation, tool-search) call; ``agent_message`` events and the
  assistant ``message`` items that repeat them count once. The notes are the whole record of
  tool use: messages carry no ``tool_calls`` (their arguments are raw tool input), as in the
  Claude Code importer;
- developer and system messages, reasoning, tool output, compaction records and other events
  stay behind; images become ``[image]``.

:class:`TurnAssembler` is fed one record at a time and hands back finished messages, so a
reader streams a file of any size holding at most one turn in memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hermes_hookspecs import Message

from . import records
from .records import TokenTotals

UNKNOWN_RECORD = "unknown record type"


@dataclass(slots=True)
class ReadProgress:
    """What a read has learned so far about the session in one rollout file."""

    file_uuid: str | None
    """The session uuid in the file name (the ``session_meta`` to trust), when there is one."""
    foreign_id: str | None = None
    meta_matched: bool = False
    parent_thread_id: str | None = None
    """Set when the thread is a subagent's: the thread it worked for."""
    cwd: str | None = None
    git_branch: str | None = None
    model: str | None = None
    started_at: float | None = None
    first_timestamp: float | None = None
    last_timestamp: float | None = None
    """The latest time of a record other than a header: when the session was last active."""
    first_user_text: str | None = None
    tokens_banked: TokenTotals = (0, 0, 0)
    tokens_current: TokenTotals = (0, 0, 0)
    warnings: dict[str, int] = field(default_factory=dict)
    offset: int = 0
    """The byte offset just after the last complete line read."""
    emitted: int = 0
    """Messages handed out so far."""
    last_turn_offset: int | None = None
    """Where the record that began the last user turn starts: that turn and its answer may
    still be growing while Codex writes the file, so the next read starts there again."""
    last_turn_tokens: TokenTotals = (0, 0, 0)
    """The cumulative token totals just before that record."""
    last_turn_emitted: int = 0
    """Messages handed out before that turn's."""

    def warn(self, reason: str) -> None:
        """Count one skipped piece of input."""
        self.warnings[reason] = self.warnings.get(reason, 0) + 1

    @property
    def tokens_total(self) -> TokenTotals:
        """Cumulative ``(input, output, cached input)`` tokens of the session up to the last
        record read."""
        banked, current = self.tokens_banked, self.tokens_current
        return banked[0] + current[0], banked[1] + current[1], banked[2] + current[2]


@dataclass(slots=True)
class _UserDraft:
    text: str
    images: int
    kinds: set[str]
    timestamp: float | None


@dataclass(slots=True)
class _AssistantTurn:
    timestamp: float | None
    parts: list[tuple[bool, str]] = field(default_factory=list)
    """``(is_tool_note, text)`` in the order they happened."""
    unmatched: dict[str, list[str]] = field(default_factory=lambda: {"event": [], "item": []})
    """Texts seen from one kind of record and not yet from the other: their twin is skipped."""


def _other(kind: str) -> str:
    return "item" if kind == "event" else "event"


class TurnAssembler:
    """Turns classified records into messages; collect them with :meth:`take`."""

    def __init__(self, progress: ReadProgress) -> None:
        self.progress = progress
        self._ready: list[Message] = []
        self._pending_user: _UserDraft | None = None
        self._emitted_user: _UserDraft | None = None
        self._turn: _AssistantTurn | None = None
        self._call_ids: set[str] = set()
        self.turns_begun = 0
        """How many user turns began (a new prompt after the last one's answer)."""

    def take(self) -> list[Message]:
        """The messages finished since the last call."""
        ready, self._ready = self._ready, []
        return ready

    def finish(self) -> None:
        """The input ended: finish the turn in progress."""
        self._flush_turn()

    # -- records -------------------------------------------------------------------------

    def feed(self, kind: str, payload: dict[str, Any], timestamp: float | None) -> None:
        """Take one record (see :func:`records.classify`)."""
        progress = self.progress
        if timestamp is not None:
            if progress.first_timestamp is None:
                progress.first_timestamp = timestamp
            # A header's time is when the session started, not when anything happened in it.
            later = progress.last_timestamp is None or timestamp > progress.last_timestamp
            if kind != "session_meta" and later:
                progress.last_timestamp = timestamp
        if kind == "response_item":
            self._response_item(payload, timestamp)
        elif kind == "event_msg":
            self._event(payload, timestamp)
        elif kind == "session_meta":
            self.session_meta(payload, timestamp)
        elif kind == "turn_context":
            self.turn_context(payload)
        elif kind not in records.ENVELOPE_KINDS:
            progress.warn(UNKNOWN_RECORD)

    def session_meta(self, payload: dict[str, Any], timestamp: float | None) -> None:
        """Adopt the header of this file's own thread; replayed parent headers are ignored."""
        progress = self.progress
        if progress.meta_matched:
            return
        meta_id = payload.get("id")
        meta_id = meta_id.lower() if isinstance(meta_id, str) and meta_id else None
        matches = progress.file_uuid is None or meta_id == progress.file_uuid
        if not matches and progress.foreign_id is not None:
            return  # a provisional header is already adopted; wait for the matching one
        progress.meta_matched = matches
        progress.foreign_id = progress.file_uuid or meta_id
        cwd = payload.get("cwd")
        if isinstance(cwd, str) and cwd:
            progress.cwd = cwd
        git = payload.get("git")
        branch = git.get("branch") if isinstance(git, dict) else None
        if isinstance(branch, str) and branch:
            progress.git_branch = branch
        started = records.parse_timestamp(payload.get("timestamp"))
        if started is None:
            started = timestamp
        if started is not None:
            progress.started_at = started
        progress.parent_thread_id = records.subagent_parent(payload)

    def turn_context(self, payload: dict[str, Any]) -> None:
        """Per-turn settings: the model in use (the only place it is written) and the cwd."""
        model = payload.get("model")
        if isinstance(model, str) and model:
            self.progress.model = model
        cwd = payload.get("cwd")
        if self.progress.cwd is None and isinstance(cwd, str) and cwd:
            self.progress.cwd = cwd

    def _response_item(self, payload: dict[str, Any], timestamp: float | None) -> None:
        item_type = payload.get("type")
        if not isinstance(item_type, str) or item_type not in records.RESPONSE_ITEM_KINDS:
            self.progress.warn(UNKNOWN_RECORD)
            return
        if item_type == "message":
            self._message_item(payload, timestamp)
            return
        name = records.tool_name(item_type, payload)
        if name is not None:
            call_id = payload.get("call_id")
            self._tool(name, call_id if isinstance(call_id, str) else None, timestamp)

    def _message_item(self, payload: dict[str, Any], timestamp: float | None) -> None:
        role = payload.get("role")
        texts, images = records.content_parts(payload.get("content"))
        if role == "user":
            kept = []
            for text in texts:
                if records.is_injected(text):
                    if self.progress.cwd is None:
                        self.progress.cwd = records.environment_cwd(text)
                    continue
                kept.append(records.typed_request(text))
            self._user("item", "\n\n".join(kept), images, timestamp)
        elif role == "assistant":
            self._assistant_text("item", "\n\n".join(texts), images, timestamp)
        # developer and system messages are instructions to the model, not conversation

    def _event(self, payload: dict[str, Any], timestamp: float | None) -> None:
        event_type = payload.get("type")
        message = payload.get("message")
        text = message if isinstance(message, str) else ""
        if event_type == "user_message":
            if records.is_injected(text):
                text = ""
            self._user(
                "event", records.typed_request(text), records.event_images(payload), timestamp
            )
        elif event_type == "agent_message":
            self._assistant_text("event", text, 0, timestamp)
        elif event_type == "token_count":
            totals = records.token_totals(payload)
            if totals is not None:
                self._tokens(totals)
        elif event_type == "mcp_tool_call_end":
            call_id = payload.get("call_id")
            self._tool(
                records.mcp_event_tool_name(payload),
                call_id if isinstance(call_id, str) else None,
                timestamp,
            )

    # -- turns ---------------------------------------------------------------------------

    def _user(self, kind: str, text: str, images: int, timestamp: float | None) -> None:
        text = text.strip()
        if not text and not images:
            return
        pending = self._pending_user
        if pending is not None and kind not in pending.kinds:
            # The same prompt written twice (event + response item): keep one, the event's text.
            pending.kinds.add(kind)
            if text and (kind == "event" or not pending.text):
                pending.text = text
            pending.images = max(pending.images, images)
            return
        emitted = self._emitted_user
        if (
            pending is None
            and emitted is not None
            and kind not in emitted.kinds
            and text == emitted.text
        ):
            emitted.kinds.add(kind)  # its twin arrived after the assistant had started
            return
        self._flush_turn()
        self._pending_user = _UserDraft(text, images, {kind}, timestamp)
        self.turns_begun += 1

    def _assistant_text(self, kind: str, text: str, images: int, timestamp: float | None) -> None:
        text = text.strip()
        if not text and not images:
            return
        turn = self._open_turn(timestamp)
        if text:
            twins = turn.unmatched[_other(kind)]
            if text in twins:
                twins.remove(text)
            else:
                turn.unmatched[kind].append(text)
                turn.parts.append((False, text))
        turn.parts.extend((False, records.IMAGE_PLACEHOLDER) for _ in range(images))

    def _tool(self, name: str, call_id: str | None, timestamp: float | None) -> None:
        if call_id is not None:
            if call_id in self._call_ids:
                return
            self._call_ids.add(call_id)
        turn = self._open_turn(timestamp)
        turn.parts.append((True, f"[ran tool: {name}]"))

    def _tokens(self, totals: TokenTotals) -> None:
        progress = self.progress
        current = progress.tokens_current
        if totals[0] < current[0] or totals[1] < current[1]:
            # The cumulative count started again (a new process on the same thread): bank it.
            banked = progress.tokens_banked
            progress.tokens_banked = (
                banked[0] + current[0],
                banked[1] + current[1],
                banked[2] + current[2],
            )
        progress.tokens_current = totals

    def _open_turn(self, timestamp: float | None) -> _AssistantTurn:
        self._emit_pending_user()
        if self._turn is None:
            self._turn = _AssistantTurn(timestamp=self._stamp(timestamp))
        return self._turn

    def _emit_pending_user(self) -> None:
        draft = self._pending_user
        if draft is None:
            return
        self._pending_user = None
        self._emitted_user = draft
        lines = [draft.text] if draft.text else []
        lines.extend(records.IMAGE_PLACEHOLDER for _ in range(draft.images))
        if self.progress.first_user_text is None and draft.text:
            self.progress.first_user_text = draft.text
        self._ready.append(
            Message(role="user", content="\n".join(lines), timestamp=self._stamp(draft.timestamp))
        )

    def _flush_turn(self) -> None:
        self._emit_pending_user()
        turn, self._turn = self._turn, None
        if turn is None or not turn.parts:
            return
        pieces: list[str] = []
        previous_was_note = False
        for is_note, text in turn.parts:
            if pieces:
                pieces.append("\n" if is_note and previous_was_note else "\n\n")
            pieces.append(text)
            previous_was_note = is_note
        self._ready.append(
            Message(role="assistant", content="".join(pieces), timestamp=turn.timestamp)
        )

    def _stamp(self, timestamp: float | None) -> float | None:
        """A record's time, else the latest time known (bare-era lines carry none)."""
        if timestamp is not None:
            return timestamp
        return self.progress.last_timestamp or self.progress.started_at
