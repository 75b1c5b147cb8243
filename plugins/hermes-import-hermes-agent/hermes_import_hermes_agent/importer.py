"""The ``hermes-agent`` importer: reads a Hermes Agent ``state.db`` without ever writing to it.

Each read works on a private copy (:mod:`.copying`), checked with ``PRAGMA quick_check``
before anything is yielded, so a damaged store is refused whole. Every session of the store
is yielded as a ``snapshot`` (its id, title, lineage, times, totals, flags), oldest first,
with its messages (:mod:`.messages`) and the gateway routes pointing at it (:mod:`.routing`).

The cursor is the newest message id the read saw (``messages:<id>``; Hermes Agent's
message ids only grow). From a cursor, a session that had messages then is yielded with
``continues`` set and only its newer messages; a session with none then is yielded whole.

Default place (``discover``): ``$HERMES_AGENT_HOME/state.db``, else ``~/.hermes/state.db``,
and the profiles' ``profiles/<name>/state.db`` under it. ``~/.hermes`` is also Hermes
sessions' own default home: the core never imports its own store.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from hermes_hookspecs import (
    ImportCandidate,
    ImportedSession,
    Message,
    Session,
    UserFacingError,
)

from .copying import is_sqlite_file, private_copy, read_only_uri
from .messages import iter_skipping, message_columns
from .routing import routes_by_session
from .schema import NotAHermesAgentStore, StoreShape, detect_shape
from .sessions import parent_facts, session_columns, to_session

CURSOR_PREFIX = "messages:"


class HermesAgentImporter:
    """Reads Hermes Agent ``state.db`` stores (schema v1 to v30)."""

    name = "hermes-agent"
    label = "Hermes Agent"
    file_kind = "database"

    def __init__(self, *, busy_timeout: float = 5.0) -> None:
        self.busy_timeout = busy_timeout

    def discover(self, env: Mapping[str, str]) -> Iterable[ImportCandidate]:
        """The store of the Hermes Agent install (and of its profiles), when there is one.

        A ``stat`` per file and nothing else: the process asking may hold one of these files
        open as its own store (``~/.hermes`` is both tools' default home), and opening and
        closing it here would drop that process's locks on it. ``sniff`` and ``read`` look
        inside; the core never hands them its own store."""
        configured = env.get("HERMES_AGENT_HOME")
        home = Path(configured) if configured else Path(env.get("HOME", "~"), ".hermes")
        home = home.expanduser()
        stores = [home / "state.db", *sorted(home.glob("profiles/*/state.db"))]
        for store in stores:
            if store.is_symlink() or not store.is_file():
                continue
            yield ImportCandidate(
                importer=self.name,
                path=store,
                foreign_id=str(store),
                title_guess="Hermes Agent store"
                + (f" (profile {store.parent.name})" if store.parent != home else ""),
                ended_at=store.stat().st_mtime,
            )

    def sniff(self, path: Path) -> bool:
        """True for an SQLite file with Hermes Agent's tables. Looks at the schema only,
        through an ``immutable`` read-only open (it takes no lock and never touches the
        ``-wal``/``-shm`` files; the schema is all it reads, so a stale view is harmless)."""
        if not is_sqlite_file(path):
            return False
        try:
            connection = sqlite3.connect(read_only_uri(path, immutable=True), uri=True)
        except sqlite3.Error:
            return False
        try:
            detect_shape(connection)
        except (UserFacingError, sqlite3.Error):
            return False
        finally:
            connection.close()
        return True

    def read(self, path: Path, resume_from: str | None = None) -> Iterator[ImportedSession]:
        """Every session of the store at ``path`` (see the module docstring)."""
        since = _cursor(resume_from)
        if not is_sqlite_file(path):
            path.stat()  # a missing or unreadable file is an OSError: "cannot read"
            raise NotAHermesAgentStore("not a Hermes Agent store (not an SQLite database)")
        with tempfile.TemporaryDirectory(prefix="hermes-agent-import-") as folder:
            copy = private_copy(path, Path(folder), busy_timeout=self.busy_timeout)
            connection = sqlite3.connect(copy)
            connection.row_factory = sqlite3.Row
            try:
                yield from _read_store(connection, since)
            except sqlite3.DatabaseError as error:
                raise UserFacingError(f"the Hermes Agent store is damaged: {error}") from error
            finally:
                connection.close()


def _read_store(connection: sqlite3.Connection, since: int) -> Iterator[ImportedSession]:
    try:
        check = connection.execute("PRAGMA quick_check").fetchone()[0]
    except sqlite3.DatabaseError as error:
        if "not a database" in str(error):
            raise NotAHermesAgentStore(
                "not a Hermes Agent store (not an SQLite database)"
            ) from error
        raise UserFacingError(f"the Hermes Agent store is damaged: {error}") from error
    if check != "ok":
        raise UserFacingError(f"the Hermes Agent store is damaged: {check}")
    shape = detect_shape(connection)
    newest = connection.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
    cursor = f"{CURSOR_PREFIX}{max(int(newest), since)}"
    sources = {
        str(row[0]): str(row[1]) for row in connection.execute("SELECT id, source FROM sessions")
    }
    first_warnings: dict[str, int] = {}
    routes = routes_by_session(connection, shape, sources, first_warnings)
    parents = parent_facts(connection, shape)
    earliest = _earliest_message_ids(connection)
    prompts = _Prompts(connection, shape)
    columns = ", ".join(f'"{name}"' for name in session_columns(shape))
    rows = connection.execute(f"SELECT {columns} FROM sessions ORDER BY started_at, id")
    for row in rows:
        values = dict(zip(row.keys(), tuple(row), strict=True))
        session = to_session(
            values,
            parents=parents,
            system_prompt=prompts.of(values),
            version=shape.version,
        )
        first_id = earliest.get(session.id)
        continues = since > 0 and first_id is not None and first_id <= since
        warnings, first_warnings = first_warnings, {}
        imported = ImportedSession(
            foreign_id=session.id,
            source=session.source,
            messages=iter(()),
            title_hint=session.title,
            started_at=session.started_at,
            ended_at=session.ended_at,
            cwd=session.cwd,
            git_branch=session.git_branch,
            model=session.model,
            input_tokens=session.input_tokens,
            output_tokens=session.output_tokens,
            cache_read_tokens=session.cache_read_tokens,
            cache_write_tokens=session.cache_write_tokens,
            parent_foreign_id=session.parent_session_id
            if session.parent_kind == "delegate"
            else None,
            cursor=cursor,
            warnings=warnings,
            snapshot=session,
            continues=continues,
            routes=list(routes.get(session.id, ())),
        )
        imported.messages = _messages(
            connection, shape, session, since if continues else 0, imported
        )
        yield imported


def _messages(
    connection: sqlite3.Connection,
    shape: StoreShape,
    session: Session,
    after: int,
    imported: ImportedSession,
) -> Iterator[Message]:
    columns = ", ".join(f'"{name}"' for name in message_columns(shape))
    rows = connection.execute(
        f"SELECT {columns} FROM messages WHERE session_id = ? AND id > ? ORDER BY id",
        (session.id, after),
    )
    dict_rows = (dict(zip(row.keys(), tuple(row), strict=True)) for row in rows)
    yield from iter_skipping(dict_rows, imported.warnings)


def _earliest_message_ids(connection: sqlite3.Connection) -> dict[str, int]:
    return {
        str(row[0]): int(row[1])
        for row in connection.execute(
            "SELECT session_id, min(id) FROM messages GROUP BY session_id"
        )
    }


class _Prompts:
    """System prompts by hash (v25+), read once each; else the legacy column."""

    def __init__(self, connection: sqlite3.Connection, shape: StoreShape) -> None:
        self._connection = connection
        self._shape = shape
        self._cache: dict[str, str | None] = {}

    def of(self, row: Mapping[str, Any]) -> str | None:
        digest = row.get("system_prompt_hash")
        if self._shape.has_system_prompts and digest:
            if digest not in self._cache:
                found = self._connection.execute(
                    "SELECT prompt FROM system_prompts WHERE hash = ?", (digest,)
                ).fetchone()
                self._cache[digest] = None if found is None else str(found[0])
            prompt = self._cache[digest]
            if prompt is not None:
                return prompt
        legacy = row.get("system_prompt")
        return str(legacy) if legacy else None


def _cursor(resume_from: str | None) -> int:
    if not resume_from or not resume_from.startswith(CURSOR_PREFIX):
        return 0
    try:
        return max(int(resume_from[len(CURSOR_PREFIX) :]), 0)
    except ValueError:
        return 0

