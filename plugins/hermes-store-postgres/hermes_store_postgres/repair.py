"""``hermes sessions repair`` for a PostgreSQL store: find what is out of step, then rebuild it.

PostgreSQL keeps its own tables and indexes consistent, so what can drift is what the store
derives: each session's message and tool-call counters, and each message's CJK column (the
trigram-indexed copy of its CJK runs) and phrase pair keys (a message written by something
else than Hermes may lack them, and a phrase search would then never find it). An index left
invalid (an interrupted ``CREATE INDEX CONCURRENTLY`` by an administrator, say) is reported
too. Repairing runs
``REINDEX TABLE`` on the store's tables and recomputes what drifted, in one transaction. No
backup is written: back a PostgreSQL database up with ``pg_dump``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hermes_core.store.maintenance import RepairReport

from .fulltext import cjk_runs
from .lifecycle import TABLES
from .pair_keys import message_pair_keys

if TYPE_CHECKING:
    import psycopg

    Db = psycopg.Connection[tuple[Any, ...]]

_CJK_PATTERN = "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]"
_COUNTERS = (
    "SELECT s.id FROM sessions s LEFT JOIN (SELECT session_id, count(*) AS n, "
    "coalesce(sum(json_array_length(tool_calls::json)), 0) AS calls FROM messages "
    "GROUP BY session_id) m ON m.session_id = s.id "
    "WHERE s.message_count != coalesce(m.n, 0) OR s.tool_call_count != coalesce(m.calls, 0)"
)


def _drifted_cjk(db: Db) -> list[int]:
    rows = db.execute(
        "SELECT id, content, cjk_text FROM messages WHERE cjk_text IS NOT NULL OR content ~ %s",
        (_CJK_PATTERN,),
    ).fetchall()
    return [int(r[0]) for r in rows if cjk_runs(str(r[1])) != r[2]]


def _missing_pair_keys(db: Db) -> list[int]:
    rows = db.execute("SELECT id FROM messages WHERE pair_keys IS NULL ORDER BY id").fetchall()
    return [int(r[0]) for r in rows]


def find_problems(db: Db) -> list[str]:
    """What is out of step (empty when healthy)."""
    problems: list[str] = []
    invalid = db.execute(
        "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE NOT i.indisvalid AND i.indrelid = ANY(%s::regclass[]) ORDER BY 1",
        (list(TABLES),),
    ).fetchall()
    problems.extend(f"index {row[0]} is invalid" for row in invalid)
    counters = db.execute(_COUNTERS).fetchall()
    if counters:
        problems.append(f"{len(counters)} session(s) with message counters out of step")
    drifted = _drifted_cjk(db)
    if drifted:
        problems.append(f"{len(drifted)} message(s) with the CJK index column out of step")
    keyless = _missing_pair_keys(db)
    if keyless:
        problems.append(f"{len(keyless)} message(s) without their phrase pair keys")
    return problems


def _recompute(
    db: Db, message_ids: list[int], column: str, derive: Callable[[str], object]
) -> None:
    """Write ``column`` of each message again, derived from its text by ``derive``."""
    for message_id in message_ids:
        row = db.execute("SELECT content FROM messages WHERE id = %s", (message_id,)).fetchone()
        if row is not None:
            db.execute(
                f"UPDATE messages SET {column} = %s WHERE id = %s",
                (derive(str(row[0])), message_id),
            )


def repair(db: Db, *, check_only: bool = False) -> RepairReport:
    """Check the store; unless ``check_only``, rebuild what is out of step."""
    report = RepairReport(problems=find_problems(db))
    if not report.problems or check_only:
        report.healthy_after = not report.problems
        return report
    for table in TABLES:
        db.execute(f"REINDEX TABLE {table}")
    report.actions.append("rebuilt the table indexes (REINDEX TABLE)")
    with db.transaction():
        drifted = _drifted_cjk(db)
        _recompute(db, drifted, "cjk_text", cjk_runs)
        keyless = _missing_pair_keys(db)
        _recompute(db, keyless, "pair_keys", message_pair_keys)
        recounted = db.execute(
            "UPDATE sessions s SET "
            "message_count = (SELECT count(*) FROM messages m WHERE m.session_id = s.id), "
            "tool_call_count = (SELECT coalesce(sum(json_array_length(tool_calls::json)), 0) "
            "  FROM messages m WHERE m.session_id = s.id AND tool_calls IS NOT NULL) "
            f"WHERE s.id IN ({_COUNTERS})"
        ).rowcount
    if drifted:
        report.actions.append(f"recomputed the CJK index column of {len(drifted)} message(s)")
    if keyless:
        report.actions.append(f"computed the phrase pair keys of {len(keyless)} message(s)")
    if recounted:
        report.actions.append(f"recounted the messages of {recounted} session(s)")
    remaining = find_problems(db)
    report.healthy_after = not remaining
    report.problems.extend(f"still: {p}" for p in remaining)
    return report
