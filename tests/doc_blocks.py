"""Reading the fenced code blocks of a Markdown guide, so tests can run or compare what the
docs show (``pythonpath = ["tests"]`` makes this importable from every test folder)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

FENCE = re.compile(r"^```(?P<info>[^\n]*)\n(?P<body>.*?)^```\s*$", re.MULTILINE | re.DOTALL)
TITLE = re.compile(r'title="(?P<path>[^"]+)"')


def code_blocks(guide: Path) -> Iterator[tuple[str, str]]:
    """``(info string, body)`` of every fenced block, in order."""
    for block in FENCE.finditer(guide.read_text(encoding="utf-8")):
        yield block["info"], block["body"]


def titled_files(guide: Path) -> dict[str, str]:
    """Relative path → content, for every code block whose info string has ``title="…"``."""
    files: dict[str, str] = {}
    for info, body in code_blocks(guide):
        title = TITLE.search(info)
        if title:
            files[title["path"]] = body
    return files
