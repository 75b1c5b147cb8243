"""The component protocols: what a plugin registers through the ``hermes_register_*`` hooks.

They are :class:`typing.Protocol` classes, so a plugin implements them by shape; it never
subclasses anything from the core.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, Protocol, runtime_checkable

from ._gateway import Deliver
from ._types import (
    ExportOptions,
    ExportResult,
    ImportCandidate,
    ImportedSession,
    Message,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    Session,
    SessionRecord,
)


@runtime_checkable
class SessionSource(Protocol):
    """An origin of sessions (SPEC O1). :class:`~hermes_hookspecs.SourceInfo` implements it."""

    @property
    def name(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def short_label(self) -> str: ...
    @property
    def interactive(self) -> bool: ...
    @property
    def gateway(self) -> bool: ...
    @property
    def supports_threads(self) -> bool: ...
    @property
    def reapable(self) -> bool: ...


class ExportSink(Protocol):
    """Where an exporter writes: the core opens files for it (atomic, created 0600)."""

    def open_binary(self, relative_name: str) -> BinaryIO:
        """A file under the export destination (or stdout for ``-``), opened for writing."""
        ...

    @property
    def destination(self) -> Path | None:
        """The file or directory being written, or None for stdout."""
        ...


@runtime_checkable
class Exporter(Protocol):
    """An export format (``jsonl``, ``md``, ``html``…)."""

    name: str
    extension: str
    description: str
    redact_by_default: bool

    def export(
        self, sessions: Iterator[SessionRecord], sink: ExportSink, options: ExportOptions
    ) -> ExportResult:
        """Write ``sessions`` (an iterator: hold one at a time) and report every file written."""
        ...


@runtime_checkable
class Importer(Protocol):
    """A reader of another tool's session logs. Pure reader: the core stores what it yields.

    Optional members the core looks for with ``getattr``: ``describe(candidate)`` (the
    picker's details) and ``file_kind``. ``file_kind = "database"`` says the files are
    databases another program updates in place (not append-only logs): the core then reads
    again (``read(path, cursor)``) whenever the file or its ``-wal`` was written since the last
    import, whatever its size, and takes each yielded
    ``snapshot`` session as one of many in the file (see ``ImportedSession.continues``).
    """

    name: str
    label: str

    def discover(self, env: Mapping[str, str]) -> Iterable[ImportCandidate]:
        """The logs found in their default places (``env`` is the process environment)."""
        ...

    def sniff(self, path: Path) -> bool:
        """True when ``path`` looks like a log this importer reads."""
        ...

    def read(self, path: Path, resume_from: str | None = None) -> Iterator[ImportedSession]:
        """Stream the sessions in ``path``, starting after ``resume_from`` (a cursor it gave)."""
        ...


@runtime_checkable
class PlatformAdapter(SessionSource, Protocol):
    """A messaging platform: a session source that can also connect, receive and send."""

    def connect(self, config: Mapping[str, Any]) -> None:
        """Open the connection with the platform's settings from ``config.yaml``."""
        ...

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Send a message; returns the platform's message id when it gives one."""
        ...

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The routing key of a conversation (SPEC G1)."""
        ...

    def create_thread(self, chat_id: str, title: str) -> str | None:
        """Open a thread/topic and return its id; None where threads are not supported."""
        ...


@runtime_checkable
class ReceivingAdapter(PlatformAdapter, Protocol):
    """A platform adapter that receives on its own (a web server, a websocket, a poller):
    ``hermes gateway run`` starts it with a ``deliver`` callable and stops it at shutdown.

    An optional extension of :class:`PlatformAdapter`: adapters without ``start``/``stop``
    keep working where they worked before; the gateway runs only adapters that have them.
    """

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Begin receiving with the platform's settings (``gateway.platforms.<name>``): call
        ``deliver(event)`` for each incoming message and acknowledge it to the platform only
        after ``await delivery.stored()``. Return once receiving has started; raise
        ``UserFacingError`` (one line) when it cannot start."""
        ...

    async def stop(self) -> None:
        """Stop receiving; answers already being sent are finished first."""
        ...


@runtime_checkable
class ModelProvider(Protocol):
    """A way to call a language model (an OpenAI-compatible endpoint, a local runtime…)."""

    name: str
    """What ``model.provider`` names in ``config.yaml`` (``openai``)."""
    description: str

    def stream(self, request: ModelRequest, settings: ModelSettings) -> Iterator[ModelEvent]:
        """Call the model and yield its answer as it arrives: ``TextDelta`` and
        ``ReasoningDelta`` pieces, each complete ``ToolCall``, and one ``TokenUsage``.

        Blocking (the gateway runs it in a worker thread). Raise ``ModelError`` with a one-line
        message for every failure, after the retries ``settings`` allow."""
        ...


@runtime_checkable
class StoreEvents(Protocol):
    """What a store tells the outside world; the core passes one to ``StoreBackend.open``.

    A store calls ``session_started`` after creating any session row, ``session_ended`` when
    a session ends (or is deleted while still open: reason ``deleted``), ``generate_title``
    for an automatic title after a session's first exchange.
    """

    def session_started(self, session: Session) -> None: ...
    def session_ended(self, session: Session, reason: str) -> None: ...
    def generate_title(self, session: Session, messages: Sequence[Message]) -> str | None: ...


@runtime_checkable
class StoreBackend(Protocol):
    """A database the session store can live in, chosen by the scheme of ``store.url``."""

    scheme: str
    """The URL scheme it serves (``sqlite``, ``postgresql``)."""
    description: str

    def open(self, url: str, events: StoreEvents | None) -> Any:
        """Open (creating or migrating if needed) the store at ``url`` and return it.

        The object returned implements the core's store protocol
        (``hermes_core.store.protocol.Store``) and passes ``tests/store_conformance``. Raise
        ``UserFacingError`` with one line (never the password) when the URL is malformed or
        the database cannot be reached; import the database driver here, not at module level.
        """
        ...
