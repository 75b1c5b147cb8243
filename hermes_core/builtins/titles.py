"""The model-free automatic title (SPEC S5): the gist of the first user message.

It runs last (``trylast``), so any title plugin backed by a model answers first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hermes_hookspecs import Message, Session, hookimpl

MAX_WORDS = 7
MAX_CHARS = 60

_CODE_BLOCK = re.compile(r"```.*?(```|$)", re.DOTALL)
_URL = re.compile(r"https?://\S+")
_MARKUP = re.compile(r"[`*_#>\[\]{}|~]+")
_TAGS = re.compile(r"<[^>]{1,80}>")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s")
_GREETING = re.compile(r"^(hi|hello|hey|hallo|ola|olá|bonjour)[,!. ]+", re.IGNORECASE)


def title_from_text(text: str) -> str | None:
    """A short title from free text: the first sentence, at most 7 words and 60 characters."""
    text = _CODE_BLOCK.sub(" ", text)
    text = _URL.sub(" ", text)
    text = _TAGS.sub(" ", text)
    text = _MARKUP.sub(" ", text)
    text = " ".join(text.split())
    text = _GREETING.sub("", text).strip()
    if not text:
        return None
    first_sentence = _SENTENCE_END.split(text, maxsplit=1)[0]
    words = first_sentence.split()
    title = " ".join(words[:MAX_WORDS]).rstrip(" ,;:.!?。！？")
    if len(title) > MAX_CHARS:
        title = (
            title[:MAX_CHARS].rsplit(" ", 1)[0] if " " in title[:MAX_CHARS] else title[:MAX_CHARS]
        )
    if not title:
        return None
    return title[0].upper() + title[1:]


@hookimpl(trylast=True)
def hermes_generate_title(session: Session, messages: Sequence[Message]) -> str | None:
    """Title a session from its first user message, without calling any model."""
    for message in messages:
        if message.role == "user":
            return title_from_text(message.content)
    return None
