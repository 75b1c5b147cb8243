"""Converting between ``sessions``/``messages`` rows and the contract's dataclasses."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from hermes_hookspecs import Message, Session, ToolCall

SESSION_COLUMNS = (
    "id, source, user_id, title, title_source, model, model_config, system_prompt_hash, "
    "parent_session_id, parent_kind, started_at, ended_at, end_reason, last_active_at, cwd, "
    "git_branch, git_repo_root, chat_id, chat_type, thread_id, session_key, billing_provider, "
    "cost_actual_usd, cost_estimated_usd, input_tokens, output_tokens, message_count, "
    "tool_call_count, pinned, archived, metadata, cache_read_tokens, cache_write_tokens"
)
SESSION_COLUMNS_QUALIFIED = ", ".join(f"s.{name.strip()}" for name in SESSION_COLUMNS.split(","))

MESSAGE_COLUMNS = (
    "id, session_id, role, content, tool_calls, tool_call_id, tool_name, reasoning, timestamp, "
    "token_count, platform_message_id"
)


def _json_or_none(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def session_from_row(
    row: sqlite3.Row | tuple[Any, ...], system_prompt: str | None = None
) -> Session:
    (
        session_id,
        source,
        user_id,
        title,
        title_source,
        model,
        model_config,
        _prompt_hash,
        parent_session_id,
        parent_kind,
        started_at,
        ended_at,
        end_reason,
        last_active_at,
        cwd,
        git_branch,
        git_repo_root,
        chat_id,
        chat_type,
        thread_id,
        session_key,
        billing_provider,
        cost_actual_usd,
        cost_estimated_usd,
        input_tokens,
        output_tokens,
        message_count,
        tool_call_count,
        pinned,
        archived,
        metadata,
        cache_read_tokens,
        cache_write_tokens,
    ) = tuple(row)
    return Session(
        id=session_id,
        source=source,
        user_id=user_id,
        title=title,
        title_source=title_source,
        model=model,
        model_config=_json_or_none(model_config),
        system_prompt=system_prompt,
        parent_session_id=parent_session_id,
        parent_kind=parent_kind,
        started_at=started_at,
        ended_at=ended_at,
        end_reason=end_reason,
        last_active_at=last_active_at,
        cwd=cwd,
        git_branch=git_branch,
        git_repo_root=git_repo_root,
        chat_id=chat_id,
        chat_type=chat_type,
        thread_id=thread_id,
        session_key=session_key,
        billing_provider=billing_provider,
        cost_actual_usd=cost_actual_usd,
        cost_estimated_usd=cost_estimated_usd,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        message_count=message_count,
        tool_call_count=tool_call_count,
        pinned=bool(pinned),
        archived=bool(archived),
        metadata=_json_or_none(metadata) or {},
        cache_read_tokens=cache_read_tokens,
        cache_write_tokens=cache_write_tokens,
    )


def tool_calls_to_json(calls: tuple[ToolCall, ...]) -> str | None:
    if not calls:
        return None
    return json.dumps(
        [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls], ensure_ascii=False
    )


def tool_calls_from_json(text: str | None) -> tuple[ToolCall, ...]:
    data = _json_or_none(text)
    if not isinstance(data, list):
        return ()
    return tuple(
        ToolCall(
            name=str(item.get("name", "")),
            arguments=str(item.get("arguments", "{}")),
            id=item.get("id"),
        )
        for item in data
        if isinstance(item, dict)
    )


def message_from_row(row: sqlite3.Row | tuple[Any, ...]) -> Message:
    (
        message_id,
        session_id,
        role,
        content,
        tool_calls,
        tool_call_id,
        tool_name,
        reasoning,
        timestamp,
        token_count,
        platform_message_id,
    ) = tuple(row)
    return Message(
        id=message_id,
        session_id=session_id,
        role=role,
        content=content,
        tool_calls=tool_calls_from_json(tool_calls),
        tool_call_id=tool_call_id,
        tool_name=tool_name,
        reasoning=reasoning,
        timestamp=timestamp,
        token_count=token_count,
        platform_message_id=platform_message_id,
    )
