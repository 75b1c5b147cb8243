"""Tool calls arrive in fragments spread over stream chunks, keyed by ``index``: the first
fragment of a call usually carries its id and name, the following ones pieces of its
arguments. :class:`ToolCallAssembler` joins them and hands out whole calls."""

from __future__ import annotations

import os
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
        self._calls: dict[int, _Partial] = {}

    def add(self, fragment: Any) -> None:
        """One ``delta.tool_calls[i]`` fragment (an SDK object with ``index``, ``id``,
        ``function.name`` and ``function.arguments``, any of which may be missing)."""
        index = fragment.index if isinstance(fragment.index, int) else len(self._calls)
        partial = self._calls.setdefault(index, _Partial())
        if fragment.id:
            partial.id = fragment.id
        function = fragment.function
        if function is not None:
            if function.name and not partial.name:
                # Sent with the first fragment; a few endpoints repeat it in every one.
                partial.name = function.name
            if function.arguments:
                partial.arguments.append(function.arguments)

    def __bool__(self) -> bool:
        return bool(self._calls)

    def finish(self) -> list[ToolCall]:
        """The whole calls, in index order (an id is made up where the endpoint gave none);
        the assembler is empty afterwards."""
        calls = [
            ToolCall(
                name=partial.name,
                arguments="".join(partial.arguments) or "{}",
                id=partial.id or f"call_{os.urandom(6).hex()}",
            )
            for _, partial in sorted(self._calls.items())
        ]
        self._calls.clear()
        return calls
