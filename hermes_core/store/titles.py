"""Title rules (SPEC S4, S6): sanitising, length, and compression-lineage numbering.

Titles are unique among sessions, at most 100 characters after sanitising. Control
characters, zero-width characters and bidirectional overrides are stripped; emoji, CJK and
accents are kept. ``#N`` suffixes mean compression lineage and nothing else.
"""

from __future__ import annotations

import re
import unicodedata

MAX_TITLE_LENGTH = 100

_INVISIBLE = re.compile(
    "["
    "\x00-\x1f\x7f-\x9f"  # C0 and C1 control characters (newlines and tabs included)
    "\u200b-\u200f"  # zero-width space/joiners, LRM, RLM
    "\u2028-\u202e"  # line/paragraph separators, bidi embeddings and overrides
    "\u2060-\u2069"  # word joiner, invisible operators, bidi isolates
    "\ufeff"  # byte-order mark / zero-width no-break space
    "\ufff9-\ufffc"  # interlinear annotations, object replacement
    "\ud800-\udfff"  # lone surrogates
    "]"
)
_SPACES = re.compile(r"\s+")
_LINEAGE_SUFFIX = re.compile(r"^(?P<base>.*?) #(?P<number>\d+)$", re.DOTALL)


def _keep_emoji_joiners(text: str) -> str:
    """Protect zero-width joiners inside emoji sequences (👩‍💻): there they are part of the
    character a person sees, not an invisible trick."""

    def is_emoji_part(ch: str) -> bool:
        return (
            unicodedata.category(ch) == "So"
            or ch in "\ufe0f\U0001f3fb\U0001f3fc\U0001f3fd\U0001f3fe\U0001f3ff"
        )

    out = []
    for index, ch in enumerate(text):
        if (
            ch == "\u200d"
            and 0 < index < len(text) - 1
            and is_emoji_part(text[index - 1])
            and is_emoji_part(text[index + 1])
        ):
            out.append(_JOINER_PLACEHOLDER)
        else:
            out.append(ch)
    return "".join(out)


_JOINER_PLACEHOLDER = "\ue000"  # a private-use character, never in a sanitised title


def sanitize_title(raw: str) -> str | None:
    """The title as stored: invisible characters removed, white space collapsed and trimmed.
    An empty result is ``None`` (no title)."""
    text = unicodedata.normalize("NFC", raw).replace(_JOINER_PLACEHOLDER, "")
    text = _keep_emoji_joiners(text)
    text = _INVISIBLE.sub(lambda m: " " if m.group() in "\t\n\r\u2028\u2029" else "", text)
    text = _SPACES.sub(" ", text).strip().replace(_JOINER_PLACEHOLDER, "\u200d")
    return text or None


def cut_title(title: str, limit: int = MAX_TITLE_LENGTH) -> str:
    """Shorten an automatic title to ``limit`` characters, at a word boundary when one is near."""
    if len(title) <= limit:
        return title
    cut = title[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def split_lineage_title(title: str) -> tuple[str, int]:
    """``"my project #3"`` → ``("my project", 3)``; an unnumbered title is number 1."""
    match = _LINEAGE_SUFFIX.match(title)
    if match:
        return match.group("base"), int(match.group("number"))
    return title, 1


def lineage_title(base: str, number: int) -> str:
    """The title of the ``number``-th session of a lineage (1 is the unnumbered original)."""
    return base if number <= 1 else f"{base} #{number}"
