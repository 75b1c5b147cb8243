"""The Chat Completions shapes the api-server reads and writes (from the public API docs):
the request's messages, and ``chat.completion`` / ``chat.completion.chunk`` objects."""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from typing import Any


class BadRequest(ValueError):
    """A request body the endpoint cannot use; the message says why."""


def last_user_text(body: Mapping[str, Any]) -> str:
    """The text of the request's last ``user`` message: the new turn. The history the client
    sends before it is not replayed — the gateway's session holds the conversation."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty list")
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == "user":
            return _content_text(message.get("content"))
    raise BadRequest("'messages' has no user message")


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") == "text"
        ]
        return "\n".join(parts)
    raise BadRequest("a user message's 'content' must be text or a list of text parts")


def completion_id() -> str:
    return "chatcmpl-" + uuid.uuid4().hex


def completion(
    identifier: str, model: str, text: str, usage: tuple[int, int] | None = None
) -> dict[str, Any]:
    """A whole ``chat.completion`` object."""
    prompt, answer = usage or (0, 0)
    return {
        "id": identifier,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": answer,
            "total_tokens": prompt + answer,
        },
    }


def chunk(
    identifier: str, model: str, delta: Mapping[str, Any], finish: str | None = None
) -> dict[str, Any]:
    """One ``chat.completion.chunk`` of a streamed answer."""
    return {
        "id": identifier,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish}],
    }


def usage_chunk(identifier: str, model: str, usage: tuple[int, int]) -> dict[str, Any]:
    """The last chunk of a stream whose request set ``stream_options.include_usage``: no
    choices, the turn's token counts."""
    prompt, answer = usage
    return {
        "id": identifier,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": answer,
            "total_tokens": prompt + answer,
        },
    }


def error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    """The API's error object."""
    return {"error": {"message": message, "type": kind, "code": code, "param": None}}


def models_list(model: str) -> dict[str, Any]:
    """``GET /v1/models``: the one model this endpoint serves."""
    return {
        "object": "list",
        "data": [{"id": model, "object": "model", "created": 0, "owned_by": "hermes"}],
    }
