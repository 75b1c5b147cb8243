"""Claude Code records → the messages of one conversation.

Only chain records (``user``, ``assistant``) make messages; other record types are skipped
and counted as ``unknown record type`` unless they are known metadata or harness records
(``summary``, ``system``, ``attachment``, ``progress``, ``file-history-snapshot``…), which
are left out silently. Turns:

* a human prompt is a user message (harness text removed, see :mod:`.text`), and so is a
  prompt typed while the assistant worked (a ``queued_command`` attachment); records carrying
  only tool results, ``isMeta`` records and synthetic assistant records are not turns;
* everything the assistant wrote between two prompts — its text and a ``[ran tool: NAME]``
  note per tool use, in order — is one assistant message, so turns alternate;
* a compaction summary (``isCompactSummary``) is left out when the file already holds the
  turns it summarises; when it opens the file (a conversation continued from an older one) it
  is kept as a user message marked as such.

Token usage is counted once per API message (``message.id``, else ``requestId``): every line
of a streamed response repeats it, and the last line's figures win. Prompt-cache reads
(``cache_read_input_tokens``) and writes (``cache_creation_input_tokens``) are counted apart
from the input tokens, as the API reports them (they are priced differently). Synthetic
records (``<synthetic>`` model, API errors) count nothing.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from hermes_hookspecs import Message

from .text import (
    assistant_block_text,
    is_tool_note,
    short_title,
    strip_placeholders,
    user_content_text,
)

KNOWN_OTHER_TYPES = frozenset({
    "summary", "system", "attachment", "progress", "file-history-snapshot", "queue-operation",
    "permission-mode", "mode", "last-prompt", "ai-title", "custom-title", "agent-name",
    "agent-setting", "pr-link", "bridge-session", "worktree-state", "relocated", "frame-link",
    "atis-latch", "started", "result",
})  # fmt: skip
"""Record types that are known and carry no conversation."""

UNKNOWN_TYPE = "unknown record type"
SYNTHETIC_MODEL = "<synthetic>"
CONTINUED_NOTE = "(continued from an earlier Claude Code conversation; its summary follows)"


def timestamp_of(record: dict[str, Any]) -> float | None:
    """A record's ISO-8601 timestamp as POSIX seconds; None when absent or unreadable."""
    value = record.get("timestamp")
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None  # a naive time is ambiguous
    return moment.timestamp()


class Transcript:
    """Builds one conversation's messages from its records, fed in file order."""

    def __init__(self, warnings: Counter[str]) -> None:
        self.warnings = warnings
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self.cwd: str | None = None
        self.git_branch: str | None = None
        self.model: str | None = None
        self.session_id: str | None = None
        self.first_prompt: str | None = None
        self.custom_title: str | None = None
        """The name the person gave the conversation with Claude Code's ``/rename`` (the
        last ``custom-title`` record)."""
        self.ai_title: str | None = None
        """The title Claude Code generated for it (the last ``ai-title`` record)."""
        self.input_tokens = 0
        self.output_tokens = 0
        self.cache_read_tokens = 0
        self.cache_write_tokens = 0
        self.emitted = 0
        self._pending: list[str] = []
        self._pending_at: float | None = None
        self._usage_key: str | None = None
        self._usage: dict[str, Any] | None = None
        self._counted: set[str] = set()
        self._turn_open = False
        self.turns_opened = 0
        """How many assistant turns began (see :attr:`tokens_before_turn`)."""
        self.tokens_before_turn: TokenCounts = (0, 0, 0, 0)
        """:attr:`tokens` as they were before the assistant turn begun last."""

    @property
    def tokens(self) -> TokenCounts:
        """Input, output, cache-read and cache-write tokens counted so far."""
        return (
            self.input_tokens,
            self.output_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
        )

    # ------------------------------------------------------------------ feeding

    def feed(self, record: dict[str, Any]) -> list[Message]:
        """The messages completed by ``record`` (usually none or one)."""
        kind = record.get("type")
        if kind == "attachment":
            return self._queued_prompt(record)
        if kind in ("custom-title", "ai-title"):
            self._note_title(record)
            return []
        if kind not in ("user", "assistant"):
            if kind not in KNOWN_OTHER_TYPES:
                self.warnings[UNKNOWN_TYPE] += 1
            return []
        moment = timestamp_of(record)
        self._note_envelope(record, moment)
        message = record.get("message")
        if not isinstance(message, dict):
            return []
        if kind == "user":
            return self._user(record, message, moment)
        self._assistant(record, message, moment)
        return []

    @property
    def turn_open(self) -> bool:
        """Whether an assistant turn is under way: begun, not yet closed by a prompt. While
        the log is being written it may still grow: more API messages, or more records of
        the last one (whose usage then grows too)."""
        return self._turn_open

    @property
    def answer_pending(self) -> bool:
        """Whether the open turn has text that :meth:`finish` emits as a message."""
        return bool(self._pending)

    def finish(self) -> list[Message]:
        """The last assistant turn, if one is pending; usage is settled."""
        self._settle_usage()
        return self._flush()

    def title_text(self) -> str | None:
        """Claude Code's own title for the conversation, else its first prompt, on one line,
        at most 60 characters (a name the person gave is :attr:`custom_title`)."""
        text = self.ai_title or self.first_prompt
        return short_title(text) if text else None

    def _note_title(self, record: dict[str, Any]) -> None:
        field = "customTitle" if record.get("type") == "custom-title" else "aiTitle"
        value = record.get(field)
        if not isinstance(value, str) or not value.strip():
            return
        title = " ".join(value.split())
        if field == "customTitle":
            self.custom_title = title
        else:
            self.ai_title = title

    # ------------------------------------------------------------------ records

    def _note_envelope(self, record: dict[str, Any], moment: float | None) -> None:
        if moment is not None:
            self.started_at = moment if self.started_at is None else min(self.started_at, moment)
            self.ended_at = moment if self.ended_at is None else max(self.ended_at, moment)
        cwd = record.get("cwd")
        if self.cwd is None and isinstance(cwd, str) and cwd:
            self.cwd = cwd
        branch = record.get("gitBranch")
        if isinstance(branch, str) and branch:
            self.git_branch = branch
        session_id = record.get("sessionId")
        if self.session_id is None and isinstance(session_id, str) and session_id:
            self.session_id = session_id

    def _user(
        self, record: dict[str, Any], message: dict[str, Any], moment: float | None
    ) -> list[Message]:
        if record.get("isMeta") is True:
            return []
        content = message.get("content")
        if record.get("isCompactSummary") is True:
            if self.emitted or self._pending or not isinstance(content, str):
                return []
            text = f"{CONTINUED_NOTE}\n\n{content.strip()}"
        else:
            text, tool_results_only = user_content_text(content)
            if tool_results_only or not text:
                return []
            self._note_first_prompt(text)
        return self._user_turn(text, moment)

    def _queued_prompt(self, record: dict[str, Any]) -> list[Message]:
        """A prompt typed while the assistant was working (a ``queued_command`` attachment,
        Claude Code 2.1.101+) is a user turn; every other attachment is harness context."""
        attachment = record.get("attachment")
        if not isinstance(attachment, dict) or attachment.get("type") != "queued_command":
            return []
        if attachment.get("commandMode", "prompt") != "prompt":
            return []  # a task notification, not typed by the person
        moment = timestamp_of(record) or timestamp_of(attachment)
        self._note_envelope(record, moment)
        text, _tool_results_only = user_content_text(attachment.get("prompt"))
        if not text:
            return []
        self._note_first_prompt(text)
        return self._user_turn(text, moment)

    def _note_first_prompt(self, text: str) -> None:
        """The first words the person typed (placeholders aside) become the title hint."""
        words = strip_placeholders(text)
        if self.first_prompt is None and words:
            self.first_prompt = words

    def _user_turn(self, text: str, moment: float | None) -> list[Message]:
        """Close the assistant turn in progress and emit a user message after it."""
        self._turn_open = False
        completed = self._flush()
        completed.append(Message(role="user", content=text, timestamp=moment))
        self.emitted += 1
        return completed

    def _assistant(
        self, record: dict[str, Any], message: dict[str, Any], moment: float | None
    ) -> None:
        model = message.get("model")
        if model == SYNTHETIC_MODEL or record.get("isApiErrorMessage") is True:
            return
        if isinstance(model, str) and model:
            self.model = model
        key = message.get("id") or record.get("requestId")
        usage = message.get("usage")
        if not self._turn_open:  # a new turn: what came before it is counted first
            if key != self._usage_key:
                self._settle_usage()
            self._turn_open = True
            self.turns_opened += 1
            self.tokens_before_turn = self.tokens
        if isinstance(key, str) and key:
            if key != self._usage_key:
                self._settle_usage()
                self._usage_key = key
            if isinstance(usage, dict) and key not in self._counted:
                self._usage = usage
        elif isinstance(usage, dict):  # no id to group by: a line on its own
            self._settle_usage()
            self._usage = usage
            self._settle_usage()
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            return
        for block in blocks:
            piece = assistant_block_text(block)
            if piece is None:
                continue
            if not self._pending:
                self._pending_at = moment
            self._pending.append(piece)

    # ------------------------------------------------------------------ helpers

    def _flush(self) -> list[Message]:
        if not self._pending:
            return []
        text = self._pending[0]
        for previous, piece in zip(self._pending, self._pending[1:], strict=False):
            joiner = "\n" if is_tool_note(previous) and is_tool_note(piece) else "\n\n"
            text += joiner + piece
        self._pending = []
        self.emitted += 1
        return [Message(role="assistant", content=text, timestamp=self._pending_at)]

    def _settle_usage(self) -> None:
        """Count the held usage of the current API message, once."""
        usage, self._usage = self._usage, None
        if self._usage_key is not None:
            self._counted.add(self._usage_key)
        if usage is None:
            return
        self.input_tokens += _count(usage.get("input_tokens"))
        self.cache_read_tokens += _count(usage.get("cache_read_input_tokens"))
        self.cache_write_tokens += _count(usage.get("cache_creation_input_tokens"))
        self.output_tokens += _count(usage.get("output_tokens"))


TokenCounts = tuple[int, int, int, int]
"""Input, output, cache-read and cache-write tokens, in that order."""


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0
