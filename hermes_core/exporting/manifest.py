"""``manifest.jsonl``: one line per exported file (SPEC X3), next to the files.

Each line holds the file's path relative to the manifest, the format, the session ids it
holds, the ids of the lineage it covers, its message count, its SHA-256 and when it was
written. Exporting again into the same folder puts the lines of the files just written first and keeps
the lines of the others after them; the manifest itself is written atomically.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_hookspecs import ExportedFile

from hermes_core.files import AtomicFile

MANIFEST_NAME = "manifest.jsonl"


def manifest_entry(
    directory: Path,
    exported: ExportedFile,
    *,
    format_name: str,
    lineage_ids: Sequence[str],
    exported_at: float,
) -> dict[str, Any]:
    """The manifest line of one file (``exported.path`` is absolute or under ``directory``)."""
    path = exported.path if exported.path.is_absolute() else directory / exported.path
    try:
        shown = path.relative_to(directory).as_posix()
    except ValueError:
        shown = str(path)
    return {
        "path": shown,
        "format": format_name,
        "session_ids": list(exported.session_ids),
        "lineage_ids": list(lineage_ids),
        "message_count": exported.message_count,
        "sha256": exported.sha256,
        "exported_at": exported_at,
    }


def _manifest_lines(directory: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(raw line, entry) for every well-formed line of ``directory``'s manifest."""
    path = directory / MANIFEST_NAME
    if not path.is_file():
        return
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                yield line.rstrip("\n"), entry


def read_manifest(directory: Path) -> list[dict[str, Any]]:
    """The entries of ``directory``'s manifest (none when absent); malformed lines are skipped."""
    return [entry for _, entry in _manifest_lines(directory)]


def write_manifest(
    directory: Path,
    files: Iterable[ExportedFile],
    *,
    format_name: str,
    lineage_of: Mapping[str, Sequence[str]],
    exported_at: float | None = None,
) -> Path:
    """Record ``files`` in ``directory/manifest.jsonl`` and return its path.

    ``lineage_of`` maps a session id to the lineage ids its file covers (a file holding
    sessions not in it lists its own session ids). Lines are streamed to the new manifest, so
    only the set of rewritten paths is held, however many files there are.
    """
    moment = time.time() if exported_at is None else exported_at
    target = directory / MANIFEST_NAME
    rewritten: set[str] = set()
    with AtomicFile(target) as out:
        for exported in files:
            lineage: list[str] = []
            for session_id in exported.session_ids:
                lineage.extend(lineage_of.get(session_id, (session_id,)))
            entry = manifest_entry(
                directory,
                exported,
                format_name=format_name,
                lineage_ids=list(dict.fromkeys(lineage)),
                exported_at=moment,
            )
            rewritten.add(entry["path"])
            out.write(_encoded(entry))
        for line, entry in _manifest_lines(directory):
            if entry["path"] not in rewritten:
                out.write(line.encode("utf-8") + b"\n")
    return target


def _encoded(entry: dict[str, Any]) -> bytes:
    return json.dumps(entry, sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n"
