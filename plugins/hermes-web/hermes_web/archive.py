"""Every read and write of ``hermes serve``, through the store protocol only (any backend).

The routes ask this module typed questions (the list, a search, a page of messages, the
lineage of a session, the insights report) and get plain values back, already redacted when
the server runs with ``--redact``. Nothing here builds HTML (see :mod:`.pages`).
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import Message, Session, SessionRecord

from hermes_core.search import run_search
from hermes_core.selection.filters import SessionFilter
from hermes_core.selection.options import FilterError, filter_from_options

if TYPE_CHECKING:
    from hermes_core.insights import InsightsReport, PriceTable
    from hermes_core.plugins import PluginHost
    from hermes_core.store.protocol import Store

LIST_LIMIT = 200
"""Sessions the list shows at once (narrow it with the filters)."""
PAGE_SIZE = 200
"""Messages sent per page of a session."""
PREVIEW_CHARS = 160
SEARCH_LIMIT = 10
"""Lineages a search shows (the discovery form's most)."""
ROLES = ("user", "assistant", "tool")
TIME_CHOICES = {
    "": "any time",
    "1d": "last day",
    "7d": "last week",
    "30d": "last month",
    "365d": "last year",
}
ARCHIVED_CHOICES = {"hide": "not archived", "include": "with archived", "only": "archived only"}


_LAST_WORD = re.compile(r"(?:^|\s)([A-Za-z0-9]{2,})$")
_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})


def as_you_type(query: str) -> str:
    """``query`` with its last word taken as a prefix (``quokka encl`` → ``quokka encl*``):
    the word is still being typed. Queries with quotes, or ending in an operator, a space or
    anything but a plain ASCII word, are left as written."""
    found = _LAST_WORD.search(query)
    if found is None or '"' in query or found.group(1) in _OPERATORS:
        return query
    return query + "*"


class BadRequest(ValueError):
    """A parameter the server cannot use; the message is one line for the page."""


@dataclass(frozen=True, slots=True)
class ListFilters:
    """The list's filters, as the page's form sends them."""

    source: str = ""
    workspace: str = ""
    active: str = ""
    """A key of :data:`TIME_CHOICES`."""
    pinned_only: bool = False
    archived: str = "hide"
    """A key of :data:`ARCHIVED_CHOICES`."""

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> ListFilters:
        active = query.get("active", "")
        archived = query.get("archived", "hide") or "hide"
        if active not in TIME_CHOICES:
            raise BadRequest(f"active: choose one of {', '.join(k for k in TIME_CHOICES if k)}")
        if archived not in ARCHIVED_CHOICES:
            raise BadRequest(f"archived: choose one of {', '.join(ARCHIVED_CHOICES)}")
        return cls(
            source=query.get("source", "").strip(),
            workspace=query.get("workspace", "").strip(),
            active=active,
            pinned_only=query.get("pinned", "") in {"1", "on", "true"},
            archived=archived,
        )

    def search_scope(self) -> SessionFilter | None:
        """What a search looks in: None (everything, the fast road) unless source, workspace
        or activity narrow it; archived results are kept or dropped afterwards, and delegate
        sessions are found like any other (as ``hermes sessions search`` does)."""
        scope = dataclasses.replace(self.selection(), include_archived=True, include_delegates=True)
        return scope if scope.has_attribute_filters else None

    def selection(self) -> SessionFilter:
        """The selection's own filter for these choices (delegates left out, as ``list``)."""
        try:
            return filter_from_options(
                source=self.source or None,
                workspace=self.workspace or None,
                newer_than=self.active or None,
                include_archived=self.archived != "hide",
                include_delegates=False,
            )
        except FilterError as error:
            raise BadRequest(str(error)) from None


@dataclass(frozen=True, slots=True)
class ListedSession:
    """One row of the list."""

    session: Session
    preview: str


@dataclass(frozen=True, slots=True)
class FoundSession:
    """One search result (one per lineage); ``snippet`` holds the matches between the
    search's ``>>>``/``<<<`` marks."""

    session_id: str
    title: str | None
    source: str
    when: str
    snippet: str
    matched: str
    archived: bool


@dataclass(frozen=True, slots=True)
class Lineage:
    """Where a session sits: its parent and its children, by kind."""

    parent: tuple[str, str] | None
    """(id, kind) of the parent session."""
    children: Mapping[str, tuple[str, ...]]
    """Kind (compression, branch, delegate, reset) → child ids, oldest first."""


class WebArchive:
    """The store as the web app reads it; redacts everything it returns when asked."""

    def __init__(
        self,
        store: Store,
        host: PluginHost,
        *,
        prices: PriceTable,
        redact: bool = False,
    ) -> None:
        self._store = store
        self._host = host
        self._prices = prices
        self._redact_text: Callable[[str], str] = lambda value: value
        self._redact_record: Callable[[SessionRecord], SessionRecord] = lambda record: record
        if redact:
            from hermes_core.exporting.redacting import record_redactor
            from hermes_core.redaction import Redactor

            self._redact_text = Redactor.from_host(host).redact_text
            self._redact_record = record_redactor(host)

    def sources(self) -> list[tuple[str, str]]:
        """(name, label) of every registered origin, for the list's choice."""
        return sorted((name, source.label) for name, source in self._host.sources().items())

    # ------------------------------------------------------------------ the list

    def listing(self, filters: ListFilters) -> tuple[list[ListedSession], int]:
        """The sessions of ``filters`` (pinned first, then newest activity), at most
        :data:`LIST_LIMIT`, and how many match in all."""
        selection = filters.selection()
        if filters.archived == "only":
            ids = self._store.lifecycle.archived_ids(selection)
            selection = dataclasses.replace(selection, session_ids=tuple(ids))
        sessions = self._store.select_sessions(selection, limit=LIST_LIMIT, pinned_first=True)
        if filters.pinned_only:
            sessions = list(itertools.takewhile(lambda s: s.pinned, sessions))
            total = len(sessions)
        else:
            total = self._store.count_sessions(selection)
        previews = self._store.previews([s.id for s in sessions], length=PREVIEW_CHARS)
        return [
            ListedSession(
                self._session(s), self._redact_text(" ".join(previews.get(s.id, "").split()))
            )
            for s in sessions
        ], total

    # ------------------------------------------------------------------ search

    def search(
        self, query: str, roles: Sequence[str], filters: ListFilters
    ) -> tuple[list[FoundSession], str | None]:
        """Discovery (``session_search``'s own ranking, one result per lineage) within the
        list's filters; the second value is the search's one-line complaint, if any."""
        if any(role not in ROLES for role in roles) or not roles:
            raise BadRequest(f"roles: choose among {', '.join(ROLES)}")
        arguments: dict[str, Any] = {
            "query": as_you_type(query),
            "limit": SEARCH_LIMIT,
            "role_filter": ",".join(roles),
        }
        payload = run_search(self._store, arguments, within=filters.search_scope())
        if "error" in payload:
            return [], str(payload["error"])
        found = [
            FoundSession(
                session_id=result["session_id"],
                title=self._optional(result["title"]),
                source=self._redact_text(result["source"]),
                when=result["when"],
                snippet=self._redact_text(result["snippet"]),
                matched=result["matched"],
                archived=bool(result["archived"]),
            )
            for result in payload["results"]
            if filters.archived != "only" or result["archived"]
            if filters.archived != "hide" or not result["archived"]
        ]
        return found, None

    # ------------------------------------------------------------------ one session

    def session(self, reference: str) -> Session:
        """The session ``reference`` names (id, unique prefix or title); raises the store's
        ``SessionNotFound``/``AmbiguousReference`` (a ``StoreError``)."""
        return self._session(self._store.get_session(self._store.resolve(reference)))

    def lineage(self, session: Session) -> Lineage:
        children: dict[str, list[str]] = {}
        for child_id, kind in self._store.child_sessions(session.id):
            children.setdefault(kind or "child", []).append(child_id)
        parent = None
        if session.parent_session_id:
            parent = (session.parent_session_id, session.parent_kind or "parent")
        return Lineage(parent, {kind: tuple(ids) for kind, ids in children.items()})

    def page(self, session: Session, offset: int) -> tuple[SessionRecord, int]:
        """Messages ``offset`` to ``offset + PAGE_SIZE`` as a record of ``session``, and how
        many messages the session has now."""
        if offset < 0:
            raise BadRequest("offset: give 0 or more")
        with _finished(self._store.iter_messages(session.id)) as stream:
            messages = list(itertools.islice(stream, offset, offset + PAGE_SIZE))
        total = self._store.message_count(session.id)
        return self.record(session, messages), total

    def after(self, session: Session, last_id: int) -> tuple[SessionRecord, int]:
        """The messages stored after message ``last_id`` (what a live page has not shown),
        read from the end of the session, and how many it has now."""
        newer: list[Message] = []
        with _finished(self._store.iter_messages_newest_first(session.id, batch=50)) as stream:
            for message in stream:
                if message.id is None or message.id <= last_id:
                    break
                newer.append(message)
        newer.reverse()
        return self.record(session, newer), self._store.message_count(session.id)

    def record(self, session: Session, messages: list[Message]) -> SessionRecord:
        """``messages`` of ``session`` as the HTML exporter receives them (redacted when
        asked), with the session's delegates."""
        record = SessionRecord(
            session=session,
            messages=messages,
            children=self._store.delegate_children(session.id),
        )
        return self._redact_record(record)

    # ------------------------------------------------------------------ insights

    def insights(self) -> InsightsReport:
        """The insights report over every session (titles and names redacted when asked)."""
        from hermes_core.insights import build_report

        report = build_report(self._store.insight_rows(None), self._prices)
        return dataclasses.replace(
            report,
            by_source=[
                dataclasses.replace(row, source=self._redact_text(row.source))
                for row in report.by_source
            ],
            by_model=[
                dataclasses.replace(row, model=self._optional(row.model)) for row in report.by_model
            ],
            tools=[dataclasses.replace(row, name=self._optional(row.name)) for row in report.tools],
            largest=[
                dataclasses.replace(
                    row,
                    title=self._optional(row.title),
                    source=self._redact_text(row.source),
                    model=self._optional(row.model),
                )
                for row in report.largest
            ],
        )

    # ------------------------------------------------------------------ writes

    def rename(self, session_id: str, title: str) -> Session:
        return self._session(self._store.set_title(session_id, title))

    def pin(self, session_id: str, pinned: bool) -> None:
        self._store.set_pinned([session_id], pinned)

    def archive(self, session_id: str, archived: bool) -> None:
        self._store.set_archived([session_id], archived)

    # ------------------------------------------------------------------ redaction

    def _optional(self, value: str | None) -> str | None:
        return None if value is None else self._redact_text(value)

    def _session(self, session: Session) -> Session:
        return dataclasses.replace(
            session,
            title=self._optional(session.title),
            source=self._redact_text(session.source),
            cwd=self._optional(session.cwd),
            git_repo_root=self._optional(session.git_repo_root),
            git_branch=self._optional(session.git_branch),
            model=self._optional(session.model),
        )


@contextmanager
def _finished(stream: Iterator[Message]) -> Iterator[Iterator[Message]]:
    """``stream``, closed on leaving (a half-read cursor keeps a read snapshot open)."""
    try:
        yield stream
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
