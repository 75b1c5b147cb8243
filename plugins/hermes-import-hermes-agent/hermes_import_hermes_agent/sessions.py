"""A Hermes Agent ``sessions`` row as a Hermes sessions :class:`Session` snapshot.

Lineage: Hermes Agent keeps one ``parent_session_id`` column for several kinds of edge and
tells them apart by markers in ``model_config`` and by how the parent ended. They become an
explicit ``parent_kind`` here, and the markers are dropped from ``model_config``:

* ``_delegate_from`` marker, or a ``subagent`` session → ``delegate``;
* ``_branched_from`` marker, or a parent that ended ``branched`` → ``branch``;
* ``_reset_from`` marker, or a parent that ended by a reset with the same session key →
  ``reset``;
* a parent that ended ``compression`` → ``compression`` (a continuation);
* any other parent → ``branch``.

Columns with no place of their own here (cache and reasoning token counts, API calls,
display name, origin, handoff state…) are kept under ``metadata["hermes_agent"]``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from hermes_hookspecs import ParentKind, Session

from .schema import StoreShape

MARKERS: Mapping[str, ParentKind] = {
    "_delegate_from": "delegate",
    "_branched_from": "branch",
    "_reset_from": "reset",
}
RESET_END_REASONS = frozenset(
    {"session_reset", "session_switch", "idle", "daily", "suspended", "resume_pending_expired"}
)
SOURCE_NAMES: Mapping[str, str] = {"api_server": "api-server"}
"""Hermes Agent origins spelled differently here."""

_MAPPED = frozenset({
    "id", "source", "user_id", "model", "model_config", "system_prompt", "system_prompt_hash",
    "parent_session_id", "started_at", "ended_at", "end_reason", "message_count",
    "tool_call_count", "input_tokens", "output_tokens", "cache_read_tokens",
    "cache_write_tokens", "cwd", "git_branch", "git_repo_root",
    "billing_provider", "estimated_cost_usd", "actual_cost_usd", "title", "title_source",
    "last_activity_at", "archived", "pinned", "chat_id", "chat_type", "thread_id", "session_key",
})  # fmt: skip

TitleSource = Literal["user", "auto", "import", "lineage"]


@dataclass(frozen=True, slots=True)
class ParentFacts:
    """What deciding a child's ``parent_kind`` needs to know of its parent."""

    end_reason: str | None
    session_key: str | None


def session_columns(shape: StoreShape) -> list[str]:
    """The ``sessions`` columns to select, in a fixed order."""
    return sorted(shape.session_columns)


def parent_facts(connection: sqlite3.Connection, shape: StoreShape) -> dict[str, ParentFacts]:
    """Every session's end reason and session key, by id (for children's ``parent_kind``)."""
    if not shape.sessions_have("parent_session_id"):
        return {}
    reason = "end_reason" if shape.sessions_have("end_reason") else "NULL"
    key = "session_key" if shape.sessions_have("session_key") else "NULL"
    return {
        str(row[0]): ParentFacts(row[1], row[2])
        for row in connection.execute(
            f"SELECT id, {reason}, {key} FROM sessions WHERE id IN "
            "(SELECT parent_session_id FROM sessions WHERE parent_session_id IS NOT NULL)"
        )
    }


def to_session(
    row: Mapping[str, Any],
    *,
    parents: Mapping[str, ParentFacts],
    system_prompt: str | None,
    version: int,
) -> Session:
    """The snapshot of one ``sessions`` row (``row`` maps column names to values)."""
    config, markers = _model_config(row.get("model_config"))
    parent_id = _text(row.get("parent_session_id"))
    source = str(row["source"])
    kind = _parent_kind(row, parent_id, markers, parents) if parent_id else None
    extra = {
        name: _decoded(name, value)
        for name, value in row.items()
        if name not in _MAPPED and value not in (None, "", 0)
    }
    extra["schema_version"] = version
    ended = _number(row.get("ended_at"))
    return Session(
        id=str(row["id"]),
        source=SOURCE_NAMES.get(source, source),
        started_at=float(row["started_at"]),
        title=_text(row.get("title")),
        title_source=_title_source(row, kind) if _text(row.get("title")) else None,
        user_id=_text(row.get("user_id")),
        model=_text(row.get("model")),
        model_config=config,
        system_prompt=system_prompt,
        parent_session_id=parent_id,
        parent_kind=kind,
        ended_at=ended,
        end_reason=_text(row.get("end_reason")) if ended is not None else None,
        last_active_at=_number(row.get("last_activity_at")),
        cwd=_text(row.get("cwd")),
        git_branch=_text(row.get("git_branch")),
        git_repo_root=_text(row.get("git_repo_root")),
        chat_id=_text(row.get("chat_id")),
        chat_type=_text(row.get("chat_type")),
        thread_id=_text(row.get("thread_id")),
        session_key=_text(row.get("session_key")),
        billing_provider=_text(row.get("billing_provider")),
        cost_actual_usd=_number(row.get("actual_cost_usd")),
        cost_estimated_usd=_number(row.get("estimated_cost_usd")),
        input_tokens=int(row.get("input_tokens") or 0),
        output_tokens=int(row.get("output_tokens") or 0),
        cache_read_tokens=_count(row.get("cache_read_tokens")),
        cache_write_tokens=_count(row.get("cache_write_tokens")),
        message_count=int(row.get("message_count") or 0),
        tool_call_count=int(row.get("tool_call_count") or 0),
        pinned=bool(row.get("pinned") or 0),
        archived=bool(row.get("archived") or 0),
        metadata={"hermes_agent": extra},
    )


def _count(value: Any) -> int:
    """A token count Hermes Agent kept (a column older stores lack reads as 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _parent_kind(
    row: Mapping[str, Any],
    parent_id: str,
    markers: set[str],
    parents: Mapping[str, ParentFacts],
) -> ParentKind:
    for marker, kind in MARKERS.items():
        if marker in markers:
            return kind
    if row.get("source") == "subagent":
        return "delegate"
    parent = parents.get(parent_id)
    reason = parent.end_reason if parent is not None else None
    if reason == "compression":
        return "compression"
    if reason == "branched":
        return "branch"
    if (
        reason in RESET_END_REASONS
        and parent is not None
        and parent.session_key is not None
        and parent.session_key == row.get("session_key")
    ):
        return "reset"
    return "branch"


def _model_config(raw: object) -> tuple[dict[str, Any] | None, set[str]]:
    """The configuration without the lineage markers, and which markers it had."""
    if raw is None or raw == "":
        return None, set()
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {"unparsed": str(raw)}, set()
    if not isinstance(value, dict):
        return {"value": value}, set()
    markers = {key for key in MARKERS if key in value}
    config = {key: item for key, item in value.items() if key not in MARKERS}
    return config or None, markers


def _title_source(row: Mapping[str, Any], kind: ParentKind | None) -> TitleSource:
    """A compression continuation's numbered title is a lineage title; otherwise Hermes Agent
    ranks ``derived < llm < user`` (NULL counts as user) and its branch titles are automatic."""
    if kind == "compression":
        return "lineage"
    source = row.get("title_source")
    if source is None or source == "user":
        return "user"
    return "auto"


def _decoded(name: str, value: object) -> object:
    if name.endswith("_json") and isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    if isinstance(value, bytes):
        return value.hex()
    return value


def _text(value: object) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if text else None


def _number(value: object) -> float | None:
    if value is None or value == "":
        return None
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
