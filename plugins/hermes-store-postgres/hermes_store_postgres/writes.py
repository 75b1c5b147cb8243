"""PostgreSQL's own row writes, each run inside the caller's transaction (``db`` is a
connection inside ``with db.transaction()``): message batches (a block of ids reserved at once,
``COPY`` for bulk loads, one statement for a live turn's whole append) and the session counters.

The writes both stores take — sessions, titles, system prompts, the rows of a message batch,
deletions — are written once in :mod:`hermes_core.store.session_writes` and
:mod:`hermes_core.store.deletion`, run here through
:class:`~.statements.PostgresSql`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from hermes_hookspecs import Message

from hermes_core.store.facade import AppendedRows
from hermes_core.store.session_writes import message_rows

from .fulltext import cjk_runs
from .pair_keys import message_pair_keys

if TYPE_CHECKING:
    import psycopg

    Db = psycopg.Connection[tuple[Any, ...]]


MESSAGE_ID_LOCK = 0x4865726D6D69
"""The advisory lock held (within one statement) while a block of message ids is reserved."""

_RESERVED_IDS = (
    "SELECT reserved.first, pg_advisory_unlock({lock}) AS unlocked FROM ("
    "  SELECT setval(pg_get_serial_sequence('messages', 'id'),"
    "                nextval(pg_get_serial_sequence('messages', 'id')) + {count} - 1)"
    "         - {count} + 1 AS first"
    "  FROM (SELECT pg_advisory_lock({lock}){after} OFFSET 0) AS locked OFFSET 0"
    ") AS reserved"
)
"""One statement reserving ``count`` consecutive message ids (``first`` is the first; both
numbers are integers the code gives, never text from outside). The ``OFFSET 0`` fences keep
the order: the lock is taken, the block drawn, and the lock let go in the select list, which
is computed once the subquery's row exists. ``after`` (a ``FROM`` of a row the reservation
must wait for, or nothing) orders it after another part of the same statement."""


def _reserved_ids_sql(count: int, *, after: str = "") -> str:
    return _RESERVED_IDS.format(
        count=int(count), lock=MESSAGE_ID_LOCK, after=f" FROM {after}" if after else ""
    )


COPY_FROM = 200
"""Batches of at least this many messages are written with ``COPY`` (imports, restores,
migrations); smaller ones (a live turn) with one ``INSERT``, which costs one round trip less."""
_MESSAGE_COLUMNS = (
    "id, session_id, role, content, tool_calls, tool_call_id, tool_name, reasoning, timestamp, "
    "token_count, platform_message_id, cjk_text, pair_keys"
)
_TYPED_MARKS = (
    "(%s::bigint, %s::text, %s::text, %s::text, %s::text, %s::text, %s::text, %s::text, "
    "%s::float8, %s::bigint, %s::text, %s::text, %s::int4[])"
)
"""One message row of :func:`_insert_reserving`: its place in the batch, then the columns."""


def search_columns(content: str) -> tuple[str | None, list[int]]:
    """The search columns the client computes from a message's text: ``cjk_text`` (its CJK
    runs) and ``pair_keys``; the server generates ``search_words`` itself."""
    return cjk_runs(content), message_pair_keys(content)


def _with_search_columns(rows: Iterable[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The rows of :func:`~hermes_core.store.session_writes.message_rows` (the text third)
    with :func:`search_columns` after them."""
    return [(*row, *search_columns(row[2])) for row in rows]


def _failures(db: Db) -> contextlib.AbstractContextManager[Any]:
    """The store's translation of ``db``'s failures (nothing for a plain connection)."""
    from .translating import StoreConnection

    return db.failures if isinstance(db, StoreConnection) else contextlib.nullcontext()


def reserve_message_ids(db: Db, count: int) -> int:
    """Reserve ``count`` consecutive message ids; returns the first.

    The protocol promises an append's ids as a ``range``. Concurrent writers drawing from the
    sequence row by row would interleave, so a block is drawn at once under a session-level
    advisory lock held only within that one statement (not until commit): appends to
    different sessions still run in parallel, and the reservation costs one round trip.
    """
    row = db.execute(_reserved_ids_sql(count)).fetchone()
    return int(row[0]) if row else 1


class InsertedMessages(NamedTuple):
    """What :func:`insert_messages` wrote."""

    ids: list[int]
    tool_calls: int
    last_timestamp: float | None


def insert_messages(
    db: Db, session_id: str, messages: Iterable[Message], default_timestamp: float
) -> InsertedMessages:
    """Insert messages (with their search columns); returns their ids in order.
    Session counters are the caller's business. A batch of :data:`COPY_FROM` messages or more
    goes through ``COPY`` (a bulk load: an import, a restore, a migration), a smaller one
    through one ``INSERT`` (a live turn)."""
    built = message_rows(session_id, messages, default_timestamp)
    rows = _with_search_columns(built.rows)
    tool_calls, last_timestamp = built.tool_calls, built.last_timestamp
    if not rows:
        return InsertedMessages([], 0, None)
    if len(rows) >= COPY_FROM:
        first = reserve_message_ids(db, len(rows))
        ids = list(range(first, first + len(rows)))
        _copy_rows(db, ids, rows)
    else:
        ids = _insert_reserving(db, rows)
    return InsertedMessages(ids, tool_calls, last_timestamp)


def _insert_reserving(db: Db, rows: list[tuple[Any, ...]]) -> list[int]:
    """Reserve the ids and insert the rows in one statement (one round trip; an import's
    batch, inside its transaction); returns the ids, in the rows' order. The reservation is a
    materialised CTE: it runs once, before any row is made."""
    values, flat = _typed_rows(rows)
    inserted = db.execute(
        f"WITH reserved AS MATERIALIZED ({_reserved_ids_sql(len(rows))}) "
        f"{_INSERT_RESERVED.format(values=values)} RETURNING id",
        flat,
    ).fetchall()
    return sorted(int(found[0]) for found in inserted)


_INSERT_RESERVED = (
    f"INSERT INTO messages ({_MESSAGE_COLUMNS}) "
    "SELECT reserved.first + row.place, row.session_id, row.role, row.content, "
    "row.tool_calls, row.tool_call_id, row.tool_name, row.reasoning, row.timestamp, "
    "row.token_count, row.platform_message_id, row.cjk_text, row.pair_keys "
    "FROM reserved, (VALUES {values}) AS row(place, session_id, role, content, tool_calls, "
    "tool_call_id, tool_name, reasoning, timestamp, token_count, platform_message_id, "
    "cjk_text, pair_keys)"
)
"""The rows of a batch inserted at the ids of a ``reserved`` CTE (``values``: the batch's
:data:`_TYPED_MARKS`)."""


def _typed_rows(rows: list[tuple[Any, ...]]) -> tuple[str, list[object]]:
    """The ``VALUES`` marks of ``rows`` and their parameters, each row led by its place."""
    values = ", ".join(_TYPED_MARKS for _ in rows)
    return values, [value for place, row in enumerate(rows) for value in (place, *row)]


def append_live(
    db: Db,
    session_id: str,
    messages: Sequence[Message],
    default_timestamp: float,
    input_tokens: int,
    output_tokens: int,
) -> AppendedRows | None:
    """A live turn's append (fewer than :data:`COPY_FROM` messages) as one statement, so one
    round trip and, on the store's autocommit connection, a transaction of its own: the
    session's counters and tokens are updated (which locks its row and says what it held),
    then the ids are drawn, then the rows inserted. ``None``, having written nothing, when
    there is no such session."""
    built = message_rows(session_id, messages, default_timestamp)
    rows = _with_search_columns(built.rows)
    values, flat = _typed_rows(rows)
    found = db.execute(
        "WITH state AS ("
        "  UPDATE sessions SET message_count = message_count + %s, "
        "  tool_call_count = tool_call_count + %s, input_tokens = input_tokens + %s, "
        "  output_tokens = output_tokens + %s, last_active_at = greatest(last_active_at, %s) "
        "  WHERE id = %s RETURNING title IS NULL AS untitled, message_count - %s AS count_before"
        f"), reserved AS MATERIALIZED ({_reserved_ids_sql(len(rows), after='state')}), "
        f"inserted AS ({_INSERT_RESERVED.format(values=values)}) "
        "SELECT state.untitled, state.count_before, reserved.first FROM state, reserved",
        [
            len(rows),
            built.tool_calls,
            input_tokens,
            output_tokens,
            built.last_timestamp,
            session_id,
            len(rows),
            *flat,
        ],
    ).fetchone()
    if found is None:
        return None
    first = int(found[2])
    return AppendedRows(range(first, first + len(rows)), bool(found[0]), int(found[1]))


def _copy_rows(db: Db, ids: list[int], rows: list[tuple[Any, ...]]) -> None:
    """``COPY`` the rows in (inside the caller's transaction). Text with a lone surrogate,
    which cannot be sent, is repaired as every statement of the store repairs it."""
    from hermes_core.store.unicode_repair import storable_rows

    with (
        _failures(db),
        db.cursor() as cursor,
        cursor.copy(f"COPY messages ({_MESSAGE_COLUMNS}) FROM STDIN") as copy,
    ):
        for row_id, row in zip(ids, storable_rows(rows), strict=True):
            copy.write_row((row_id, *row))


def add_to_counters(db: Db, session_id: str, inserted: InsertedMessages) -> None:
    db.execute(
        "UPDATE sessions SET message_count = message_count + %s, "
        "tool_call_count = tool_call_count + %s, "
        "last_active_at = greatest(last_active_at, %s) WHERE id = %s",
        (len(inserted.ids), inserted.tool_calls, inserted.last_timestamp, session_id),
    )
