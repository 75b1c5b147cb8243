"""Tool calls arrive in fragments spread over stream chunks, keyed by ``index``: the first
fragment of a call usually carries its id and name, the following ones pieces of its
arguments. :class:`ToolCallAssembler` joins them and hands out whole calls.

Some endpoints send every call whole with the same ``index`` (or none) but its own id; a
fragment carrying a new id for an index that holds a call with another id starts a new call."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_hookspecs import ToolCall


@dataclass(slots=True)
class _Partial:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ToolCallAssembler:
    """Collects tool-call fragments by index."""

    def __init__(self) -> None:
        self._calls: list[_Partial] = []
        self._by_index: dict[int, _Partial] = {}

    def add(self, fragment: Mapping[str, Any]) -> None:
        """One ``delta.tool_calls[i]`` fragment as the stream carries it (a JSON object with
        ``index``, ``id``, ``function.name`` and ``function.arguments``, any of which may be
        missing); ValueError when it is not an object."""
        if not isinstance(fragment, Mapping):
            raise ValueError("a tool call fragment is not an object")
        index = fragment.get("index")
        index = index if isinstance(index, int) else -1
        call_id = _text(fragment.get("id"))
        partial = self._by_index.get(index)
        fresh_id = call_id and partial is not None and partial.id not in (None, call_id)
        if partial is None or fresh_id:
            partial = _Partial()
            self._calls.append(partial)
            self._by_index[index] = partial
        if call_id:
            partial.id = call_id
        function = fragment.get("function")
        if isinstance(function, Mapping):
            name = _text(function.get("name"))
            if name and not partial.name:
                # Sent with the first fragment; a few endpoints repeat it in every one.
                partial.name = name
            arguments = _text(function.get("arguments"))
            if arguments:
                partial.arguments.append(arguments)

    def __bool__(self) -> bool:
        return bool(self._calls)

    def finish(self) -> list[ToolCall]:
        """The whole calls, in the order they started (an id is made up where the endpoint
        gave none); the assembler is empty afterwards."""
        calls = [
            ToolCall(
                name=partial.name,
                arguments="".join(partial.arguments) or "{}",
                id=partial.id or f"call_{os.urandom(6).hex()}",
            )
            for partial in self._calls
        ]
        self._calls.clear()
        self._by_index.clear()
        return calls


def _text(value: Any) -> str | None:
    """A string field of a fragment (anything else counts as missing)."""
    return value if isinstance(value, str) else None
