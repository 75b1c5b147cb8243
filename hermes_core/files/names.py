"""File names made from stored text (a session id, a title), and the check that a path built
from one stays inside its folder (DESIGN §9).

Ids and titles come from outside — imported logs, backups, gateway users — and a store made
before ids were checked may hold one such as ``../../tmp/x``. Whatever they hold, a file Hermes
names after them is written inside the folder meant for it:

- :func:`safe_file_stem` turns any text into a plain name (letters, digits, ``_``, ``-``); a
  text that needed changing gets a short digest of the original, so two different ids never
  share a file;
- :func:`path_inside` joins a folder and a name and refuses, in one :class:`OutputError` line,
  a name that would leave the folder (absolute, ``..``, a NUL, a backslash, empty).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path, PurePosixPath

from .errors import OutputError

MAX_STEM = 80
_PLAIN = re.compile(r"[A-Za-z0-9_-]+")
_NOT_PLAIN = re.compile(r"[^A-Za-z0-9_-]+")


def safe_file_stem(text: str, *, fallback: str = "session") -> str:
    """``text`` itself when it is already a plain name of at most 80 characters (a session id
    of the standard shape is); otherwise its plain characters joined by ``-`` and cut, then
    ``-`` and 12 hex digits of its SHA-256 (``../../tmp/x`` → ``tmp-x-3f1c…``)."""
    if len(text) <= MAX_STEM and _PLAIN.fullmatch(text):
        return text
    readable = _NOT_PLAIN.sub("-", text).strip("-")[: MAX_STEM - 13].strip("-") or fallback
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{readable}-{digest}"


def unsafe_name_reason(name: str) -> str | None:
    """Why ``name`` cannot be a path inside a folder, or None when it can."""
    if not name:
        return "the name is empty"
    if "\x00" in name or "\\" in name:
        return "the name holds a NUL or a backslash"
    pure = PurePosixPath(name)
    if pure.is_absolute():
        return "the name is an absolute path"
    if any(part in {"", ".", ".."} for part in name.split("/")):
        return "the name would leave its folder"
    return None


def path_inside(folder: Path, name: str) -> Path:
    """``folder / name``, when ``name`` is a relative path that stays inside ``folder`` (it
    may name a subfolder: ``a/b.jsonl``). Raises :class:`OutputError` otherwise, naming the
    folder and the name (``cannot write '../x.json' in /home/me/.hermes/sessions/saved: the
    name would leave its folder``); nothing is created."""
    why = unsafe_name_reason(name)
    if why is not None:
        raise OutputError(f"cannot write {name!r} in {folder}: {why}", folder)
    return folder.joinpath(*PurePosixPath(name).parts)
