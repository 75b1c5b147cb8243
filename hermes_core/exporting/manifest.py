"""``manifest.jsonl``: one line per exported file (SPEC X3), next to the files.

Each line holds the file's path relative to the manifest, the format, the session ids it
holds, the ids of the lineage it covers, its message count, its SHA-256 and when it was
written. Exporting again into the same folder replaces the lines of rewritten files and keeps
the others; the manifest itself is written atomically.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_hookspecs import ExportedFile

from .sink import AtomicFile

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


def read_manifest(directory: Path) -> list[dict[str, Any]]:
    """The entries of ``directory``'s manifest (none when absent); malformed lines are skipped."""
    path = directory / MANIFEST_NAME
    if not path.is_file():
        return []
    entries: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            entries.append(entry)
    return entries


def write_manifest(
    directory: Path,
    files: Sequence[ExportedFile],
    *,
    format_name: str,
    lineage_of: Mapping[str, Sequence[str]],
    exported_at: float | None = None,
) -> Path:
    """Record ``files`` in ``directory/manifest.jsonl`` and return its path.

    ``lineage_of`` maps a session id to the lineage ids its file covers (a file holding
    sessions not in it lists its own session ids).
    """
    moment = time.time() if exported_at is None else exported_at
    fresh = []
    for exported in files:
        lineage: list[str] = []
        for session_id in exported.session_ids:
            lineage.extend(lineage_of.get(session_id, (session_id,)))
        fresh.append(
            manifest_entry(
                directory,
                exported,
                format_name=format_name,
                lineage_ids=list(dict.fromkeys(lineage)),
                exported_at=moment,
            )
        )
    rewritten = {entry["path"] for entry in fresh}
    kept = [entry for entry in read_manifest(directory) if entry["path"] not in rewritten]
    target = directory / MANIFEST_NAME
    with AtomicFile(target) as out:
        for entry in [*kept, *fresh]:
            out.write(json.dumps(entry, sort_keys=True, ensure_ascii=False).encode() + b"\n")
    return target
