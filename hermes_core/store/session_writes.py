"""Session row writes both stores take: inserting a session, its titles (manual, queued,
lineage, automatic), its system prompt, and the rows a message batch is made of — each run
inside the caller's write transaction, in the SQL both stores take (see :mod:`.statements`),
so one operation (a compression continuation, an import batch) combines several steps
atomically.

Title uniqueness is the database's (a unique partial index on both backends); the checks
here give the clear error first. Where writers run side by side (PostgreSQL), one losing the
race gets the same error from the index, or — for a title the store picks itself — picks
again (:func:`store_unique_title`). What differs per backend stays with it: how the message
rows are inserted and indexed, which delegates a deletion takes along, and how rows are
deleted (SQLite: :mod:`.rowwrites`; the PostgreSQL plugin's ``writes``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from hermes_hookspecs import Message, ParentKind

from .errors import InvalidTitle, SessionNotFound, TitleInUse
from .ids import new_session_id
from .rows import tool_calls_to_json
from .state_meta import write_state
from .statements import Sql, marks
from .titles import MAX_TITLE_LENGTH, cut_title, lineage_title, sanitize_title, split_lineage_title
from .validation import check_message, check_new_session

ROUTE_FOLLOWING_KINDS = frozenset({"compression", "branch"})
"""Children a gateway chat follows: the conversation goes on in them (a delegate does not)."""
_TITLE_ATTEMPTS = 50
"""How often :func:`store_unique_title` picks again before giving up."""


def session_exists(sql: Sql, session_id: str) -> bool:
    """Whether a session ``session_id`` exists."""
    return sql.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is not None


def title_owner(sql: Sql, title: str) -> str | None:
    """The id of the session titled ``title``, if any."""
    row = sql.execute("SELECT id FROM sessions WHERE title = ?", (title,)).fetchone()
    return None if row is None else str(row[0])


def insert_session(
    sql: Sql,
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
    """Insert a session row; returns its id. A manual ``title`` is checked (S4); without one, a
    title queued for this id is applied."""
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
    # 6 hex digits collide easily among sessions started in the same second (bulk imports):
    # draw again rather than refuse an id the caller never chose.
    while generated and session_exists(sql, session_id):
        session_id = new_session_id(gateway=gateway, now=started)
    queued = take_queued_title(sql, session_id)
    clean_title, title_source = None, None
    if title is not None:
        clean_title, title_source = checked_manual_title(sql, title), "user"
    elif queued is not None and title_owner(sql, queued) is None:
        # Checked when queued; if another session took it since, record this one untitled
        # rather than refuse to record it at all.
        clean_title, title_source = queued, "user"
    columns: dict[str, Any] = {
        "id": session_id,
        "source": source,
        "title": clean_title,
        "title_source": title_source,
        "started_at": started,
        "last_active_at": started,
        "system_prompt_hash": store_system_prompt(sql, system_prompt),
        "model_config": json.dumps(model_config) if model_config is not None else None,
        "metadata": json.dumps(metadata) if metadata else None,
        "parent_session_id": parent_session_id,
        "parent_kind": parent_kind,
        **fields,
    }
    for flag in ("pinned", "archived"):
        if flag in columns:
            columns[flag] = int(bool(columns[flag]))
    values = list(columns.values())
    try:
        with sql.attempt():  # the caller's transaction survives the error
            sql.execute(
                f"INSERT INTO sessions ({', '.join(columns)}) VALUES ({marks(values)})", values
            )
    except Exception as error:  # the driver's integrity error, read by the backend
        conflict = sql.conflict(error)
        if conflict == "id":
            raise ValueError(f"a session with id {session_id} already exists") from None
        if conflict == "parent":
            raise SessionNotFound(f"no session {parent_session_id}") from None
        if conflict == "title":
            raise TitleInUse(f"title '{clean_title}' is already used by another session") from None
        raise
    if parent_session_id is not None and parent_kind in ROUTE_FOLLOWING_KINDS:
        take_over_route(sql, parent_session_id, session_id, started)
    return session_id


def take_over_route(sql: Sql, parent_id: str, child_id: str, now: float) -> None:
    """A compression continuation or ``/branch`` child of a session a gateway chat is routed
    to becomes that chat's session, in the transaction that creates it (SPEC G4): the routing
    row moves to the child and the child carries the key and chat identity."""
    moved = sql.execute(
        "UPDATE gateway_routing SET session_id = ?, updated_at = ? WHERE session_id = ?",
        (child_id, now, parent_id),
    ).rowcount
    if moved:
        sql.execute(
            "UPDATE sessions SET "
            "session_key = coalesce(session_key, (SELECT session_key FROM sessions WHERE id = ?)), "
            "chat_id = coalesce(chat_id, (SELECT chat_id FROM sessions WHERE id = ?)), "
            "chat_type = coalesce(chat_type, (SELECT chat_type FROM sessions WHERE id = ?)), "
            "thread_id = coalesce(thread_id, (SELECT thread_id FROM sessions WHERE id = ?)), "
            "user_id = coalesce(user_id, (SELECT user_id FROM sessions WHERE id = ?)) "
            "WHERE id = ?",
            (parent_id, parent_id, parent_id, parent_id, parent_id, child_id),
        )


def store_system_prompt(sql: Sql, prompt: str | None) -> str | None:
    """Keep one copy of each distinct system prompt; returns its SHA-256 key."""
    if prompt is None:
        return None
    digest = hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()
    sql.execute(
        "INSERT INTO system_prompts(hash, prompt) VALUES (?, ?) ON CONFLICT DO NOTHING",
        (digest, prompt),
    )
    return digest


def checked_manual_title(sql: Sql, title: str | None, *, exclude_id: str | None = None) -> str:
    """A title a person typed, sanitised; empty, too long or used elsewhere is an error."""
    clean = sanitize_title(title or "")
    if clean is None:
        raise InvalidTitle("a title cannot be empty")
    if len(clean) > MAX_TITLE_LENGTH:
        raise InvalidTitle(f"title too long ({len(clean)} characters, at most {MAX_TITLE_LENGTH})")
    owner = title_owner(sql, clean)
    if owner is not None and owner != exclude_id:
        raise TitleInUse(f"title '{clean}' is already used by session {owner}")
    return clean


def write_title(sql: Sql, session_id: str, title: str, source: str) -> None:
    """Set the title (and where it came from) of ``session_id``; a title another writer took
    meanwhile is :class:`~.errors.TitleInUse`."""
    try:
        with sql.attempt():
            sql.execute(
                "UPDATE sessions SET title = ?, title_source = ? WHERE id = ?",
                (title, source, session_id),
            )
    except Exception as error:  # the driver's integrity error, read by the backend
        if sql.conflict(error) == "title":
            raise TitleInUse(f"title '{title}' is already used by another session") from None
        raise


def queue_title(sql: Sql, session_id: str, title: str) -> None:
    """Keep ``title`` for when ``session_id`` is created (SPEC S4)."""
    write_state(sql, {f"queued_title:{session_id}": title})


def take_queued_title(sql: Sql, session_id: str) -> str | None:
    """The title queued for ``session_id``, no longer queued; None when there is none."""
    rows = sql.execute(
        "DELETE FROM state_meta WHERE key = ? RETURNING value", (f"queued_title:{session_id}",)
    ).fetchall()
    return str(rows[0][0]) if rows else None


def next_lineage_title(sql: Sql, parent_title: str) -> str:
    """The title of a new compression continuation of a session titled ``parent_title``."""
    base, _number = split_lineage_title(parent_title)
    highest = 1
    rows = sql.execute(
        "SELECT title FROM sessions WHERE title = ? OR substr(title, 1, ?) = ?",
        (base, len(base) + 2, base + " #"),
    ).fetchall()
    for (title,) in rows:
        found_base, number = split_lineage_title(str(title))
        if found_base == base:
            highest = max(highest, number)
    # A base cut to make room for the suffix is another lineage to the query above, so its
    # numbers can already be taken: skip to the first free one.
    number = highest + 1
    while True:
        suffix = f" #{number}"
        stem = base
        if len(stem) + len(suffix) > MAX_TITLE_LENGTH:
            stem = stem[: MAX_TITLE_LENGTH - len(suffix)].rstrip()
        title = lineage_title(stem, number)
        if title_owner(sql, title) is None:
            return title
        number += 1


def unique_title(sql: Sql, proposal: str, session_id: str) -> str | None:
    """``proposal`` sanitised, cut to 100 characters and made unique among the other sessions
    with a visible `` (2)``-style suffix (never ``#N``, which means lineage); None when the
    proposal is empty once sanitised."""
    clean = sanitize_title(proposal)
    if clean is None:
        return None
    candidate = cut_title(clean)
    number = 1
    while sql.execute(
        "SELECT 1 FROM sessions WHERE title = ? AND id != ?", (candidate, session_id)
    ).fetchone():
        number += 1
        suffix = f" ({number})"
        candidate = cut_title(clean, MAX_TITLE_LENGTH - len(suffix)) + suffix
    return candidate


def store_unique_title(
    sql: Sql, session_id: str, pick: Callable[[], str | None], source: str, *, if_untitled: bool
) -> str | None:
    """Write the title ``pick()`` proposes; when another writer took it meanwhile (the unique
    index says so once that one commits), pick again. Returns what was stored (None: nothing
    to propose, or ``if_untitled`` and the session has a title by now). With one writer at a
    time (SQLite) the first pick is still free when it is written."""
    condition = " AND title IS NULL" if if_untitled else ""
    for _attempt in range(_TITLE_ATTEMPTS):
        candidate = pick()
        if candidate is None:
            return None
        try:
            with sql.attempt():
                changed = sql.execute(
                    f"UPDATE sessions SET title = ?, title_source = ? WHERE id = ?{condition}",
                    (candidate, source, session_id),
                ).rowcount
        except Exception as error:  # the driver's integrity error, read by the backend
            if sql.conflict(error) == "title":
                continue
            raise
        return candidate if changed else None
    raise TitleInUse(f"could not find a free title for session {session_id}")


def write_lineage_title(sql: Sql, session_id: str, parent_title: str) -> None:
    """Give the continuation ``session_id`` the next free ``#N`` title of ``parent_title``'s
    lineage (a number another writer took meanwhile is passed over)."""
    store_unique_title(
        sql, session_id, lambda: next_lineage_title(sql, parent_title), "lineage", if_untitled=False
    )


def automatic_title(sql: Sql, session_id: str, proposal: str) -> str | None:
    """Store an automatic title unless one exists by now: cut to 100 characters, made unique
    with a `` (2)``-style suffix (never ``#N``, which means lineage). Returns what was stored."""
    return store_unique_title(
        sql, session_id, lambda: unique_title(sql, proposal, session_id), "auto", if_untitled=True
    )


class MessageRows(NamedTuple):
    """A batch of messages as ``messages`` rows (:func:`message_rows`), before they are written."""

    rows: list[tuple[Any, ...]]
    """``session_id, role, content, tool_calls, tool_call_id, tool_name, reasoning, timestamp,
    token_count, platform_message_id`` for each message, in order."""
    tool_calls: int
    has_assistant: bool
    last_timestamp: float | None


def message_rows(
    session_id: str, messages: Iterable[Message], default_timestamp: float
) -> MessageRows:
    """The rows of ``messages`` for ``session_id`` (a message without a timestamp gets
    ``default_timestamp``), each message checked as its row is built: a batch with a bad
    message raises before anything is written."""
    rows: list[tuple[Any, ...]] = []
    tool_calls = 0
    has_assistant = False
    last_timestamp: float | None = None
    for number, message in enumerate(messages, start=1):
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
            )
        )
        tool_calls += len(message.tool_calls)
        has_assistant = has_assistant or message.role == "assistant"
    return MessageRows(rows, tool_calls, has_assistant, last_timestamp)
