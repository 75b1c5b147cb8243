"""Reading a Claude Code transcript line by line, from a byte offset, never all at once.

Each complete line (ending in a newline) is one JSON object. A line that is not valid JSON or
not UTF-8 is skipped and counted. The last line of a file without a newline is either a
complete record written without one (it parses: it is taken) or a line still being written
(it does not parse: it is left for the next import, and not counted as malformed). The cursor
is the byte offset after the last line taken, so a later import continues exactly there.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MALFORMED = "malformed line"
INVALID_UTF8 = "invalid UTF-8 line"
INCOMPLETE = "incomplete last line (left for the next import)"


@dataclass(slots=True)
class LineReader:
    """Streams the JSON objects of one file; ``cursor`` and ``warnings`` fill as it goes."""

    path: Path
    start: int = 0
    cursor: int = 0
    record_start: int = 0
    """Where the record last yielded begins."""
    warnings: Counter[str] = field(default_factory=Counter)

    def records(self) -> Iterator[dict[str, Any]]:
        """The file's records from ``start`` on, in file order. The file is opened read-only
        and only read."""
        self.cursor = self.start
        with open(self.path, "rb") as handle:
            handle.seek(self.start)
            offset = self.start
            for raw in handle:
                end = offset + len(raw)
                complete = raw.endswith(b"\n")
                record = self._parse(raw, first=offset == 0, last_unfinished=not complete)
                if not complete and record is None:
                    if raw.strip():
                        self.warnings[INCOMPLETE] += 1
                    return
                self.record_start = offset
                offset = end
                self.cursor = end
                if record is not None:
                    yield record

    def _parse(self, raw: bytes, *, first: bool, last_unfinished: bool) -> dict[str, Any] | None:
        text = raw.strip()
        if first and text.startswith(b"\xef\xbb\xbf"):
            text = text[3:]
        if not text:
            return None
        try:
            decoded = text.decode("utf-8")
        except UnicodeDecodeError:
            if not last_unfinished:
                self.warnings[INVALID_UTF8] += 1
            return None
        try:
            value = json.loads(decoded)
        except ValueError:
            if not last_unfinished:
                self.warnings[MALFORMED] += 1
            return None
        if not isinstance(value, dict):
            if not last_unfinished:
                self.warnings[MALFORMED] += 1
            return None
        return value
