"""The tools the server offers, and one call of each, independent of any transport.

* ``session_search`` — the agent tool of :mod:`hermes_core.search.tool` (its schema, its
  description and its JSON payload: one definition), plus the selection filters of
  :mod:`.filters`, which narrow discovery and browse.
* ``session_info`` — one session's facts and the command that resumes it in Hermes
  (``hermes --resume <id>``), from any reference the search tool accepts.
* ``session_rename`` and ``session_pin`` — only with ``--allow-writes``.

Every failure an agent can cause is a :class:`ToolFailure` with one line; nothing it sends
raises anything else.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hermes_core.search.arguments import KNOWN
from hermes_core.search.messages import iso_time
from hermes_core.search.tool import SESSION_SEARCH_TOOL, TOOL_DESCRIPTION, TOOL_NAME, run_search
from hermes_core.store.errors import StoreError
from hermes_core.store.protocol import Store

from .filters import FILTER_NAMES, FILTER_PROPERTIES, FilterArgumentError, selection_from

READ_ONLY_HINT = "this server is read-only; start it with 'hermes mcp --allow-writes' to change sessions"

SEARCH_DESCRIPTION = (
    TOOL_DESCRIPTION
    + "\nFilters (any form that lists sessions): cwd (a workspace path), newer_than/older_than "
    "(last activity), after/before (start), e.g. newer_than='2d'. Give a result's session_id to "
    "session_info for the command that resumes it in Hermes."
)


class ToolFailure(Exception):
    """What an agent asked for cannot be done; the message is the whole explanation."""


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    name: str
    description: str
    input_schema: dict[str, Any]
    writes: bool = False


def _search_schema() -> dict[str, Any]:
    schema = copy.deepcopy(SESSION_SEARCH_TOOL["parameters"])
    schema["properties"].update(copy.deepcopy(FILTER_PROPERTIES))
    return dict(schema)


_SESSION_REFERENCE = {
    "type": "string",
    "description": "The session: an id from a result, a unique id prefix or a title.",
}

DEFINITIONS: tuple[ToolDefinition, ...] = (
    ToolDefinition(TOOL_NAME, SEARCH_DESCRIPTION, _search_schema()),
    ToolDefinition(
        "session_info",
        "One stored session's facts (id, title, origin, workspace, times, message count) and "
        "the command that resumes it in Hermes: hermes --resume <id>.",
        {
            "type": "object",
            "properties": {"session_id": _SESSION_REFERENCE},
            "required": ["session_id"],
            "additionalProperties": False,
        },
    ),
    ToolDefinition(
        "session_rename",
        "Set a session's title (unique, at most 100 characters).",
        {
            "type": "object",
            "properties": {
                "session_id": _SESSION_REFERENCE,
                "title": {"type": "string", "description": "The new title."},
            },
            "required": ["session_id", "title"],
            "additionalProperties": False,
        },
        writes=True,
    ),
    ToolDefinition(
        "session_pin",
        "Pin a session (kept by pruning, listed first) or unpin it.",
        {
            "type": "object",
            "properties": {
                "session_id": _SESSION_REFERENCE,
                "pinned": {"type": "boolean", "description": "false to unpin (default true)."},
            },
            "required": ["session_id"],
            "additionalProperties": False,
        },
        writes=True,
    ),
)


class ArchiveTools:
    """The tools over one open store."""

    def __init__(self, store: Store, *, allow_writes: bool) -> None:
        self._store = store
        self._allow_writes = allow_writes
        self._calls: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
            TOOL_NAME: self._search,
            "session_info": self._info,
            "session_rename": self._rename,
            "session_pin": self._pin,
        }

    def definitions(self) -> list[ToolDefinition]:
        """The tools this server offers (the writing ones only with ``--allow-writes``)."""
        return [d for d in DEFINITIONS if self._allow_writes or not d.writes]

    def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Run tool ``name``; raises :class:`ToolFailure` for anything an agent can get wrong."""
        call = self._calls.get(name)
        if call is None:
            known = ", ".join(d.name for d in self.definitions())
            raise ToolFailure(f"no tool {name!r}; this server has {known}"[:300])
        if not self._allow_writes and any(d.writes for d in DEFINITIONS if d.name == name):
            raise ToolFailure(READ_ONLY_HINT)
        if not isinstance(arguments, Mapping):
            raise ToolFailure("the arguments must be a JSON object")
        try:
            return call(arguments)
        except (FilterArgumentError, StoreError) as error:
            raise ToolFailure(_one_line(str(error))) from None

    def _search(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(arguments) - KNOWN - set(FILTER_NAMES))
        if unknown:
            known = ", ".join(sorted(KNOWN | set(FILTER_NAMES)))
            raise ToolFailure(f"unknown argument(s) {', '.join(unknown)}; known: {known}"[:400])
        within = selection_from(arguments)
        own = {key: value for key, value in arguments.items() if key in KNOWN}
        payload = run_search(self._store, own, within=within)
        if "error" in payload:
            raise ToolFailure(_one_line(str(payload["error"])))
        return payload

    def _info(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        session = self._store.get_session(self._resolve(arguments))
        return {
            "session_id": session.id,
            "title": session.title,
            "source": session.source,
            "cwd": session.cwd,
            "when": iso_time(session.started_at),
            "last_active": iso_time(session.last_active_at or session.started_at),
            "ended": iso_time(session.ended_at) if session.ended_at else None,
            "message_count": session.message_count,
            "pinned": session.pinned,
            "archived": session.archived,
            "parent_session_id": session.parent_session_id,
            "resume": f"hermes --resume {session.id}",
        }

    def _rename(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        title = _text(arguments, "title")
        renamed = self._store.set_title(self._resolve(arguments), title)
        return {"session_id": renamed.id, "title": renamed.title}

    def _pin(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        pinned = arguments.get("pinned", True)
        if not isinstance(pinned, bool):
            raise ToolFailure("pinned must be true or false")
        session_id = self._resolve(arguments)
        self._store.set_pinned([session_id], pinned)
        return {"session_id": session_id, "pinned": pinned}

    def _resolve(self, arguments: Mapping[str, Any]) -> str:
        return self._store.resolve(_text(arguments, "session_id"))


def _text(arguments: Mapping[str, Any], name: str) -> str:
    value = arguments.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ToolFailure(f"{name} is required (a non-empty string)")
    # Lone surrogates (broken UTF-16 from a client) cannot reach the store.
    return value.encode("utf-8", "replace").decode("utf-8").strip()


def _one_line(message: str) -> str:
    return " ".join(message.split()) or "the call failed"
