"""Reading a batch file: the prompts it holds and the lines that are not one.

A ``.jsonl`` file holds one JSON object per line: ``{"prompt": "...", "title": ..., "model":
..., "id": ...}`` (only ``prompt`` is required; other keys are ignored). A ``.txt`` file holds
one prompt per non-empty line. Blank lines are skipped silently; any other line that is not a
prompt (bad JSON, no ``prompt``, an ``id`` used twice) is :class:`Malformed`, counted with its
line number, never fatal. A file that cannot be read, or has another extension, is a
:class:`BatchFileError`: one line.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_hookspecs import UserFacingError

EXTENSIONS = (".jsonl", ".txt")


class BatchFileError(UserFacingError):
    """The batch file cannot be used at all (missing, unreadable, unknown extension)."""


@dataclass(frozen=True, slots=True)
class BatchPrompt:
    """One prompt of the file."""

    line: int
    """Its line number (1-based)."""
    text: str
    key: str
    """What identifies it across runs of the same file: ``id:<id>`` when the line gives an
    ``id``, else ``text:<digest>`` of the prompt (``#N`` added to its N-th repeat)."""
    title: str | None = None
    model: str | None = None
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class Malformed:
    """A line that is not a prompt, and why."""

    line: int
    reason: str


@dataclass
class PromptFile:
    """What a batch file holds."""

    path: Path
    prompts: list[BatchPrompt] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)


def read_prompts(path: Path) -> PromptFile:
    """The prompts of ``path`` and its malformed lines; :class:`BatchFileError` when the file
    cannot be used."""
    suffix = path.suffix.lower()
    if suffix not in EXTENSIONS:
        raise BatchFileError(
            f"{path}: not a batch file (give a .jsonl file of prompt objects or a .txt file "
            "of one prompt per line)"
        )
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise BatchFileError(f"{path}: cannot be read ({error.strerror or error})") from None
    found = PromptFile(path)
    repeats: Counter[str] = Counter()
    ids: dict[str, int] = {}
    for number, line_bytes in enumerate(raw.splitlines(), start=1):
        try:
            line = line_bytes.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError:
            found.malformed.append(Malformed(number, "not UTF-8 text"))
            continue
        if not line.strip():
            continue
        parsed = _jsonl_line(number, line) if suffix == ".jsonl" else _text_line(number, line)
        if isinstance(parsed, Malformed):
            found.malformed.append(parsed)
            continue
        if parsed.item_id is not None and parsed.item_id in ids:
            found.malformed.append(
                Malformed(number, f"id {parsed.item_id!r} is used on line {ids[parsed.item_id]}")
            )
            continue
        if parsed.item_id is not None:
            ids[parsed.item_id] = number
        else:
            digest = hashlib.sha256(parsed.text.encode("utf-8")).hexdigest()[:16]
            repeats[digest] += 1
            count = repeats[digest]
            key = f"text:{digest}" + (f"#{count}" if count > 1 else "")
            parsed = BatchPrompt(number, parsed.text, key, parsed.title, parsed.model)
        found.prompts.append(parsed)
    return found


def _text_line(number: int, line: str) -> BatchPrompt | Malformed:
    return BatchPrompt(number, line.strip(), key="")


def _jsonl_line(number: int, line: str) -> BatchPrompt | Malformed:
    try:
        data: Any = json.loads(line)
    except ValueError:
        return Malformed(number, "not a JSON object")
    if not isinstance(data, dict):
        return Malformed(number, "not a JSON object")
    prompt = data.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return Malformed(number, 'no "prompt" text')
    values: dict[str, str | None] = {}
    for name in ("title", "model", "id"):
        value = data.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and name == "id":
            value = str(value)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            return Malformed(number, f'"{name}" is not text')
        values[name] = value.strip() if isinstance(value, str) else None
    item_id = values["id"]
    return BatchPrompt(
        number,
        prompt,
        key=f"id:{item_id}" if item_id is not None else "",
        title=values["title"],
        model=values["model"],
        item_id=item_id,
    )
