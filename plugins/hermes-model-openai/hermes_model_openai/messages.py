"""From the contract's request to Chat Completions parameters."""

from __future__ import annotations

from typing import Any

from hermes_hookspecs import Message, ModelRequest


def chat_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The ``messages`` parameter: the system prompt first, then the conversation."""
    sent: list[dict[str, Any]] = []
    if request.system_prompt:
        sent.append({"role": "system", "content": request.system_prompt})
    sent.extend(_one(message) for message in request.messages)
    return sent


def _one(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": message.content,
        }
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id or f"call_{index}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments or "{}"},
                }
                for index, call in enumerate(message.tool_calls)
            ],
        }
    return {"role": message.role, "content": message.content}


def chat_tools(request: ModelRequest) -> list[dict[str, Any]]:
    """The ``tools`` parameter: each definition as a function tool."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool.get("description", ""),
                "parameters": tool.get("parameters", {"type": "object", "properties": {}}),
            },
        }
        for tool in request.tools
    ]


def request_chars(request: ModelRequest) -> int:
    """The characters of a request, for estimating its tokens when the endpoint reports none."""
    size = len(request.system_prompt or "")
    for message in request.messages:
        size += len(message.content) + sum(len(c.arguments) for c in message.tool_calls)
    return size
