"""Row-level writes shared by the store's operations, each run inside the caller's write
transaction (``db`` is a connection that holds the write lock).

Keeping them here lets one operation — a compression continuation, say — combine several
steps in a single transaction, so a crash never leaves half of it behind.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from hermes_hookspecs import Message, ParentKind

from . import fulltext
from .errors import InvalidTitle, SessionNotFound, TitleInUse
from .ids import new_session_id
from .rows import tool_calls_to_json
from .titles import MAX_TITLE_LENGTH, cut_title, lineage_title, sanitize_title, split_lineage_title
from .validation import check_message, check_new_session


def session_exists(db: sqlite3.Connection, session_id: str) -> bool:
    return db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is not None


def insert_session(
    db: sqlite3.Connection,
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
    while generated and session_exists(db, session_id):
        session_id = new_session_id(gateway=gateway, now=started)
    queued = take_queued_title(db, session_id)
    clean_title, title_source = None, None
    if title is not None:
        clean_title, title_source = checked_manual_title(db, title), "user"
    elif (
        queued is not None
        and not db.execute("SELECT 1 FROM sessions WHERE title = ?", (queued,)).fetchone()
    ):
        # Checked when queued; if another session took it since, record this one untitled
        # rather than refuse to record it at all.
        clean_title, title_source = queued, "user"
    columns = {
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
    names = ", ".join(columns)
    marks = ", ".join("?" for _ in columns)
    try:
        db.execute(f"INSERT INTO sessions ({names}) VALUES ({marks})", list(columns.values()))
    except sqlite3.IntegrityError as error:
        if "sessions.id" in str(error):
            raise ValueError(f"a session with id {session_id} already exists") from error
        if "FOREIGN KEY" in str(error):
            raise SessionNotFound(f"no session {parent_session_id}") from error
        raise
    if parent_session_id is not None and parent_kind in ROUTE_FOLLOWING_KINDS:
        take_over_route(db.execute, parent_session_id, session_id, started)
    return session_id


ROUTE_FOLLOWING_KINDS = frozenset({"compression", "branch"})
"""Children a gateway chat follows: the conversation goes on in them (a delegate does not)."""


def take_over_route(
    execute: Callable[[str, Sequence[Any]], Any], parent_id: str, child_id: str, now: float
) -> None:
    """A compression continuation or ``/branch`` child of a session a gateway chat is routed
    to becomes that chat's session, in the transaction that creates it (SPEC G4): the routing
    row moves to the child and the child carries the key and chat identity. ``execute`` runs
    one statement written with ``?`` marks on the backend's connection (every backend's
    ``insert_session`` calls this)."""
    moved = execute(
        "UPDATE gateway_routing SET session_id = ?, updated_at = ? WHERE session_id = ?",
        (child_id, now, parent_id),
    ).rowcount
    if moved:
        execute(
            "UPDATE sessions SET "
            "session_key = coalesce(session_key, (SELECT session_key FROM sessions WHERE id = ?)), "
            "chat_id = coalesce(chat_id, (SELECT chat_id FROM sessions WHERE id = ?)), "
            "chat_type = coalesce(chat_type, (SELECT chat_type FROM sessions WHERE id = ?)), "
            "thread_id = coalesce(thread_id, (SELECT thread_id FROM sessions WHERE id = ?)), "
            "user_id = coalesce(user_id, (SELECT user_id FROM sessions WHERE id = ?)) "
            "WHERE id = ?",
            (parent_id, parent_id, parent_id, parent_id, parent_id, child_id),
        )


def store_system_prompt(db: sqlite3.Connection, prompt: str | None) -> str | None:
    """Keep one copy of each distinct system prompt; returns its SHA-256 key."""
    if prompt is None:
        return None
    digest = hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()
    db.execute("INSERT OR IGNORE INTO system_prompts(hash, prompt) VALUES (?, ?)", (digest, prompt))
    return digest


def checked_manual_title(
    db: sqlite3.Connection, title: str | None, *, exclude_id: str | None = None
) -> str:
    """A title a person typed, sanitised; empty, too long or used elsewhere is an error."""
    clean = sanitize_title(title or "")
    if clean is None:
        raise InvalidTitle("a title cannot be empty")
    if len(clean) > MAX_TITLE_LENGTH:
        raise InvalidTitle(f"title too long ({len(clean)} characters, at most {MAX_TITLE_LENGTH})")
    owner = db.execute("SELECT id FROM sessions WHERE title = ?", (clean,)).fetchone()
    if owner is not None and owner[0] != exclude_id:
        raise TitleInUse(f"title '{clean}' is already used by session {owner[0]}")
    return clean


def write_title(db: sqlite3.Connection, session_id: str, title: str, source: str) -> None:
    db.execute(
        "UPDATE sessions SET title = ?, title_source = ? WHERE id = ?", (title, source, session_id)
    )


def queue_title(db: sqlite3.Connection, session_id: str, title: str) -> None:
    db.execute(
        "INSERT OR REPLACE INTO state_meta(key, value) VALUES (?, ?)",
        (f"queued_title:{session_id}", title),
    )


def take_queued_title(db: sqlite3.Connection, session_id: str) -> str | None:
    key = f"queued_title:{session_id}"
    row = db.execute("SELECT value FROM state_meta WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    db.execute("DELETE FROM state_meta WHERE key = ?", (key,))
    return str(row[0])


def next_lineage_title(db: sqlite3.Connection, parent_title: str) -> str:
    """The title of a new compression continuation of a session titled ``parent_title``."""
    base, _number = split_lineage_title(parent_title)
    highest = 1
    rows = db.execute(
        "SELECT title FROM sessions WHERE title = ? OR substr(title, 1, ?) = ?",
        (base, len(base) + 2, base + " #"),
    )
    for (title,) in rows:
        found_base, number = split_lineage_title(title)
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
        if not db.execute("SELECT 1 FROM sessions WHERE title = ?", (title,)).fetchone():
            return title
        number += 1


def automatic_title(db: sqlite3.Connection, session_id: str, proposal: str) -> str | None:
    """Store an automatic title unless one exists by now: cut to 100 characters, made unique
    with a `` (2)``-style suffix (never ``#N``, which means lineage). Returns what was stored."""
    candidate = unique_title(db, proposal, session_id)
    if candidate is None:
        return None
    changed = db.execute(
        "UPDATE sessions SET title = ?, title_source = 'auto' WHERE id = ? AND title IS NULL",
        (candidate, session_id),
    ).rowcount
    return candidate if changed else None


def unique_title(db: sqlite3.Connection, proposal: str, session_id: str) -> str | None:
    """``proposal`` sanitised, cut to 100 characters and made unique among the other sessions
    with a visible `` (2)``-style suffix (never ``#N``, which means lineage); None when the
    proposal is empty once sanitised."""
    clean = sanitize_title(proposal)
    if clean is None:
        return None
    candidate = cut_title(clean)
    number = 1
    while db.execute(
        "SELECT 1 FROM sessions WHERE title = ? AND id != ?", (candidate, session_id)
    ).fetchone():
        number += 1
        suffix = f" ({number})"
        candidate = cut_title(clean, MAX_TITLE_LENGTH - len(suffix)) + suffix
    return candidate


def insert_messages(
    db: sqlite3.Connection,
    session_id: str,
    messages: Iterable[Message],
    default_timestamp: float,
    *,
    index: bool = True,
) -> InsertedMessages:
    """Insert messages with their index rows (a message without a timestamp gets
    ``default_timestamp``). Session counters are the caller's business. With ``index=False``
    the index rows are left to the caller, who writes them for a whole batch of sessions in
    the same transaction (:func:`fulltext.index_new_messages` over the batch's ids, with the
    returned ``cjk_rows``)."""
    rows = []
    cjk_texts: list[str | None] = []
    tool_calls = 0
    has_assistant = False
    last_timestamp: float | None = None
    for number, message in enumerate(messages, start=1):
        # Checked as the rows are built, before the one statement that writes them: a batch
        # with a bad message writes nothing.
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
        cjk_texts.append(fulltext.cjk_runs(message.content))
        tool_calls += len(message.tool_calls)
        has_assistant = has_assistant or message.role == "assistant"
    if not rows:
        return InsertedMessages(range(0), 0, False, None, [])
    db.executemany(
        "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, "
        "tool_name, reasoning, timestamp, token_count, platform_message_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    # One writer holds the lock, so the new ids are the consecutive ones ending here.
    last_id: int = db.execute("SELECT last_insert_rowid()").fetchone()[0]
    first_id = last_id - len(rows) + 1
    cjk_rows = [(first_id + i, text) for i, text in enumerate(cjk_texts) if text]
    if index:
        fulltext.index_new_messages(db, first_id, last_id, cjk_rows)
    return InsertedMessages(
        range(first_id, last_id + 1), tool_calls, has_assistant, last_timestamp, cjk_rows
    )


class InsertedMessages(NamedTuple):
    """What :func:`insert_messages` wrote."""

    ids: range
    tool_calls: int
    has_assistant: bool
    last_timestamp: float | None
    cjk_rows: list[tuple[int, str]]
    """(message id, CJK runs) of the messages holding CJK text (see ``index``)."""


def with_delegates(db: sqlite3.Connection, session_ids: Sequence[str]) -> list[str]:
    """``session_ids`` plus every delegate/subagent session working for them, recursively."""
    found = list(dict.fromkeys(session_ids))
    frontier = list(found)
    while frontier:
        marks = ",".join("?" for _ in frontier)
        children = [
            row[0]
            for row in db.execute(
                f"SELECT id FROM sessions WHERE parent_kind = 'delegate' "
                f"AND parent_session_id IN ({marks})",
                frontier,
            )
        ]
        frontier = [c for c in children if c not in found]
        found.extend(frontier)
    return found


def delete_sessions(db: sqlite3.Connection, session_ids: Sequence[str]) -> int:
    """Delete sessions with their messages and index rows; children that are not deleted
    lose their parent link (and its kind). Returns how many sessions were deleted."""
    total = 0
    for start in range(0, len(session_ids), 500):
        chunk = list(session_ids[start : start + 500])
        marks = ",".join("?" for _ in chunk)
        fulltext.unindex_messages(db, f"session_id IN ({marks})", chunk)
        db.execute(
            f"UPDATE sessions SET parent_session_id = NULL, parent_kind = NULL "
            f"WHERE parent_session_id IN ({marks}) AND id NOT IN ({marks})",
            chunk + chunk,
        )
        db.execute(f"DELETE FROM messages WHERE session_id IN ({marks})", chunk)
        total += db.execute(f"DELETE FROM sessions WHERE id IN ({marks})", chunk).rowcount
    db.execute(
        "DELETE FROM system_prompts WHERE hash NOT IN "
        "(SELECT system_prompt_hash FROM sessions WHERE system_prompt_hash IS NOT NULL)"
    )
    return total
