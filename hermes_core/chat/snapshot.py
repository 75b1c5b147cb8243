"""``/save``: a convenience snapshot of a session as JSON in ``$HERMES_HOME/sessions/saved/``
(SPEC R4). Snapshots are written for people and other tools; Hermes never reads them back —
the store stays the only index."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_core.store.protocol import Store

SAVED_DIR = Path("sessions") / "saved"
SNAPSHOT_FORMAT = "hermes-session-snapshot/1"


def snapshot_path(home: Path, session_id: str) -> Path:
    """Where ``/save`` writes the snapshot of ``session_id``."""
    return home / SAVED_DIR / f"{session_id}.json"


def snapshot_document(store: Store, session_id: str) -> dict[str, Any]:
    """The snapshot's content: the session's row and every message, oldest first."""
    session = store.get_session(session_id)
    return {
        "format": SNAPSHOT_FORMAT,
        "saved_at": time.time(),
        "session": dataclasses.asdict(session),
        "messages": [dataclasses.asdict(message) for message in store.iter_messages(session_id)],
    }


def save_snapshot(store: Store, home: Path, session_id: str) -> Path:
    """Write the snapshot of ``session_id`` atomically (a temporary file renamed over the
    old snapshot: a crash leaves the previous one or the new one, never half of one)."""
    path = snapshot_path(home, session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = snapshot_document(store, session_id)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("w", encoding="utf-8") as handle:
            json.dump(document, handle, ensure_ascii=False, indent=2)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    return path
