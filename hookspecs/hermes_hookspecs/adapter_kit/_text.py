"""Text an adapter sends or logs: long answers in pieces, errors in one line."""

from __future__ import annotations


def split_text(text: str, limit: int) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters, each cut after a line break when one
    is in the second half of the piece; nothing for text that is only white space."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = rest.rfind("\n", limit // 2, limit)
        cut = limit if cut <= 0 else cut + 1
        pieces.append(rest[:cut])
        rest = rest[cut:]
    if rest.strip():
        pieces.append(rest)
    return pieces


def one_line(error: object) -> str:
    """An error (or an SDK's error answer) as one line: its ``message`` when it has one (the
    SDKs' own wording), else its text, else its class name."""
    text = getattr(error, "message", None) or str(error) or type(error).__name__
    return " ".join(str(text).split()) or type(error).__name__
