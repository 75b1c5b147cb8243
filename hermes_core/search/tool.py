"""``session_search``: the agent's tool over past conversations (SPEC Q1–Q3).

Any agent runtime can register it: :data:`SESSION_SEARCH_TOOL` is its JSON-schema definition
(``name``, ``description``, ``parameters``), and :func:`session_search` runs one call and
returns a JSON-ready dict. Bad arguments and unknown sessions come back as
``{"error": "..."}`` (an agent reads the message and retries); the tool never raises for
anything an agent can send.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .arguments import (
    BROWSE_DEFAULT_LIMIT,
    DEFAULT_LIMIT,
    DEFAULT_WINDOW,
    MAX_LIMIT,
    MAX_WINDOW,
    SearchArgumentError,
    parse_arguments,
)

if TYPE_CHECKING:
    from hermes_core.selection.filters import SessionFilter
    from hermes_core.store.protocol import SearchIndex

TOOL_NAME = "session_search"

TOOL_DESCRIPTION = (
    "Search and read the user's past conversations with you (full-text search over every "
    "stored session; returns the real messages, not summaries). When the user references "
    "something from a past conversation or you suspect relevant prior context exists, use "
    "session_search to recall it before asking them to repeat themselves — e.g. 'we did this "
    "before', 'remember when', 'last time', 'as I said', or a project, person or idea that is "
    "not in the current context.\n"
    "The call form follows from the arguments:\n"
    "1. discovery — query: the best matching sessions (one per lineage). The first result is "
    "full (±5 messages around the match plus the first/last 3 messages); the others are "
    "compact (the matching message only).\n"
    "2. scroll — session_id + around_message_id (+ window): ±window messages around that "
    "message. Scroll forward with messages[-1].id, back with messages[0].id; messages_before/"
    "messages_after below window mean the start/end of the session.\n"
    "3. read — session_id alone: the whole session, or its head and tail if it is long "
    "(also resolves @session:<profile>/<id> links).\n"
    "4. browse — no arguments: recent sessions in time order (what was I working on?).\n"
    'Query syntax (FTS5): words are AND-ed; "exact phrase"; OR; NOT; prefix*. Any other text '
    "is searched as plain words. Chinese/Japanese/Korean text is matched as a substring."
)

SESSION_SEARCH_TOOL: dict[str, Any] = {
    "name": TOOL_NAME,
    "description": TOOL_DESCRIPTION,
    "parameters": {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "Discovery: what to look for (FTS5 syntax: docker deployment, "
                '"exact phrase", docker OR kubernetes, python NOT java, deploy*).',
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "description": f"Discovery: how many sessions (default {DEFAULT_LIMIT}, at most "
                f"{MAX_LIMIT}). Browse: how many recent sessions (default "
                f"{BROWSE_DEFAULT_LIMIT}).",
            },
            "sort": {
                "type": "string",
                "enum": ["newest", "oldest"],
                "description": "Discovery: order by time instead of relevance — newest for "
                "'where did we leave X', oldest for 'how did X start'. Omit for relevance.",
            },
            "detail": {
                "type": "string",
                "enum": ["adaptive", "full"],
                "description": "Discovery: adaptive (default) gives full context for the best "
                "result only; full gives it for every result.",
            },
            "session_id": {
                "type": "string",
                "description": "Scroll/read: the session (an id from a result, a unique id "
                "prefix, a title, or an @session:<profile>/<id> link).",
            },
            "around_message_id": {
                "type": "integer",
                "description": "Scroll: the message to centre the window on.",
            },
            "window": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_WINDOW,
                "description": f"Scroll: messages on each side (default {DEFAULT_WINDOW}).",
            },
            "role_filter": {
                "type": "string",
                "description": "Discovery: comma-separated roles to search (default "
                "'user,assistant'); add 'tool' to search tool output, or 'tool' alone.",
            },
            "source": {
                "type": "string",
                "description": "Discovery/browse: only sessions from this origin (cli, "
                "telegram, …).",
            },
        },
        "additionalProperties": False,
    },
}
"""The tool definition to register with an agent runtime (JSON schema for the arguments)."""


def run_search(
    store: object, arguments: dict[str, Any], *, within: SessionFilter | None = None
) -> dict[str, Any]:
    """One call against an open store (or its :class:`~hermes_core.store.protocol.SearchIndex`);
    errors an agent can cause become ``{"error"}``.

    ``within`` narrows discovery and browse to a selection of sessions (a host's filters,
    such as the MCP server's ``cwd`` and time options); scroll and read name their session.
    """
    from hermes_core.store.errors import StoreDamaged, StoreError
    from hermes_core.store.search_queries import search_index_of

    from .browse import browse
    from .discovery import discover
    from .read import read
    from .scroll import scroll

    index: SearchIndex = search_index_of(store)
    try:
        parsed = parse_arguments(arguments)
        if parsed.form == "discovery":
            return discover(index, parsed, within)
        if parsed.form == "scroll":
            return scroll(index, parsed)
        if parsed.form == "read":
            return read(index, parsed)
        return browse(index, parsed, within)
    except (StoreDamaged, *index.database_errors) as error:  # type: ignore[misc]
        # A damaged or unreadable store, not the agent's doing.
        return {
            "error": f"the session store cannot be read ({error}); try 'hermes sessions repair'"
        }
    except (SearchArgumentError, StoreError) as error:
        return {"error": str(error)}


def session_search(store: object | None = None, /, **arguments: Any) -> dict[str, Any]:
    """Run ``session_search`` with an agent's ``arguments`` (see :data:`SESSION_SEARCH_TOOL`).

    ``store`` is an open store (a :class:`~hermes_core.store.SessionStore` or any backend's),
    or an open ``sqlite3`` connection to a ``state.db``; without it, the configured store of
    ``$HERMES_HOME`` (else ``~/.hermes``) is opened for this call.
    """
    if store is not None:
        return run_search(store, arguments)
    from hermes_core.store import StoreError
    from hermes_core.store.backends import open_store

    try:
        opened = open_store(_default_home())
    except StoreError as error:
        return {"error": str(error)}
    with opened:
        return run_search(opened, arguments)


def _default_home() -> Path:
    import os

    configured = os.environ.get("HERMES_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".hermes"
