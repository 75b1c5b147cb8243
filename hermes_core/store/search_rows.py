"""The reads of ``session_search`` and the browse picker that are not full text, written once
for every backend: :class:`SearchRows` holds the session rows, lineage roots, the picker's
listings and the message reads of :class:`~.protocol.SearchIndex`, in the SQL both stores
take (see :mod:`.statements`), as :class:`~.facade.StoreFacade` does for the session facade.

A backend's search index subclasses it and gives what differs: its connection (``_sql``), its
selection dialect, how a listing's preview is read and how a title is said to hold a word,
and the whole full-text side — matching, ranking, snippets, title candidates — which is each
database's own (SQLite: FTS5 in :mod:`.search_queries`; the PostgreSQL plugin: ``tsvector``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from .lookup import resolve_reference

if TYPE_CHECKING:
    from hermes_core.selection.filters import SessionFilter

    from .protocol import (
        BrowseSessionRow,
        ListedSessionRow,
        MessageRow,
        RecentSessionRow,
        SearchSessionRow,
        SessionSummaryRow,
    )
    from .statements import Sql

MESSAGE_COLUMNS = "id, role, content, timestamp, tool_name, tool_calls"
"""The columns of a :data:`~.protocol.MessageRow`."""
LISTED = "s.archived = 0 AND (s.parent_kind IS NULL OR s.parent_kind != 'delegate')"
"""The sessions the picker lists (``sessions s``): neither archived nor delegates."""


class SearchRows(ABC):
    """The non-full-text reads of a :class:`~.protocol.SearchIndex` over a backend's
    primitives (see the module's text). A subclass sets ``_sql``."""

    _sql: Sql
    """The store's connection (statements both stores take)."""

    _preview_sql: ClassVar[str]
    """A message's first ``?`` characters (or what :meth:`_preview_text` makes them from),
    read from ``content``: the preview listings show."""

    # ------------------------------------------------------------------ primitives

    @abstractmethod
    def _where(self, selection: SessionFilter) -> tuple[str, list[object]]:
        """``selection`` as one condition over ``sessions s`` and its parameters."""

    @abstractmethod
    def _title_holds(self, word: str) -> tuple[str, object]:
        """The condition "``s.title`` holds ``word``, case folded" and its one parameter."""

    def _preview_text(self, value: Any, length: int) -> str | None:
        """A preview as :attr:`_preview_sql` read it, as text of at most ``length``
        characters (here: as it came)."""
        return value  # type: ignore[no-any-return]

    def _preview_column(self) -> str:
        return (
            f"(SELECT {self._preview_sql} FROM messages WHERE session_id = s.id "
            "AND role = 'user' ORDER BY id LIMIT 1)"
        )

    def _browse_rows(self, rows: Sequence[Any], length: int) -> list[BrowseSessionRow]:
        return [(r[0], r[1], r[2], r[3], self._preview_text(r[4], length)) for r in rows]

    # ------------------------------------------------------------------ sessions

    def resolve(self, reference: str) -> str:
        """The id a person means by ``reference`` (id, unique prefix, title)."""
        return resolve_reference(self._sql, reference)

    def session_rows(self, session_ids: Sequence[str]) -> dict[str, SearchSessionRow]:
        """id → (id, title, started_at, last_active_at, source, archived)."""
        if not session_ids:
            return {}
        wanted, ids = self._sql.in_ids("id", session_ids)
        rows = self._sql.execute(
            "SELECT id, title, started_at, last_active_at, source, archived FROM sessions "
            f"WHERE {wanted}",
            (ids,),
        ).fetchall()
        return {row[0]: (row[0], row[1], row[2], row[3], row[4], int(row[5])) for row in rows}

    def session_summary(self, session_id: str) -> SessionSummaryRow:
        """(title, started_at, last_active_at, source, message count, characters)."""
        row = self._sql.execute(
            "SELECT title, started_at, last_active_at, source, "
            "(SELECT count(*) FROM messages WHERE session_id = ?), "
            "(SELECT coalesce(sum(length(content)), 0) FROM messages WHERE session_id = ?) "
            "FROM sessions WHERE id = ?",
            (session_id, session_id, session_id),
        ).fetchone()
        return (row[0], row[1], row[2], row[3], int(row[4]), int(row[5]))

    def message_session(self, message_id: int) -> tuple[str, str | None] | None:
        """(session id, session title) of a message, None when there is no such message."""
        row = self._sql.execute(
            "SELECT m.session_id, s.title FROM messages m JOIN sessions s ON s.id = m.session_id "
            "WHERE m.id = ?",
            (message_id,),
        ).fetchone()
        return None if row is None else (row[0], row[1])

    def lineage_roots(self, session_ids: Sequence[str], max_depth: int) -> dict[str, str]:
        """Each id → its compression/branch lineage's root, for the ids that exist."""
        wanted, ids = self._sql.in_ids("id", list(dict.fromkeys(session_ids)))
        rows = self._sql.execute(
            "WITH RECURSIVE up(start, id, parent, kind, depth) AS ("
            f"  SELECT id, id, parent_session_id, parent_kind, 0 FROM sessions WHERE {wanted}"
            "  UNION ALL"
            "  SELECT up.start, s.id, s.parent_session_id, s.parent_kind, up.depth + 1 "
            "  FROM up JOIN sessions s ON s.id = up.parent "
            "  WHERE up.kind IN ('compression', 'branch') AND up.depth < ?"
            ") SELECT start, id FROM up ORDER BY start, depth",
            (ids, max_depth),
        ).fetchall()
        roots: dict[str, str] = {}
        for session_id, ancestor in rows:
            roots[session_id] = ancestor  # the deepest ancestor comes last
        return roots

    def recent_sessions(
        self, selection: SessionFilter, limit: int, preview_chars: int
    ) -> list[RecentSessionRow]:
        """Browse: (id, title, started, last active, source, messages, pinned, preview) of the
        ``limit`` most recently active sessions of ``selection``."""
        where, params = self._where(selection)
        rows = self._sql.execute(
            "SELECT s.id, s.title, s.started_at, s.last_active_at, s.source, s.message_count, "
            f"s.pinned, {self._preview_column()} "
            f"FROM sessions s WHERE {where} ORDER BY s.last_active_at DESC LIMIT ?",
            (preview_chars, *params, limit),
        ).fetchall()
        length = preview_chars
        return [
            (r[0], r[1], r[2], r[3], r[4], int(r[5]), int(r[6]), self._preview_text(r[7], length))
            for r in rows
        ]

    # ------------------------------------------------------------------ the picker

    def listed_recent(self, limit: int, preview_chars: int) -> list[BrowseSessionRow]:
        """(id, title, last active, source, preview) of the newest listed sessions (not
        archived, not delegates)."""
        rows = self._sql.execute(
            f"SELECT s.id, s.title, s.last_active_at, s.source, {self._preview_column()} "
            f"FROM sessions s WHERE {LISTED} ORDER BY s.last_active_at DESC LIMIT ?",
            (preview_chars, limit),
        ).fetchall()
        return self._browse_rows(rows, preview_chars)

    def listed_title_matches(
        self, words: Sequence[str], limit: int, preview_chars: int
    ) -> list[BrowseSessionRow]:
        """Listed sessions whose title holds every word (case folded), newest first."""
        conditions = ["s.title IS NOT NULL", LISTED]
        params: list[object] = [preview_chars]
        for word in words:
            condition, param = self._title_holds(word)
            conditions.append(condition)
            params.append(param)
        rows = self._sql.execute(
            f"SELECT s.id, s.title, s.last_active_at, s.source, {self._preview_column()} "
            f"FROM sessions s WHERE {' AND '.join(conditions)} "
            "ORDER BY s.last_active_at DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        return self._browse_rows(rows, preview_chars)

    def listed_sessions(self, session_ids: Sequence[str]) -> dict[str, ListedSessionRow]:
        """id → (id, title, last active, source) for those of ``session_ids`` that are listed."""
        if not session_ids:
            return {}
        wanted, ids = self._sql.in_ids("s.id", session_ids)
        rows = self._sql.execute(
            "SELECT s.id, s.title, s.last_active_at, s.source FROM sessions s "
            f"WHERE {wanted} AND {LISTED}",
            (ids,),
        ).fetchall()
        return {row[0]: (row[0], row[1], row[2], row[3]) for row in rows}

    # ------------------------------------------------------------------ messages

    def message_content(self, message_id: int) -> str | None:
        row = self._sql.execute(
            "SELECT content FROM messages WHERE id = ?", (message_id,)
        ).fetchone()
        return None if row is None else str(row[0])

    def message_rows_around(
        self, session_id: str, anchor_id: int, size: int
    ) -> tuple[list[MessageRow], list[MessageRow]]:
        """Up to ``size`` rows before the anchor (newest first), and the anchor with up to
        ``size`` rows after it (oldest first)."""
        before = self._sql.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND id < ? "
            "ORDER BY id DESC LIMIT ?",
            (session_id, anchor_id, size),
        ).fetchall()
        rest = self._sql.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND id >= ? "
            "ORDER BY id LIMIT ?",
            (session_id, anchor_id, size + 1),
        ).fetchall()
        return before, rest

    def message_row(self, message_id: int) -> list[MessageRow]:
        return self._sql.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?", (message_id,)
        ).fetchall()

    def message_rows_ends(
        self, session_id: str, head: int, tail: int, *, conversation_only: bool
    ) -> tuple[list[MessageRow], list[MessageRow]]:
        """The first ``head`` rows (oldest first) and the last ``tail`` rows (newest first);
        ``conversation_only`` keeps user and assistant messages only."""
        roles = "AND role IN ('user', 'assistant') " if conversation_only else ""
        first = self._sql.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? "
            f"{roles}ORDER BY id LIMIT ?",
            (session_id, head),
        ).fetchall()
        last = self._sql.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? "
            f"{roles}ORDER BY id DESC LIMIT ?",
            (session_id, tail),
        ).fetchall()
        return first, last

    def message_rows(self, session_id: str) -> list[MessageRow]:
        return self._sql.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? ORDER BY id",
            (session_id,),
        ).fetchall()

    def message_position(self, session_id: str, message_id: int) -> tuple[int, int]:
        """How many messages of the session come before and after ``message_id``."""
        row = self._sql.execute(
            "SELECT (SELECT count(*) FROM messages WHERE session_id = ? AND id < ?), "
            "(SELECT count(*) FROM messages WHERE session_id = ? AND id > ?)",
            (session_id, message_id, session_id, message_id),
        ).fetchone()
        return int(row[0]), int(row[1])

    def first_conversation_message(self, session_id: str) -> int | None:
        row = self._sql.execute(
            "SELECT id FROM messages WHERE session_id = ? ORDER BY role != 'user', id LIMIT 1",
            (session_id,),
        ).fetchone()
        return None if row is None else int(row[0])
