"""Row-level writes shared by the store's operations, each run inside the caller's transaction
(``db`` is a connection inside ``with db.transaction()``), so one operation — a compression
continuation, an import batch — can combine several steps atomically.

Title uniqueness is the database's (a unique partial index); the checks here give the clear
error first, and a concurrent writer losing the race gets the same error from the index.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from hermes_hookspecs import Message, ParentKind

from hermes_core.store.errors import InvalidTitle, SessionNotFound, TitleInUse
from hermes_core.store.ids import new_session_id
from hermes_core.store.rows import tool_calls_to_json
from hermes_core.store.rowwrites import ROUTE_FOLLOWING_KINDS, take_over_route
from hermes_core.store.titles import (
    MAX_TITLE_LENGTH,
    cut_title,
    lineage_title,
    sanitize_title,
    split_lineage_title,
)
from hermes_core.store.validation import check_message, check_new_session

from .fulltext import cjk_runs

if TYPE_CHECKING:
    import psycopg

    Db = psycopg.Connection[tuple[Any, ...]]


def session_exists(db: Db, session_id: str) -> bool:
    return db.execute("SELECT 1 FROM sessions WHERE id = %s", (session_id,)).fetchone() is not None


def title_owner(db: Db, title: str) -> str | None:
    row = db.execute("SELECT id FROM sessions WHERE title = %s", (title,)).fetchone()
    return None if row is None else str(row[0])


def insert_session(
    db: Db,
    *,
    source: str,
    session_id: str | None,
    gateway: bool,
    started: float,
    title: str | None,
    system_prompt: str | None,
    model_config: Mapping[str, Any] | None,
    metadata: Mapping[str, Any] | None,
    parent_session_id: str | None,
    parent_kind: ParentKind | None,
    fields: Mapping[str, Any],
) -> str:
    """Insert a session row; returns its id (see ``hermes_core.store.rowwrites``)."""
    import psycopg.errors

    check_new_session(
        session_id=session_id,
        source=source,
        started=started,
        parent_session_id=parent_session_id,
        parent_kind=parent_kind,
        fields=fields,
    )
    generated = session_id is None
    session_id = session_id or new_session_id(gateway=gateway, now=started)
    while generated and session_exists(db, session_id):
        session_id = new_session_id(gateway=gateway, now=started)
    queued = take_queued_title(db, session_id)
    clean_title, title_source = None, None
    if title is not None:
        clean_title, title_source = checked_manual_title(db, title), "user"
    elif queued is not None and title_owner(db, queued) is None:
        clean_title, title_source = queued, "user"
    columns: dict[str, Any] = {
        "id": session_id,
        "source": source,
        "title": clean_title,
        "title_source": title_source,
        "started_at": started,
        "last_active_at": started,
        "system_prompt_hash": store_system_prompt(db, system_prompt),
        "model_config": json.dumps(model_config) if model_config is not None else None,
        "metadata": json.dumps(metadata) if metadata else None,
        "parent_session_id": parent_session_id,
        "parent_kind": parent_kind,
        **fields,
    }
    for flag in ("pinned", "archived"):
        if flag in columns:
            columns[flag] = int(bool(columns[flag]))
    names = ", ".join(columns)
    marks = ", ".join("%s" for _ in columns)
    try:
        with db.transaction():  # a savepoint: the caller's transaction survives the error
            db.execute(f"INSERT INTO sessions ({names}) VALUES ({marks})", list(columns.values()))
    except psycopg.errors.UniqueViolation as error:
        if error.diag.constraint_name == "idx_sessions_title":
            raise TitleInUse(f"title '{clean_title}' is already used by another session") from None
        raise ValueError(f"a session with id {session_id} already exists") from None
    except psycopg.errors.ForeignKeyViolation:
        raise SessionNotFound(f"no session {parent_session_id}") from None
    if parent_session_id is not None and parent_kind in ROUTE_FOLLOWING_KINDS:
        take_over_route(
            lambda sql, params: db.execute(sql.replace("?", "%s"), params),
            parent_session_id,
            session_id,
            started,
        )
    return session_id


def store_system_prompt(db: Db, prompt: str | None) -> str | None:
    """Keep one copy of each distinct system prompt; returns its SHA-256 key."""
    if prompt is None:
        return None
    digest = hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()
    db.execute(
        "INSERT INTO system_prompts(hash, prompt) VALUES (%s, %s) ON CONFLICT DO NOTHING",
        (digest, prompt),
    )
    return digest


def checked_manual_title(db: Db, title: str | None, *, exclude_id: str | None = None) -> str:
    """A title a person typed, sanitised; empty, too long or used elsewhere is an error."""
    clean = sanitize_title(title or "")
    if clean is None:
        raise InvalidTitle("a title cannot be empty")
    if len(clean) > MAX_TITLE_LENGTH:
        raise InvalidTitle(f"title too long ({len(clean)} characters, at most {MAX_TITLE_LENGTH})")
    owner = title_owner(db, clean)
    if owner is not None and owner != exclude_id:
        raise TitleInUse(f"title '{clean}' is already used by session {owner}")
    return clean


def write_title(db: Db, session_id: str, title: str, source: str) -> None:
    import psycopg.errors

    try:
        with db.transaction():
            db.execute(
                "UPDATE sessions SET title = %s, title_source = %s WHERE id = %s",
                (title, source, session_id),
            )
    except psycopg.errors.UniqueViolation:
        raise TitleInUse(f"title '{title}' is already used by another session") from None


def write_state(db: Db, values: Mapping[str, str]) -> None:
    if values:
        db.cursor().executemany(
            "INSERT INTO state_meta(key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            list(values.items()),
        )


def delete_state(db: Db, keys: Sequence[str]) -> None:
    db.execute("DELETE FROM state_meta WHERE key = ANY(%s)", (list(keys),))


def queue_title(db: Db, session_id: str, title: str) -> None:
    write_state(db, {f"queued_title:{session_id}": title})


def take_queued_title(db: Db, session_id: str) -> str | None:
    row = db.execute(
        "DELETE FROM state_meta WHERE key = %s RETURNING value", (f"queued_title:{session_id}",)
    ).fetchone()
    return None if row is None else str(row[0])


def next_lineage_title(db: Db, parent_title: str) -> str:
    """The title of a new compression continuation of a session titled ``parent_title``."""
    base, _number = split_lineage_title(parent_title)
    highest = 1
    rows = db.execute(
        "SELECT title FROM sessions WHERE title = %s OR left(title, %s) = %s",
        (base, len(base) + 2, base + " #"),
    )
    for (title,) in rows:
        found_base, number = split_lineage_title(str(title))
        if found_base == base:
            highest = max(highest, number)
    number = highest + 1
    while True:
        suffix = f" #{number}"
        stem = base
        if len(stem) + len(suffix) > MAX_TITLE_LENGTH:
            stem = stem[: MAX_TITLE_LENGTH - len(suffix)].rstrip()
        title = lineage_title(stem, number)
        if title_owner(db, title) is None:
            return title
        number += 1


def unique_title(db: Db, proposal: str, session_id: str) -> str | None:
    """``proposal`` sanitised, cut, and made unique with a `` (2)``-style suffix."""
    clean = sanitize_title(proposal)
    if clean is None:
        return None
    candidate = cut_title(clean)
    number = 1
    while db.execute(
        "SELECT 1 FROM sessions WHERE title = %s AND id != %s", (candidate, session_id)
    ).fetchone():
        number += 1
        suffix = f" ({number})"
        candidate = cut_title(clean, MAX_TITLE_LENGTH - len(suffix)) + suffix
    return candidate


def store_unique_title(
    db: Db, session_id: str, pick: Callable[[], str | None], source: str, *, if_untitled: bool
) -> str | None:
    """Write the title ``pick()`` proposes; when another transaction took it meanwhile (the
    unique index says so once that one commits), pick again. Returns what was stored (None:
    nothing to propose, or ``if_untitled`` and the session has a title by now)."""
    import psycopg.errors

    condition = " AND title IS NULL" if if_untitled else ""
    for _attempt in range(50):
        candidate = pick()
        if candidate is None:
            return None
        try:
            with db.transaction():
                changed = db.execute(
                    f"UPDATE sessions SET title = %s, title_source = %s WHERE id = %s{condition}",
                    (candidate, source, session_id),
                ).rowcount
        except psycopg.errors.UniqueViolation:
            continue
        return candidate if changed else None
    raise TitleInUse(f"could not find a free title for session {session_id}")


def automatic_title(db: Db, session_id: str, proposal: str) -> str | None:
    """Store an automatic title unless one exists by now; returns what was stored."""
    return store_unique_title(
        db, session_id, lambda: unique_title(db, proposal, session_id), "auto", if_untitled=True
    )


MESSAGE_ID_LOCK = 0x4865726D6D69
"""The advisory lock held (within one statement) while a block of message ids is reserved."""

_RESERVED_IDS = (
    "SELECT reserved.first, pg_advisory_unlock({lock}) AS unlocked FROM ("
    "  SELECT setval(pg_get_serial_sequence('messages', 'id'),"
    "                nextval(pg_get_serial_sequence('messages', 'id')) + {count} - 1)"
    "         - {count} + 1 AS first"
    "  FROM (SELECT pg_advisory_lock({lock}) OFFSET 0) AS locked OFFSET 0"
    ") AS reserved"
)
"""One statement reserving ``count`` consecutive message ids (``first`` is the first; both
numbers are integers the code gives, never text from outside). The ``OFFSET 0`` fences keep
the order: the lock is taken, the block drawn, and the lock let go in the select list, which
is computed once the subquery's row exists."""


def _reserved_ids_sql(count: int) -> str:
    return _RESERVED_IDS.format(count=int(count), lock=MESSAGE_ID_LOCK)


COPY_FROM = 200
"""Batches of at least this many messages are written with ``COPY`` (imports, restores,
migrations); smaller ones (a live turn) with one ``INSERT``, which costs one round trip less."""
_MESSAGE_COLUMNS = (
    "id, session_id, role, content, tool_calls, tool_call_id, tool_name, reasoning, timestamp, "
    "token_count, platform_message_id, cjk_text"
)
_TYPED_MARKS = (
    "(%s::bigint, %s::text, %s::text, %s::text, %s::text, %s::text, %s::text, %s::text, "
    "%s::float8, %s::bigint, %s::text, %s::text)"
)
"""One message row of :func:`_insert_reserving`: its place in the batch, then the columns."""


@contextlib.contextmanager
def pipelined(db: Db, messages: int) -> Iterator[None]:
    """A ``with`` block in psycopg's pipeline mode for a live append of ``messages`` (fewer
    than :data:`COPY_FROM`: ``COPY`` cannot run in a pipeline): its statements go out without
    waiting for each answer, so ``BEGIN`` travels with the first query and the counters'
    ``UPDATE`` with ``COMMIT`` — three round trips a turn instead of five. Entering or leaving
    the pipeline on a lost connection fails as every statement does (the store's error)."""
    if messages >= COPY_FROM:
        yield
        return
    with _failures(db), db.pipeline():
        yield


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
    """Insert messages (their search columns fill themselves); returns their ids in order.
    Session counters are the caller's business. A batch of :data:`COPY_FROM` messages or more
    goes through ``COPY`` (a bulk load: an import, a restore, a migration), a smaller one
    through one ``INSERT`` (a live turn)."""
    rows: list[tuple[Any, ...]] = []
    tool_calls = 0
    last_timestamp: float | None = None
    for number, message in enumerate(messages, start=1):
        # Checked as the rows are built, before anything is written: a batch with a bad
        # message writes nothing.
        check_message(message, where=f"message {number}: ")
        timestamp = default_timestamp if message.timestamp is None else message.timestamp
        last_timestamp = timestamp if last_timestamp is None else max(last_timestamp, timestamp)
        rows.append(
            (
                session_id,
                message.role,
                message.content,
                tool_calls_to_json(message.tool_calls),
                message.tool_call_id,
                message.tool_name,
                message.reasoning,
                timestamp,
                message.token_count,
                message.platform_message_id,
                cjk_runs(message.content),
            )
        )
        tool_calls += len(message.tool_calls)
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
    """Reserve the ids and insert the rows in one statement (one round trip, where a live
    turn's append used three); returns the ids, in the rows' order. The reservation is a
    materialised CTE: it runs once, before any row is made."""
    values = ", ".join(_TYPED_MARKS for _ in rows)
    flat = [value for place, row in enumerate(rows) for value in (place, *row)]
    inserted = db.execute(
        f"WITH reserved AS MATERIALIZED ({_reserved_ids_sql(len(rows))}) "
        f"INSERT INTO messages ({_MESSAGE_COLUMNS}) "
        "SELECT reserved.first + row.place, row.session_id, row.role, row.content, "
        "row.tool_calls, row.tool_call_id, row.tool_name, row.reasoning, row.timestamp, "
        "row.token_count, row.platform_message_id, row.cjk_text "
        f"FROM reserved, (VALUES {values}) AS row(place, session_id, role, content, tool_calls, "
        "tool_call_id, tool_name, reasoning, timestamp, token_count, platform_message_id, "
        "cjk_text) RETURNING id",
        flat,
    ).fetchall()
    return sorted(int(found[0]) for found in inserted)


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


def with_delegates(db: Db, session_ids: Sequence[str]) -> list[str]:
    """``session_ids`` followed by their delegate/subagent sessions at any depth."""
    rows = db.execute(
        "WITH RECURSIVE family(id) AS ("
        "  SELECT unnest(%s::text[])"
        "  UNION"
        "  SELECT c.id FROM sessions c JOIN family f ON c.parent_session_id = f.id"
        "  WHERE c.parent_kind = 'delegate'"
        ") SELECT id FROM family",
        (list(session_ids),),
    ).fetchall()
    return list(dict.fromkeys([*session_ids, *(str(row[0]) for row in rows)]))


def delete_sessions(db: Db, session_ids: Sequence[str]) -> int:
    """Delete sessions with their messages; children not deleted lose their parent link (and
    its kind). Returns how many sessions were deleted."""
    ids = list(session_ids)
    if not ids:
        return 0
    db.execute(
        "UPDATE sessions SET parent_session_id = NULL, parent_kind = NULL "
        "WHERE parent_session_id = ANY(%s) AND NOT (id = ANY(%s))",
        (ids, ids),
    )
    db.execute("DELETE FROM messages WHERE session_id = ANY(%s)", (ids,))
    total = db.execute("DELETE FROM sessions WHERE id = ANY(%s)", (ids,)).rowcount
    db.execute(
        "DELETE FROM system_prompts p WHERE NOT EXISTS "
        "(SELECT 1 FROM sessions s WHERE s.system_prompt_hash = p.hash)"
    )
    return total
