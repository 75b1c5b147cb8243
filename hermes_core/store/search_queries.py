"""The SQLite statements of ``session_search`` and the browse picker (FTS5).

:mod:`hermes_core.search` decides what to look for and how to present it; this module and
:mod:`.search_rows` are the only places it reads the store. :class:`SqliteSearchIndex`
implements :class:`~hermes_core.store.protocol.SearchIndex` over one connection: the reads
that are not full text are written once for every backend (:class:`~.search_rows.SearchRows`);
the full-text ones — FTS5 matching, bm25, highlights, the title candidates — are here. The
statements are the ones the search bench measures: change their shape only with the bench
beside you.

FTS5 refusing a query (syntax errors, unknown column filters…) is reported as
:class:`~hermes_core.store.errors.QueryRejected`, so the engine needs no SQLite exception.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .errors import QueryRejected
from .fulltext import find_cjk
from .protocol import HitRow, SearchIndex
from .search_rows import SearchRows
from .statements import SqliteSql

if TYPE_CHECKING:
    from hermes_core.selection.filters import SessionFilter


@contextmanager
def _rejections() -> Iterator[None]:
    try:
        yield
    except sqlite3.OperationalError as error:
        raise QueryRejected(str(error)) from error


def _role_scope_filter(
    roles: Sequence[str], scope: SessionFilter | None
) -> tuple[str, list[object]]:
    """The conditions "in ``roles`` (and in a session of ``scope``)"."""
    from .selection_sql import build_where

    marks = ",".join("?" for _ in roles)
    sql = f" AND m.role IN ({marks})"
    params: list[object] = list(roles)
    if scope is not None:
        where, scope_params = build_where(scope)
        sql += f" AND m.session_id IN (SELECT s.id FROM sessions s WHERE {where})"
        params.extend(scope_params)
    return sql, params


PREVIEW_BYTES_SQL = "substr(CAST(content AS BLOB), 1, 4 * ?)"
"""The bytes of a message's first ``?`` characters and a few more (UTF-8 takes at most four
bytes a character), read as a blob: SQLite's ``substr`` on text stops at a NUL character, and
a preview must hold the text exactly. :func:`preview_text` makes it text again."""


def preview_text(value: bytes | str | None, length: int) -> str | None:
    """The first ``length`` characters of a value :data:`PREVIEW_BYTES_SQL` read (a
    character its byte cut split is past ``length``, so never kept)."""
    if value is None:
        return None
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    return text[:length]


class SqliteSearchIndex(SearchRows):
    """The search reads of one SQLite store (see :class:`~.protocol.SearchIndex`; the reads
    that are not full text: :class:`~.search_rows.SearchRows`)."""

    database_errors: tuple[type[Exception], ...] = (sqlite3.DatabaseError,)
    """What this backend raises when the store itself cannot be read."""
    full_rank_max: int = 12_000
    """FTS5 ranks up to this many matches by exact bm25 within the latency target."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        self._sql = SqliteSql(connection)

    # ------------------------------------------------------------------ primitives

    _preview_sql = PREVIEW_BYTES_SQL

    def _where(self, selection: SessionFilter) -> tuple[str, list[object]]:
        from .selection_sql import build_where

        return build_where(selection)

    def _title_holds(self, word: str) -> tuple[str, object]:
        """ASCII words case folded by ``LIKE``, others by ``lower`` (which folds ASCII only)."""
        if word.isascii():
            return "s.title LIKE ? ESCAPE '\\'", f"%{_escape_like(word)}%"
        return "instr(lower(s.title), ?) > 0", word.lower()

    def _preview_text(self, value: Any, length: int) -> str | None:
        return preview_text(value, length)

    # ------------------------------------------------------------------ titles

    def title_candidates(
        self, ascii_words: Sequence[str], cjk_runs: Sequence[str], max_length: int, limit: int
    ) -> list[tuple[int, str]]:
        """(row key, title) of titles that may name a query: each ASCII word a substring
        (ASCII case folded), each CJK run a substring, at most ``max_length`` characters."""
        conditions = ["title IS NOT NULL", "length(title) <= ?"]
        params: list[object] = [max_length]
        for word in ascii_words:
            conditions.append("title LIKE ? ESCAPE '\\'")
            params.append("%" + _escape_like(word) + "%")
        for run in cjk_runs:
            conditions.append("instr(title, ?) > 0")
            params.append(run)
        rows = self._connection.execute(
            f"SELECT rowid, title FROM sessions INDEXED BY idx_sessions_title "
            f"WHERE {' AND '.join(conditions)} LIMIT ?",
            [*params, limit],
        ).fetchall()
        return [(int(rowid), str(title)) for rowid, title in rows]

    def titled_sessions(
        self, keys: Sequence[int], scope: SessionFilter | None
    ) -> list[tuple[int, str, float]]:
        """(row key, session id, last_active_at) of the sessions of ``keys`` (and ``scope``)."""
        from .selection_sql import build_where

        marks = ",".join("?" for _ in keys)
        where, params = build_where(scope) if scope is not None else ("1", [])
        rows = self._connection.execute(
            f"SELECT s.rowid, s.id, s.last_active_at FROM sessions s "
            f"WHERE s.rowid IN ({marks}) AND {where}",
            [*keys, *params],
        )
        return [(int(r[0]), str(r[1]), float(r[2])) for r in rows]

    # ------------------------------------------------------------------ full text

    def fts_snippet(
        self, fts_query: str, message_id: int, start: str, end: str, ellipsis: str, tokens: int
    ) -> str | None:
        """The index's own highlighted snippet of ``message_id`` (None when it has none)."""
        try:
            row = self._connection.execute(
                "SELECT snippet(messages_fts, 0, ?, ?, ?, ?) FROM messages_fts "
                "WHERE messages_fts MATCH ? AND rowid = ?",
                (start, end, ellipsis, tokens, fts_query, message_id),
            ).fetchone()
        except sqlite3.OperationalError:
            return None
        return row[0] if row and row[0] else None

    def more_matches_than(self, fts: str, count: int) -> bool:
        """Whether ``fts`` matches more than ``count`` messages (any role)."""
        with _rejections():
            row = self._connection.execute(
                "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? "
                "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                (fts, count),
            ).fetchone()
        return row is not None

    def ranked_matches(self, fts: str, limit: int) -> list[tuple[int, float]]:
        """(message id, bm25 score — lower is better) of the best ``limit`` matches."""
        with _rejections():
            return self._connection.execute(
                "SELECT rowid, bm25(messages_fts) AS score FROM messages_fts "
                "WHERE messages_fts MATCH ? ORDER BY score, rowid DESC LIMIT ?",
                (fts, limit),
            ).fetchall()

    def hit_details(
        self, message_ids: Sequence[int], roles: Sequence[str], scope: SessionFilter | None
    ) -> dict[int, tuple[str, float]]:
        """id → (session id, timestamp) of those messages in ``roles`` (and ``scope``)."""
        where, params = _role_scope_filter(roles, scope)
        marks = ",".join("?" for _ in message_ids)
        return {
            row[0]: (row[1], row[2])
            for row in self._connection.execute(
                f"SELECT m.id, m.session_id, m.timestamp FROM messages m "
                f"WHERE m.id IN ({marks}){where}",
                [*message_ids, *params],
            )
        }

    def ranked_filtered_matches(
        self, fts: str, roles: Sequence[str], scope: SessionFilter | None, limit: int
    ) -> list[HitRow]:
        """(id, session id, timestamp, bm25 score) of the best ``limit`` matches in ``roles``."""
        where, params = _role_scope_filter(roles, scope)
        with _rejections():
            rows = self._connection.execute(
                "SELECT f.rowid, m.session_id, m.timestamp, bm25(messages_fts) AS score "
                "FROM messages_fts f JOIN messages m ON m.id = f.rowid "
                f"WHERE messages_fts MATCH ?{where} ORDER BY score, f.rowid DESC LIMIT ?",
                [fts, *params, limit],
            ).fetchall()
        return rows

    def newest_matches(
        self,
        fts: str,
        roles: Sequence[str],
        scope: SessionFilter | None,
        *,
        oldest_first: bool,
        limit: int,
        mark: str,
    ) -> list[tuple[int, str, float, str, bytes | None]]:
        """(id, session id, timestamp, content with each match opened by ``mark``, the index's
        token count record) of the ``limit`` newest (oldest) matches in ``roles``."""
        where, params = _role_scope_filter(roles, scope)
        direction = "ASC" if oldest_first else "DESC"
        assert mark == "\x01", "the highlight statement opens matches with char(1)"
        with _rejections():
            return self._connection.execute(
                "SELECT f.rowid, m.session_id, m.timestamp, "
                "highlight(messages_fts, 0, char(1), char(2)), d.sz "
                "FROM messages_fts f JOIN messages m ON m.id = f.rowid "
                "JOIN messages_fts_docsize d ON d.id = f.rowid "
                f"WHERE messages_fts MATCH ?{where} ORDER BY f.rowid {direction} LIMIT ?",
                [fts, *params, limit],
            ).fetchall()

    def index_averages(self) -> bytes | None:
        """FTS5's averages record (row 1 of ``messages_fts_data``: rows, then tokens)."""
        row = self._connection.execute(
            "SELECT block FROM messages_fts_data WHERE id = 1"
        ).fetchone()
        return None if row is None or not row[0] else bytes(row[0])

    def cjk_matches(self, text: str, limit: int) -> list[int]:
        """Ids of the newest messages holding the CJK substring ``text``."""
        return find_cjk(self._connection, text, limit=limit)

    def message_contents(
        self, message_ids: Sequence[int], roles: Sequence[str], scope: SessionFilter | None
    ) -> list[tuple[int, str, float, str]]:
        """(id, session id, timestamp, content) of those messages in ``roles`` (``scope``)."""
        where, params = _role_scope_filter(roles, scope)
        marks = ",".join("?" for _ in message_ids)
        return self._connection.execute(
            f"SELECT m.id, m.session_id, m.timestamp, m.content FROM messages m "
            f"WHERE m.id IN ({marks}){where}",
            [*message_ids, *params],
        ).fetchall()


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def search_index_of(source: object) -> SearchIndex:
    """The search reads of ``source``: an open store (anything with a ``search_index``), a
    :class:`SearchIndex` itself, or — for callers written before the store had backends —
    an open ``sqlite3`` connection to a ``state.db``."""
    if isinstance(source, sqlite3.Connection):
        return SqliteSearchIndex(source)
    index = getattr(source, "search_index", None)
    if index is not None:
        return index  # type: ignore[no-any-return]
    return source  # type: ignore[return-value]
