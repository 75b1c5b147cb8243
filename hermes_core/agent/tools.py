"""The tools the agent may call: their definitions (sent to the model) and local executors.

A tool's output is text sent back to the model and stored as a ``tool`` message. Arguments the
model got wrong (not JSON, not an object, refused by the tool) come back as a JSON
``{"error": ...}`` output the model can read and correct; running a tool never raises.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import ToolCall

if TYPE_CHECKING:
    from hermes_core.store.protocol import Store

ToolExecutor = Callable[[dict[str, Any]], str]
"""Runs one call with its parsed JSON arguments and returns the output text."""


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool: its JSON-schema definition (``name``, ``description``, ``parameters``) and
    the function that runs it."""

    definition: Mapping[str, Any]
    run: ToolExecutor

    @property
    def name(self) -> str:
        """The name the model calls it by."""
        return str(self.definition["name"])


def error_output(message: str) -> str:
    """A tool output telling the model what went wrong."""
    return json.dumps({"error": message}, ensure_ascii=False)


class Toolbox:
    """Tool definitions plus their local executors, by name."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    @classmethod
    def default(cls, store: Store) -> Toolbox:
        """What the agent has unless told otherwise: ``session_search`` over ``store``."""
        return cls([session_search_tool(store)])

    def add(self, tool: Tool) -> None:
        """Offer one more tool; a second tool of the same name is an error."""
        if tool.name in self._tools:
            raise ValueError(f"two tools are named {tool.name!r}")
        self._tools[tool.name] = tool

    @property
    def names(self) -> tuple[str, ...]:
        """The tool names, in the order they were added."""
        return tuple(self._tools)

    def definitions(self) -> tuple[Mapping[str, Any], ...]:
        """The definitions to send with every model call."""
        return tuple(tool.definition for tool in self._tools.values())

    def run(self, call: ToolCall) -> str:
        """Run one call and return its output; every failure is an ``{"error"}`` output."""
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return error_output(f"there is no tool named {call.name!r} (tools: {known})")
        try:
            arguments = json.loads(call.arguments) if call.arguments.strip() else {}
        except ValueError as error:
            return error_output(
                f"the arguments of {call.name} are not valid JSON ({error}); send a JSON object"
            )
        if not isinstance(arguments, dict):
            return error_output(f"the arguments of {call.name} must be a JSON object")
        try:
            return tool.run(arguments)
        except Exception as error:  # a tool's own failure is the model's to read, not a crash
            return error_output(f"{call.name} failed: {type(error).__name__}: {error}")


def session_search_tool(store: Store) -> Tool:
    """``session_search`` (SPEC Q1–Q3) over ``store``, with its output as JSON text."""
    from hermes_core.search.tool import SESSION_SEARCH_TOOL, session_search

    def run(arguments: dict[str, Any]) -> str:
        return json.dumps(session_search(store, **arguments), ensure_ascii=False, default=str)

    return Tool(SESSION_SEARCH_TOOL, run)
