"""The PostgreSQL schema and its migrations.

The same tables as the SQLite store (``hermes_core/store/schema.py``), with PostgreSQL types:
times are ``double precision`` seconds, flags ``smallint`` 0/1, JSON stays text (it crosses
the protocol as text). The schema version lives in the table ``hermes_schema_version`` (one
row). Migrations are ordered functions, each run in one transaction with the version bump,
under a transaction-level advisory lock so two processes opening a new database never both
migrate it. A database written by a newer version is refused.

Full-text search (see :mod:`.fulltext`):

* ``messages.search_words`` — a stored generated ``tsvector`` (``simple`` configuration) of the
  message's words, with a GIN index. What counts as a word is what ``unicode61`` takes in
  SQLite: runs of letters and digits; everything else separates (so ``foo-bar`` is the two
  words ``foo`` ``bar``, ``a_b`` is ``a`` ``b``). Every message is indexed up to 1 MiB
  characters (``INDEXED_CHARS``), tool output included.
* ``idx_messages_conversation_words`` — the same word index over the user and assistant
  messages only, which searches in those roles (the default) read instead.
* ``messages.cjk_text`` — only the CJK runs of a message (NULL for most messages), with a
  partial ``pg_trgm`` GIN index, for substring search of CJK text.
* ``messages.pair_keys`` — the keys of every two words that stand next to each other
  (``"that will"``), computed and written by the client with the message (:mod:`.pair_keys`),
  with a GIN index (``idx_messages_pair_hashes``). The word index holds no positions, so a
  phrase of common words would otherwise check the positions of every message holding both
  words; with it only the messages holding a key of each adjacent pair of the phrase are
  checked (a key is shared by several pairs, so the check decides).

A bulk load into a store of few messages (a restore, a migration) drops the four full-text
indexes first and builds them once at the end (:func:`defer_fulltext_indexes`; the pair index on
a second connection beside the three others, :func:`build_fulltext_indexes`); meanwhile the
store says version 10, so a load killed half-way is finished (the indexes built, and every
migration after 10 run again) by the next open.

Version history:

1. system_prompts, sessions, messages (with both search columns), gateway_routing,
   state_meta, import_files.
2. the function ``hermes_word_pairs`` and the phrase pair index ``idx_messages_pairs`` (built
   over the existing messages when a store is upgraded: about as long as indexing the words).
3. the pair index is written through (``fastupdate = off``) and its pending list is merged
   once. With GIN's default fast update, new entries wait in an unsorted pending list that
   every search of the index reads whole, until an insert or (auto)vacuum merges it. A
   message adds about as many pairs as words, mostly ones no other message has, so that list
   grows fast while autovacuum holds the merge: 38 MB half-way through loading 1M messages,
   where each read of the index took 44 ms for the list alone; and the append that merges it
   waits for all of it. Written through, a message costs the same at ingest (5,000 messages
   into the 1M store: 13.5 s against 13.9 s) and a search reads only the sorted index. The
   word index keeps fast update: its list stays small (a message's words are mostly keys
   already) and writing it through would cost ≈ 15 % more at ingest. (Measured again with
   schema 9's integer keys and a small pending list, ``gin_pending_list_limit`` 256 kB or
   1 MB: 8 writers no faster within the noise, the append p99 7–33 ms against 5–9 ms written
   through, as the append crossing the limit merges the list; so it stays written through.)
4. ``idx_messages_conversation_words``: the word index again, over the user and assistant
   messages only (a partial GIN index), for searches in those roles (discovery's default). A
   word frequent in tool output but absent from the conversation (``info``: 29,000 tool
   messages of 1M, none said by the user or the agent) otherwise sends the search to read
   every one of its matches from the table to look at their roles (≈ 27,000 pages, 115–200
   ms); with it, none. It costs ≈ 15–20 % of bulk ingest (bench (p) at 100k: 709 → 566–601
   msgs/s) and ≈ 0.65 × the word index's size; built over the existing messages on upgrade
   (53 s for 1M messages).
5. ``search_words`` folds accents as SQLite's ``unicode61`` does (``résumé`` is found by
   ``resume``): the function ``hermes_fold_accents`` (the rule of :func:`.fulltext.fold`:
   canonical decomposition, a single mark after an ASCII letter dropped, composed again; only
   for texts holding an accented letter or a mark) and the column written again through it;
   its three indexes are built again (an upgrade rewrites the messages table once).
6. Every message is searchable up to ``INDEXED_CHARS`` (1 MiB) characters, tool output
   included (before: its first 2,000 characters). A ``tsvector`` holds at most 1 MB, so a text
   longer than ``PLAIN_WORDS_CHARS`` goes through ``hermes_search_words``, which indexes a
   shorter head when the words of the whole do not fit (only text of hundreds of thousands of
   distinct words comes near it). ``idx_messages_indexed_in_part`` lists the messages longer
   than the cap for ``hermes sessions stats``. The upgrade rewrites the messages table and
   builds its word indexes again, as version 5's did.
7. ``sessions.cache_read_tokens`` and ``sessions.cache_write_tokens`` (SQLite's version 6):
   prompt-cache reads and writes counted apart from ``input_tokens``; 0 for existing sessions
   (adding a column with a constant default rewrites nothing).
8. ``gateway_inbox`` (SQLite's version 7): the events the gateway received and acknowledged,
   one row each until its turn stores the user message; a platform message id is there once
   per session key (an event without one gets a made-up ``hermes-inbox:…`` id).
9. The phrase pair index keyed by integers: ``idx_messages_pairs`` (text pairs through
   ``hermes_word_pairs``) is replaced by ``idx_messages_pair_keys`` over ``hermes_pair_keys``.
   The text index had a key for nearly every distinct pair in the store (20k messages: 3.6M
   pairs, 106 MB against the word index's 12 MB) and was two thirds of a bulk load's time
   (loading by COPY: 261 msgs/s with it, 754 without; building it over 20k messages 36 s
   against 1 s for the words). Hashed into 2**18 keys it is ≈ 3× the word index's size (20k
   messages: 33 MB) and builds ≈ 3.5× faster than the text index (57 s against 204 s, side
   by side on a loaded machine; the words 9 s). Phrase searches find what they found before: every candidate's positions are
   checked, as they were for phrases of three words or more. Every full-text index is
   created ``IF NOT EXISTS``, so this migration also builds what a bulk load deferred.
10. No planner statistics for the pair index's expression (``SET STATISTICS 0`` on its one
    column). ``ANALYZE`` — after a bulk load, and autovacuum's as a store grows — computed
    ``hermes_pair_keys`` again for every sampled row (30,000 rows of a large store) to gather
    them: over 20k messages ``ANALYZE messages`` took 5.4–5.7 s with them and 0.32–0.33 s
    without, and the phrase and common-word probes answered as fast either way (p95 within
    the machine's noise), since a phrase's candidates come from this index whatever its
    estimate says (:func:`.search._match`). Statistics gathered before stay until the index is
    built again (a bulk load) and do no harm. Safe to run again.
11. The pair keys are computed by the client and stored in ``messages.pair_keys`` (``crc32``
    cut to 20 bits, :mod:`.pair_keys`), indexed by ``idx_messages_pair_hashes``; the server's
    ``hermes_pair_keys`` and ``hermes_phrase_keys`` and the index over them go. Computing the
    keys on the server cost ≈ 150 µs of every statement writing a message, however short,
    and more than half of building the index (20k bench messages: 10.2 s against 3.8 s over
    the stored column). The upgrade reads every message once, stores its keys, and builds
    the four full-text indexes again (it rewrites the messages table, as versions 5 and 6
    did). Safe to run again: then it only builds the full-text indexes that are missing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import UserFacingError

from hermes_core.store.errors import StoreTooNew, StoreUnavailable

from .fulltext import (
    ACCENTED,
    INDEXED_CHARS,
    ONE_MARK_AFTER_LETTER,
    PAIR_INDEX_SQL,
    PAIR_MAX_BYTES,
    WORD_SEPARATORS,
)
from .pair_keys import message_pair_keys

V1_TOOL_OUTPUT_INDEXED_CHARS = 2000
"""What schemas 1–5 indexed of a tool's output."""
PLAIN_WORDS_CHARS = 200_000
"""Texts up to this long always fit a ``tsvector`` (at most 1 MB: ≈ 4.5 bytes per character
in the worst case, every word distinct), so they are indexed by the plain expression; longer
ones go through ``hermes_search_words``, which shortens what it indexes until it fits."""

CONVERSATION_ROLES = ("user", "assistant")
"""The roles discovery searches by default, which the conversation word index covers."""
CONVERSATION_ROLES_SQL = "role IN ('user', 'assistant')"
"""The predicate of ``idx_messages_conversation_words``, as a query states it to use it."""

if TYPE_CHECKING:
    import psycopg

MIGRATION_LOCK = 0x4865726D6573  # "Hermes": the advisory lock key migrations hold
_TEXT_PAIR_INDEX_SQL = "hermes_word_pairs(search_words)"
"""The pair index of schemas 2–8 (text pairs); version 9 replaces it."""

_V1 = f"""
CREATE TABLE system_prompts (
    hash   text PRIMARY KEY,
    prompt text NOT NULL
);

CREATE TABLE sessions (
    id                 text PRIMARY KEY,
    source             text NOT NULL,
    user_id            text,
    title              text,
    title_source       text,
    model              text,
    model_config       text,
    system_prompt_hash text REFERENCES system_prompts(hash),
    parent_session_id  text REFERENCES sessions(id) ON DELETE SET NULL,
    parent_kind        text CHECK (parent_kind IN ('compression', 'branch', 'delegate', 'reset')),
    started_at         double precision NOT NULL,
    ended_at           double precision,
    end_reason         text,
    last_active_at     double precision NOT NULL,
    cwd                text,
    git_branch         text,
    git_repo_root      text,
    chat_id            text,
    chat_type          text,
    thread_id          text,
    session_key        text,
    billing_provider   text,
    cost_actual_usd    double precision,
    cost_estimated_usd double precision,
    input_tokens       bigint NOT NULL DEFAULT 0,
    output_tokens      bigint NOT NULL DEFAULT 0,
    message_count      bigint NOT NULL DEFAULT 0,
    tool_call_count    bigint NOT NULL DEFAULT 0,
    pinned             smallint NOT NULL DEFAULT 0,
    archived           smallint NOT NULL DEFAULT 0,
    metadata           text,
    row_key            bigint GENERATED ALWAYS AS IDENTITY UNIQUE
);
CREATE UNIQUE INDEX idx_sessions_title ON sessions(title) WHERE title IS NOT NULL;
CREATE INDEX idx_sessions_title_trgm ON sessions USING gin (lower(title) gin_trgm_ops)
    WHERE title IS NOT NULL;
CREATE INDEX idx_sessions_activity ON sessions(last_active_at);
CREATE INDEX idx_sessions_started ON sessions(started_at);
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id)
    WHERE parent_session_id IS NOT NULL;
CREATE INDEX idx_sessions_source ON sessions(source, last_active_at);
CREATE INDEX idx_sessions_session_key ON sessions(session_key) WHERE session_key IS NOT NULL;

CREATE TABLE messages (
    id                  bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    session_id          text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    role                text NOT NULL,
    content             text NOT NULL DEFAULT '',
    tool_calls          text,
    tool_call_id        text,
    tool_name           text,
    reasoning           text,
    timestamp           double precision NOT NULL,
    token_count         bigint,
    platform_message_id text,
    cjk_text            text,
    search_words        tsvector GENERATED ALWAYS AS (
        to_tsvector('simple'::regconfig, regexp_replace(
            CASE WHEN role = 'tool' THEN left(content, {V1_TOOL_OUTPUT_INDEXED_CHARS})
                 ELSE content END,
            '{WORD_SEPARATORS}', ' ', 'g'))
    ) STORED
);
CREATE INDEX idx_messages_session ON messages(session_id, id);
CREATE INDEX idx_messages_words ON messages USING gin (search_words);
CREATE INDEX idx_messages_cjk ON messages USING gin (cjk_text gin_trgm_ops)
    WHERE cjk_text IS NOT NULL;

CREATE TABLE gateway_routing (
    session_key text PRIMARY KEY,
    session_id  text REFERENCES sessions(id) ON DELETE SET NULL,
    platform    text NOT NULL,
    origin      text,
    updated_at  double precision NOT NULL,
    expires_at  double precision
);

CREATE TABLE state_meta (
    key   text PRIMARY KEY,
    value text
);

CREATE TABLE import_files (
    path        text PRIMARY KEY,
    importer    text NOT NULL,
    size        bigint NOT NULL,
    mtime_ns    bigint NOT NULL,
    cursor      text,
    foreign_id  text,
    session_id  text REFERENCES sessions(id) ON DELETE SET NULL,
    state       text NOT NULL DEFAULT 'done' CHECK (state IN ('importing', 'done')),
    imported_at double precision NOT NULL
);
CREATE INDEX idx_import_files_foreign ON import_files(importer, foreign_id);
"""


_V2 = f"""
CREATE FUNCTION hermes_word_pairs(words tsvector) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 10000 AS $$
    SELECT coalesce(array_agg(pair), '{{}}') FROM (  -- GIN drops the repeated keys
        SELECT lag(w.lexeme) OVER (ORDER BY p) || ' ' || w.lexeme AS pair,
               p - lag(p) OVER (ORDER BY p) AS gap
        FROM unnest(words) w, unnest(w.positions) p
    ) pairs
    WHERE gap = 1 AND octet_length(pair) <= {PAIR_MAX_BYTES}
$$;
CREATE INDEX idx_messages_pairs ON messages USING gin ({_TEXT_PAIR_INDEX_SQL});
"""


_V3 = """
ALTER INDEX idx_messages_pairs SET (fastupdate = off);
SELECT gin_clean_pending_list('idx_messages_pairs'::regclass);
"""


_V4 = f"""
CREATE INDEX idx_messages_conversation_words ON messages USING gin (search_words)
    WHERE {CONVERSATION_ROLES_SQL};
"""


def _migrate_to_1(db: psycopg.Connection[tuple[object, ...]]) -> None:
    db.execute(_V1.encode())  # several statements: the simple protocol takes them at once


def _migrate_to_2(db: psycopg.Connection[tuple[object, ...]]) -> None:
    db.execute(_V2.encode())


def _migrate_to_3(db: psycopg.Connection[tuple[object, ...]]) -> None:
    db.execute(_V3.encode())


def _migrate_to_4(db: psycopg.Connection[tuple[object, ...]]) -> None:
    db.execute(_V4.encode())


_V5 = f"""
CREATE FUNCTION hermes_fold_accents(t text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN t ~ '{ACCENTED}' THEN normalize(
        regexp_replace(normalize(t, NFD), '{ONE_MARK_AFTER_LETTER}', '\\1', 'g'), NFC
    ) ELSE t END
$$;
ALTER TABLE messages DROP COLUMN search_words;  -- its three indexes go with it
ALTER TABLE messages ADD COLUMN search_words tsvector GENERATED ALWAYS AS (
    to_tsvector('simple'::regconfig, regexp_replace(hermes_fold_accents(
        CASE WHEN role = 'tool' THEN left(content, {V1_TOOL_OUTPUT_INDEXED_CHARS}) ELSE content END),
        '{WORD_SEPARATORS}', ' ', 'g'))
) STORED;
CREATE INDEX idx_messages_words ON messages USING gin (search_words);
CREATE INDEX idx_messages_pairs ON messages USING gin ({_TEXT_PAIR_INDEX_SQL}) WITH (fastupdate = off);
CREATE INDEX idx_messages_conversation_words ON messages USING gin (search_words)
    WHERE {CONVERSATION_ROLES_SQL};
"""


def _migrate_to_5(db: psycopg.Connection[tuple[object, ...]]) -> None:
    db.execute(_V5.encode())


_V6 = f"""
CREATE FUNCTION hermes_search_words(t text) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    head text := left(t, {INDEXED_CHARS});
BEGIN
    LOOP
        BEGIN
            RETURN to_tsvector('simple'::regconfig,
                regexp_replace(hermes_fold_accents(head), '{WORD_SEPARATORS}', ' ', 'g'));
        EXCEPTION WHEN program_limit_exceeded THEN  -- more distinct words than 1 MB holds
            head := left(head, length(head) / 2);
        END;
    END LOOP;
END
$$;
ALTER TABLE messages DROP COLUMN search_words;  -- its three indexes go with it
ALTER TABLE messages ADD COLUMN search_words tsvector GENERATED ALWAYS AS (
    CASE WHEN length(content) <= {PLAIN_WORDS_CHARS}
         THEN to_tsvector('simple'::regconfig,
              regexp_replace(hermes_fold_accents(content), '{WORD_SEPARATORS}', ' ', 'g'))
         ELSE hermes_search_words(content) END
) STORED;
CREATE INDEX idx_messages_words ON messages USING gin (search_words);
CREATE INDEX idx_messages_pairs ON messages USING gin ({_TEXT_PAIR_INDEX_SQL}) WITH (fastupdate = off);
CREATE INDEX idx_messages_conversation_words ON messages USING gin (search_words)
    WHERE {CONVERSATION_ROLES_SQL};
CREATE INDEX idx_messages_indexed_in_part ON messages(id) WHERE length(content) > {INDEXED_CHARS};
"""


def _migrate_to_6(db: psycopg.Connection[tuple[object, ...]]) -> None:
    db.execute(_V6.encode())


_V7 = """
ALTER TABLE sessions ADD COLUMN cache_read_tokens bigint NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN cache_write_tokens bigint NOT NULL DEFAULT 0;
"""


def _migrate_to_7(db: psycopg.Connection[tuple[object, ...]]) -> None:
    db.execute(_V7.encode())


_V8 = """
CREATE TABLE gateway_inbox (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_key text NOT NULL,
    platform    text NOT NULL,
    message_id  text,
    event       text NOT NULL,
    received_at double precision NOT NULL,
    UNIQUE (session_key, message_id)
);
"""


def _migrate_to_8(db: psycopg.Connection[tuple[object, ...]]) -> None:
    db.execute(_V8.encode())


BULK_MAINTENANCE_MEMORY = "256MB"
"""``maintenance_work_mem`` while the full-text indexes are built (an upgrade, the end of a bulk
load): GIN gathers the keys of as many rows as fit before writing them out, so more memory is
fewer, larger merges (the server's default is 64 MB)."""

_WORD_INDEXES = {
    "idx_messages_words": "ON messages USING gin (search_words)",
    "idx_messages_conversation_words": (
        f"ON messages USING gin (search_words) WHERE {CONVERSATION_ROLES_SQL}"
    ),
    "idx_messages_cjk": "ON messages USING gin (cjk_text gin_trgm_ops) WHERE cjk_text IS NOT NULL",
}
_V9_INDEXES = {
    **_WORD_INDEXES,
    "idx_messages_pair_keys": (
        "ON messages USING gin (hermes_pair_keys(search_words)) WITH (fastupdate = off)"
    ),
}
"""The full-text indexes of schemas 9 and 10 (the pair keys computed on the server)."""
PAIR_INDEX = "idx_messages_pair_hashes"
"""The phrase pair index of schema 11, over the keys the client stores (:mod:`.pair_keys`):
the longest of the full-text builds (≈ 180 keys a message into GIN)."""
FULLTEXT_INDEXES = {
    **_WORD_INDEXES,
    PAIR_INDEX: f"ON messages USING gin ({PAIR_INDEX_SQL}) WITH (fastupdate = off)",
}
"""The full-text indexes of schema 11, by name: what a bulk load into a (nearly) empty store
drops first and builds at the end (:func:`defer_fulltext_indexes`)."""

_V9_PAIR_MASK = (1 << 18) - 1
_V9 = f"""
DROP INDEX IF EXISTS idx_messages_pairs;
DROP FUNCTION IF EXISTS hermes_word_pairs(tsvector);
CREATE OR REPLACE FUNCTION hermes_pair_keys(words tsvector) RETURNS int4[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 10000 AS $$
    SELECT coalesce(array_agg(hashtext(pair) & {_V9_PAIR_MASK}), '{{}}') FROM (
        SELECT lag(w.lexeme) OVER (ORDER BY p) || ' ' || w.lexeme AS pair,
               p - lag(p) OVER (ORDER BY p) AS gap
        FROM unnest(words) w, unnest(w.positions) p
    ) pairs
    WHERE gap = 1  -- GIN drops the repeated keys
$$;
CREATE OR REPLACE FUNCTION hermes_phrase_keys(pairs text[]) RETURNS int4[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT ARRAY(SELECT hashtext(pair) & {_V9_PAIR_MASK} FROM unnest(pairs) pair)
$$;
SET LOCAL maintenance_work_mem = '{BULK_MAINTENANCE_MEMORY}';
""" + "".join(
    f"CREATE INDEX IF NOT EXISTS {name} {definition};\n"
    for name, definition in _V9_INDEXES.items()
)


def _migrate_to_9(db: psycopg.Connection[tuple[object, ...]]) -> None:
    db.execute(_V9.encode())


_V10 = "ALTER INDEX idx_messages_pair_keys ALTER COLUMN 1 SET STATISTICS 0"


def _migrate_to_10(db: psycopg.Connection[tuple[object, ...]]) -> None:
    db.execute(_V10)


PAIR_KEY_FILL_BATCH = 2000
"""Messages read at a time when schema 11 computes the pair keys of a store's messages."""


def _migrate_to_11(db: psycopg.Connection[tuple[object, ...]]) -> None:
    """The pair keys become a column the client writes (:mod:`.pair_keys`). The first time
    (the column is missing): every full-text index is dropped (each message is written again,
    and keeping four GIN indexes up row by row costs far more than building them), the
    server's key functions go, and the keys of every message are computed and stored. Every
    time: no statistics for the column, and every full-text index built if missing — which
    is what ends a deferred bulk load."""
    found = db.execute(
        "SELECT 1 FROM pg_attribute WHERE attrelid = 'messages'::regclass "
        "AND attname = 'pair_keys' AND NOT attisdropped"
    ).fetchone()
    if found is None:
        db.execute("DROP INDEX IF EXISTS " + ", ".join(_V9_INDEXES))
        db.execute("DROP FUNCTION IF EXISTS hermes_pair_keys(tsvector)")
        db.execute("DROP FUNCTION IF EXISTS hermes_phrase_keys(text[])")
        db.execute("ALTER TABLE messages ADD COLUMN pair_keys int4[]")
        _fill_pair_keys(db)
    db.execute("ALTER TABLE messages ALTER COLUMN pair_keys SET STATISTICS 0")
    db.execute(f"SET LOCAL maintenance_work_mem = '{BULK_MAINTENANCE_MEMORY}'")
    for name, definition in FULLTEXT_INDEXES.items():
        db.execute(f"CREATE INDEX IF NOT EXISTS {name} {definition}".encode())


def _fill_pair_keys(db: psycopg.Connection[tuple[object, ...]]) -> None:
    """Compute and store the pair keys of every message (inside the migration's transaction):
    the texts are read through a server-side cursor, the keys copied into a temporary table,
    and the messages updated from it in one statement."""
    db.execute(
        "CREATE TEMPORARY TABLE hermes_new_pair_keys (id bigint PRIMARY KEY, keys int4[]) "
        "ON COMMIT DROP"
    )
    with db.cursor(name="hermes_pair_key_texts") as texts, db.cursor() as writer:
        texts.execute("SELECT id, content FROM messages")
        while batch := texts.fetchmany(PAIR_KEY_FILL_BATCH):
            # One COPY per batch: the connection cannot fetch while a COPY is open.
            with writer.copy("COPY hermes_new_pair_keys (id, keys) FROM STDIN") as copy:
                for message_id, content in batch:
                    copy.write_row((message_id, message_pair_keys(str(content or ""))))
    db.execute(
        "UPDATE messages m SET pair_keys = n.keys FROM hermes_new_pair_keys n WHERE n.id = m.id"
    )


MIGRATIONS: list[Callable[[psycopg.Connection[tuple[object, ...]]], None]] = [
    _migrate_to_1,
    _migrate_to_2,
    _migrate_to_3,
    _migrate_to_4,
    _migrate_to_5,
    _migrate_to_6,
    _migrate_to_7,
    _migrate_to_8,
    _migrate_to_9,
    _migrate_to_10,
    _migrate_to_11,
]
SCHEMA_VERSION = len(MIGRATIONS)


def schema_version(db: psycopg.Connection[tuple[object, ...]]) -> int:
    """The database's schema version (0 for a database Hermes never wrote to)."""
    row = db.execute("SELECT to_regclass('hermes_schema_version') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    found = db.execute("SELECT version FROM hermes_schema_version").fetchone()
    return int(str(found[0])) if found else 0


def ensure_trigram_extension(db: psycopg.Connection[tuple[object, ...]], where: str) -> None:
    """``pg_trgm`` must be there (CJK and title search): create it when this role may."""
    import psycopg

    row = db.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'").fetchone()
    if row:
        return
    try:
        db.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except psycopg.Error as error:
        detail = " ".join(str(error).split())
        raise UserFacingError(
            f"{where}: the pg_trgm extension is missing and cannot be created ({detail}); "
            "ask the database owner to run CREATE EXTENSION pg_trgm (Debian: postgresql-contrib)"
        ) from None


def _require_utf8(db: psycopg.Connection[tuple[object, ...]], where: str) -> None:
    """Refuse, in one line, a database whose encoding is not UTF8: conversations hold emoji and
    every script (a ``LATIN1`` database refuses them on insert), and folding accents
    (``hermes_fold_accents``) needs Unicode normalisation."""
    row = db.execute("SHOW server_encoding").fetchone()
    encoding = str(row[0]) if row else "?"
    if encoding.upper() not in ("UTF8", "UTF-8"):
        raise UserFacingError(
            f"{where}: the database's encoding is {encoding}; the session store needs a UTF8 "
            "database (createdb --encoding=UTF8 --template=template0 …)"
        )


def migrate(
    db: psycopg.Connection[tuple[object, ...]],
    where: str,
    *,
    target: int = SCHEMA_VERSION,
    known: int | None = None,
) -> int:
    """Bring the database up to ``target``; returns the version it was at before. ``known``:
    the version the caller has just read (:func:`.connection.first_look`), so a store that is
    up to date costs no further round trip."""
    import psycopg

    try:
        found = schema_version(db) if known is None else known
    except psycopg.Error as error:
        raise StoreUnavailable(f"{where}: cannot read the store: {error}") from None
    if found > SCHEMA_VERSION:
        raise StoreTooNew(
            f"{where}: this session store was written by a newer Hermes sessions (schema "
            f"v{found}; this version understands up to v{SCHEMA_VERSION}): upgrade "
            "hermes-store-postgres to use it"
        )
    if found >= target:
        return found
    _require_utf8(db, where)
    try:
        with db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            # Under the lock: two first opens would race on CREATE EXTENSION too.
            with db.transaction():
                ensure_trigram_extension(db, where)
            current = schema_version(db)  # another process may have migrated meanwhile
            if current == 0:
                db.execute("CREATE TABLE hermes_schema_version (version integer NOT NULL)")
                db.execute("INSERT INTO hermes_schema_version VALUES (0)")
            for version in range(current + 1, target + 1):
                MIGRATIONS[version - 1](db)
                db.execute("UPDATE hermes_schema_version SET version = %s", (version,))
    except psycopg.errors.InsufficientPrivilege as error:
        detail = " ".join(str(error).split())
        raise UserFacingError(
            f"{where}: this role may not create the store's tables ({detail})"
        ) from None
    return found


FULLTEXT_VERSION = 11
"""The migration that builds the full-text indexes (each ``IF NOT EXISTS``, so running it again
builds only what is missing). A bulk load that drops them sets the store's version one below
it until they are built again (:func:`defer_fulltext_indexes`), so a load killed half-way is
finished by the next open of the store, which runs this migration and every later one again:
each migration from this one on must be safe to run twice."""


def defer_fulltext_indexes(db: psycopg.Connection[tuple[object, ...]]) -> bool:
    """Drop the full-text indexes (:data:`FULLTEXT_INDEXES`) for a bulk load, which then costs
    the messages' rows alone; :func:`build_fulltext_indexes` builds them over everything at
    the end, at a fraction of what keeping them up row by row costs. Until then searches are
    answered without them (correct, slower) and the store says version
    ``FULLTEXT_VERSION - 1``. Returns whether they were dropped (not when the store is at
    another version than this code's)."""
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        if schema_version(db) != SCHEMA_VERSION:
            return False
        db.execute("DROP INDEX IF EXISTS " + ", ".join(FULLTEXT_INDEXES))
        db.execute("UPDATE hermes_schema_version SET version = %s", (FULLTEXT_VERSION - 1,))
    return True


def build_fulltext_indexes(
    db: psycopg.Connection[tuple[object, ...]],
    spare: Callable[[], AbstractContextManager[psycopg.Connection[Any]]] | None = None,
) -> None:
    """Build the full-text indexes a bulk load deferred (those missing) and give the store its
    version back, in one transaction; nothing when another process has done it already.

    ``spare``: a second connection to the same database, borrowed for the build. The pair
    index (:data:`PAIR_INDEX`) is then built on it, in a thread, while ``db`` builds the
    three others: a GIN build uses one core (before PostgreSQL 18), and building them one
    after another left the second core idle for the pair build's whole length (20k messages,
    four rounds side by side: 21–41 s one after another, 17–24 s at once). Two ``CREATE INDEX`` on one
    table do not wait for each other (both take its ``SHARE`` lock). The store gets its version
    back only once both are built; if the spare's build fails, ``db`` builds the index
    itself (the migration's ``IF NOT EXISTS``), and a process killed meanwhile leaves it to
    the next open, as before."""
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        if schema_version(db) != FULLTEXT_VERSION - 1:
            return
        beside = _BuildBeside(spare) if spare is not None else None
        try:
            if beside is not None:
                db.execute(f"SET LOCAL maintenance_work_mem = '{BULK_MAINTENANCE_MEMORY}'")
                for name, definition in FULLTEXT_INDEXES.items():
                    if name != PAIR_INDEX:
                        db.execute(f"CREATE INDEX IF NOT EXISTS {name} {definition}".encode())
        finally:
            if beside is not None:
                beside.join()
        for migration in MIGRATIONS[FULLTEXT_VERSION - 1 :]:
            migration(db)  # the first builds what is still missing
        db.execute("UPDATE hermes_schema_version SET version = %s", (SCHEMA_VERSION,))


class _BuildBeside:
    """The pair index built on a spare connection, in a thread, started at once."""

    def __init__(self, spare: Callable[[], AbstractContextManager[psycopg.Connection[Any]]]):
        self._spare = spare
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._build, name="hermes-pair-index", daemon=True)
        self._thread.start()

    def _build(self) -> None:
        try:
            with self._spare() as other, other.transaction():
                other.execute(f"SET LOCAL maintenance_work_mem = '{BULK_MAINTENANCE_MEMORY}'")
                other.execute(
                    f"CREATE INDEX IF NOT EXISTS {PAIR_INDEX} {FULLTEXT_INDEXES[PAIR_INDEX]}".encode()
                )
        except BaseException as error:  # the main connection builds it instead
            self.error = error

    def join(self) -> None:
        self._thread.join()
