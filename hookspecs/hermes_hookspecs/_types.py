"""Plain data that crosses the boundary between the core and its plugins.

Everything here is a small, typed dataclass with no behaviour beyond convenience accessors,
so a plugin author can build and inspect these values without importing the core.
Timestamps are POSIX seconds (UTC) as floats; ``None`` means "not known".
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]
"""The role of a message. ``tool`` messages carry a tool's output."""

ParentKind = Literal["compression", "branch", "delegate", "reset"]
"""Why a session has a parent: a compression continuation, a ``/branch`` child, a
delegate/subagent working for the parent, or the session that followed a ``/new``/reset."""

END_REASONS: Mapping[str, str] = {
    "user_exit": "the person closed the conversation",
    "new_session": "replaced by /new",
    "reset": "reset by a gateway reset policy or /reset",
    "compression": "continued in a compression continuation",
    "branched": "branched with /branch",
    "handoff": "handed off to another platform",
    "timeout": "idle timeout",
    "error": "ended by an error",
    "imported": "a finished log imported from another tool",
    "done": "the task finished (cron, batch, delegate)",
    "superseded_by_repair": "retired by repair-routing",
    "startup_orphan_reap": "left open by a process that died; closed at start-up",
    "deleted": "deleted while still open (its session_ended is the last word on it)",
}
"""The documented vocabulary of end reasons. Other strings are stored as given."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool invocation requested by an assistant message."""

    name: str
    arguments: str = "{}"
    """The arguments as the model produced them (usually JSON text)."""
    id: str | None = None


@dataclass(slots=True)
class Message:
    """One message of a session.

    ``id`` and ``session_id`` are assigned by the store; leave them ``None`` when building
    messages to append or import.
    """

    role: Role
    content: str
    timestamp: float | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    reasoning: str | None = None
    token_count: int | None = None
    platform_message_id: str | None = None
    id: int | None = None
    session_id: str | None = None


@dataclass(slots=True)
class Session:
    """A session's metadata, as stored (messages travel separately)."""

    id: str
    source: str
    started_at: float
    title: str | None = None
    title_source: Literal["user", "auto", "import", "lineage"] | None = None
    user_id: str | None = None
    model: str | None = None
    model_config: dict[str, Any] | None = None
    system_prompt: str | None = None
    parent_session_id: str | None = None
    parent_kind: ParentKind | None = None
    ended_at: float | None = None
    end_reason: str | None = None
    last_active_at: float | None = None
    cwd: str | None = None
    git_branch: str | None = None
    git_repo_root: str | None = None
    chat_id: str | None = None
    chat_type: str | None = None
    thread_id: str | None = None
    session_key: str | None = None
    billing_provider: str | None = None
    cost_actual_usd: float | None = None
    cost_estimated_usd: float | None = None
    input_tokens: int = 0
    """Input tokens the model read that were neither read from nor written to its prompt
    cache (those are counted in ``cache_read_tokens`` / ``cache_write_tokens``)."""
    output_tokens: int = 0
    message_count: int = 0
    tool_call_count: int = 0
    pinned: bool = False
    archived: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    """Free-form extra data (provenance of imports, platform details)."""
    cache_read_tokens: int = 0
    """Input tokens read from the provider's prompt cache (priced lower than input)."""
    cache_write_tokens: int = 0
    """Input tokens written to the provider's prompt cache (priced higher than input)."""

    @property
    def is_active(self) -> bool:
        """True while the session has not ended."""
        return self.ended_at is None

    @property
    def workspace(self) -> str | None:
        """The workspace key: the git repository root, else the working directory."""
        return self.git_repo_root or self.cwd

    @property
    def cost_usd(self) -> float | None:
        """The actual cost when known, else the estimate."""
        return self.cost_actual_usd if self.cost_actual_usd is not None else self.cost_estimated_usd


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """A session origin (SPEC O1) as registered through ``hermes_register_sources``.

    It satisfies the :class:`~hermes_hookspecs.SessionSource` protocol.
    """

    name: str
    """The value stored in ``sessions.source`` (``cli``, ``telegram``, ``claude-code``…)."""
    label: str
    """A human label: ``Telegram``."""
    short_label: str
    """At most 6 characters, for narrow listing columns: ``tele``."""
    interactive: bool = False
    """A person types into it live (search ranking, bare ``-c`` eligibility)."""
    gateway: bool = False
    """A messaging platform: 8-hex session ids and session keys."""
    supports_threads: bool = False
    """Can open a thread/topic for a conversation."""
    reapable: bool = False
    """Stale open sessions of this origin may be closed at start-up."""


@dataclass(frozen=True, slots=True)
class RedactionRule:
    """A secret pattern. ``keywords`` are cheap substrings; the regex only runs on text that
    contains one of them (an empty tuple means always run)."""

    name: str
    pattern: str
    keywords: tuple[str, ...] = ()
    replacement: str = "[REDACTED]"


@dataclass(slots=True)
class SessionRecord:
    """A session with its messages, as handed to exporters (already selected and redacted)."""

    session: Session
    messages: list[Message]
    children: tuple[str, ...] = ()
    """Ids of delegate/subagent sessions working for this one."""
    lineage: tuple[str, ...] = ()
    """With ``--lineage logical``: the ids of the compression lineage this record joins into
    one conversation, oldest first. ``session`` is then the first session carrying the end,
    last activity, counts and totals of the whole lineage; ``messages`` run across all of
    them and each message's ``session_id`` names its segment. Empty for a single session."""


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """How an export was asked for."""

    output: str | None
    """The OUTPUT argument: a path, ``-`` for stdout, or None for the exporter's default."""
    single_session: bool
    """True when exactly one session was selected with ``--session-id``."""
    redacted: bool = False
    only: Literal["user-prompts"] | None = None
    lineage: Literal["single", "logical"] = "single"
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ExportedFile:
    """One file an exporter wrote, for the manifest and ``--delete-after-verified``."""

    path: Path
    session_ids: tuple[str, ...]
    message_count: int
    sha256: str


@dataclass(slots=True)
class ExportResult:
    """What an export wrote."""

    files: list[ExportedFile] = field(default_factory=list)
    sessions_written: int = 0


@dataclass(frozen=True, slots=True)
class ImportCandidate:
    """A foreign session log an importer found, for the import picker."""

    importer: str
    path: Path
    foreign_id: str
    title_guess: str | None = None
    cwd: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    turn_count: int | None = None


@dataclass(frozen=True, slots=True)
class ImportedRoute:
    """A gateway routing entry read from another tool's store (SPEC G5): which chat, by its
    session key, is served by the session it comes with (``ImportedSession.routes``)."""

    session_key: str
    platform: str
    updated_at: float
    origin: Mapping[str, Any] | None = None
    """Where the chat is (platform, chat id and type, user…), as the other tool kept it."""
    expires_at: float | None = None


@dataclass(slots=True)
class ImportedSession:
    """One session read from a foreign log; the core stores it.

    ``messages`` is an iterator so a large log streams; ``cursor`` (e.g. a byte offset) is
    where a later import of the same file resumes reading once ``messages`` is exhausted.
    """

    foreign_id: str
    source: str
    messages: Iterator[Message]
    title_hint: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    cwd: str | None = None
    git_branch: str | None = None
    model: str | None = None
    input_tokens: int = 0
    """Input tokens neither read from nor written to a prompt cache."""
    output_tokens: int = 0
    cache_read_tokens: int = 0
    """Input tokens read from the prompt cache (kept out of ``input_tokens``)."""
    cache_write_tokens: int = 0
    """Input tokens written to the prompt cache (kept out of ``input_tokens``)."""
    parent_foreign_id: str | None = None
    """Set on delegate/subagent transcripts: the foreign id of the session they worked for."""
    cursor: str | None = None
    warnings: dict[str, int] = field(default_factory=dict)
    """Counts of skipped input by reason (``malformed line``, ``unknown record type``…)."""
    snapshot: Session | None = None
    """Set by backup importers (``jsonl``): the session exactly as it was stored in a Hermes
    home. The core then keeps its id, title, timestamps, lineage, pin and archive flags instead
    of deriving them, and stores ``messages`` with their own timestamps. A session whose id
    already exists is skipped and reported; a title already used by a different session gets a
    visible suffix and is reported."""
    continues: bool = False
    """Set by database importers on a read from a cursor, for a session they yielded before:
    ``messages`` then holds only what follows the cursor, and the core appends it to the
    session it stored the first time (a session deleted here since is left deleted)."""
    routes: list[ImportedRoute] = field(default_factory=list)
    """Gateway routing entries that point at this session (a store importer reads them from
    the other tool's routing table); the core adds those whose chat this store does not
    route yet."""
    open_tail: int = 0
    """Set by a log importer, with ``cursor``, when the last ``open_tail`` messages it yielded
    belong to a turn that may still be growing (the other tool was writing the log: an answer
    streamed record by record). ``cursor`` then points where that turn begins, and a read
    from it yields those messages again — grown, or complete — before anything newer. The
    core stores them now and replaces them on the next import instead of appending a second
    copy, so importing a live log twice gives what one import of the final log gives. Token
    counts of such a read must leave out what the earlier read already reported for them."""


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """How to reach a model, as configured under ``model:`` in ``config.yaml`` (env overrides
    applied by the core). A provider reads what it understands and ignores the rest."""

    provider: str
    """The registered provider name (``openai``)."""
    model: str | None = None
    """The model name sent to the endpoint (``model.name`` / ``HERMES_MODEL``)."""
    base_url: str | None = None
    """The endpoint (``model.base_url`` / ``HERMES_MODEL_BASE_URL``); None = the provider's own."""
    api_key: str | None = None
    """The key, already read from the environment variable named by ``model.api_key_env``."""
    timeout_seconds: float = 60.0
    """How long to wait for the endpoint before giving up on a request."""
    max_retries: int = 3
    """Retries (with back-off) on rate limits, server errors and dropped connections."""
    context_tokens: int | None = None
    """The model's context window in tokens (``model.context_tokens``), when known."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Every other key under ``model:``, for provider-specific settings."""


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One call to a model: the conversation so far and the tools it may call."""

    messages: tuple[Message, ...]
    """The history, oldest first: ``user``, ``assistant`` (with ``tool_calls``) and ``tool``
    messages (``tool_call_id`` answers a call). No ``system`` message: see ``system_prompt``."""
    system_prompt: str | None = None
    tools: tuple[Mapping[str, Any], ...] = ()
    """Tool definitions as JSON-schema objects: ``{"name", "description", "parameters"}``."""
    max_output_tokens: int | None = None
    stream: bool = True
    """Whether the caller shows the answer as it arrives (chat printing to the terminal, a
    platform editing its message). False when only the whole answer is used (a gateway reply
    sent in one piece, an automatic title): a provider may then make one non-streamed call and
    yield the same events at once. A provider that ignores it streams, as before."""


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the answer's text, streamed as it arrives."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's visible reasoning, where the endpoint streams one."""

    text: str


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Token counts of one model call (reported once, usually at the end of the stream)."""

    input_tokens: int
    output_tokens: int


ModelEvent = TextDelta | ReasoningDelta | ToolCall | TokenUsage
"""What :meth:`ModelProvider.stream` yields. A ``ToolCall`` is yielded whole, once its
arguments are complete; its ``arguments`` are the model's text, which may not be valid JSON."""


class UserFacingError(Exception):
    """A failure a plugin component reports to the person, who can act on it (a missing token,
    a service refusing, a setting to add). The core prints its message as one line
    (``hermes: …``, exit 1) instead of a traceback, so the message is the whole explanation.
    Raise it from an exporter, an importer or a plugin command."""


class UnreadableRecords(Exception):
    """Raised by an importer's ``read`` once it has yielded every record it could read, when
    some records of the file could not be read and dropping them would lose data (a backup's
    sessions). ``problems`` holds one line per record, saying where and why (``line 7: session
    has no 'started_at'``). The core keeps what was yielded, prints each problem after the
    file's path and exits non-zero; the file is read whole again by the next import."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


class ModelError(UserFacingError):
    """A model call failed in a way the person should read as one line: the endpoint is down or
    hung past its timeout, the key is refused, rate limits outlasted the retries, the answer
    could not be parsed. Providers raise it (never the SDK's own exceptions); the turn engine
    keeps everything already stored and reports the message."""
