"""Automatic titles written by the configured model (SPEC S5).

Registered before the model-free fallback (``titles``): when a chat or the gateway opened a
model (``hermes_core.agent.open_provider``), this plugin asks it for a title in one short
request with :data:`TITLE_PROMPT`. It returns None — so the fallback titles the session — when
no model is open, when the call fails, or when the answer holds no usable words. It runs in the
store's background title thread, so it never adds latency to a turn; its tokens are not added
to the session's usage.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_hookspecs import (
    Message,
    ModelError,
    ModelRequest,
    Session,
    TextDelta,
    hookimpl,
)

if TYPE_CHECKING:
    from hermes_core.plugins import PluginHost

TITLE_PROMPT = (
    "Write a short descriptive title for the conversation below: 3 to 7 words, in the "
    "conversation's language, naming its subject. Answer with the title only — no quotes, no "
    "final punctuation, no prefix such as 'Title:'."
)
"""The system prompt of the title request; the first messages follow as the user message."""

MAX_WORDS = 7
EXCERPT_CHARS = 600
"""Each message shown to the model is cut to this many characters."""
TITLE_OUTPUT_TOKENS = 32

_PREFIX = re.compile(r"^\s*(title|titel|título|titre)\s*[:：-]\s*", re.IGNORECASE)
_QUOTES = "\"'`“”‘’«»„*_#"
_EDGE_PUNCTUATION = " \t.,;:!?。！？、…-–—"


def clean_title(answer: str) -> str | None:
    """The model's answer as a title: its first non-empty line, without a ``Title:`` prefix,
    quotes, markup or final punctuation, at most 7 words; None when nothing is left."""
    line = next((part.strip() for part in answer.splitlines() if part.strip()), "")
    line = _PREFIX.sub("", line)
    line = "".join(ch for ch in line if ch not in _QUOTES)
    words = line.split()[:MAX_WORDS]
    title = " ".join(words).strip(_EDGE_PUNCTUATION)
    return title or None


def title_request(messages: Sequence[Message]) -> ModelRequest:
    """The one request asking for a title of a conversation that starts with ``messages``."""
    lines = []
    for message in messages:
        if message.role in {"user", "assistant"} and message.content.strip():
            text = " ".join(message.content.split())[:EXCERPT_CHARS]
            lines.append(f"{message.role}: {text}")
    return ModelRequest(
        messages=(Message(role="user", content="\n".join(lines)),),
        system_prompt=TITLE_PROMPT,
        max_output_tokens=TITLE_OUTPUT_TOKENS,
        stream=False,  # only the whole title is used
    )


class ModelTitles:
    """The title plugin of one plugin host (it reads the model that host opened)."""

    def __init__(self, host: PluginHost) -> None:
        self._host = host

    @hookimpl
    def hermes_generate_title(self, session: Session, messages: Sequence[Message]) -> str | None:
        """Ask the open model for a title; None lets the model-free fallback answer."""
        model = self._host.active_model()
        if model is None or not any(m.role == "user" for m in messages):
            return None
        provider, settings = model
        pieces: list[str] = []
        try:
            for event in provider.stream(title_request(messages), settings):
                if isinstance(event, TextDelta):
                    pieces.append(event.text)
        except ModelError:
            return None
        except Exception:  # a provider bug must not cost the session its fallback title
            return None
        return clean_title("".join(pieces))


def plugin_for(host: PluginHost) -> ModelTitles:
    """The plugin object registered for ``host``."""
    return ModelTitles(host)
