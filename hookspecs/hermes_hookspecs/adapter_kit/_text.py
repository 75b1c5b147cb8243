"""Text an adapter sends or logs: long answers in pieces, errors in one line."""

from __future__ import annotations


def split_text(text: str, limit: int, *, in_bytes: bool = False) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters (``in_bytes``: UTF-8 bytes, for a
    platform that counts those; a character is never cut), each cut after a line break when
    one is in the second half of the piece; nothing for text that is only white space."""
    pieces: list[str] = []
    rest = text
    while _size(rest, in_bytes) > limit:
        head = rest.encode()[:limit].decode("utf-8", "ignore") if in_bytes else rest[:limit]
        room = max(len(head), 1)
        cut = rest.rfind("\n", room // 2, room)
        cut = room if cut <= 0 else cut + 1
        pieces.append(rest[:cut])
        rest = rest[cut:]
    if rest.strip():
        pieces.append(rest)
    return pieces


def _size(text: str, in_bytes: bool) -> int:
    return len(text.encode()) if in_bytes else len(text)


def one_line(error: object) -> str:
    """An error (or an SDK's error answer) as one line: its ``message`` when it has one (the
    SDKs' own wording), else its text, else its class name."""
    text = getattr(error, "message", None) or str(error) or type(error).__name__
    return " ".join(str(text).split()) or type(error).__name__
