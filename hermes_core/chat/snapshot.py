"""``/save``: a convenience snapshot of a session as JSON in ``$HERMES_HOME/sessions/saved/``
(SPEC R4). Snapshots are written for people and other tools; Hermes never reads them back —
the store stays the only index."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_core.store.protocol import Store

SAVED_DIR = Path("sessions") / "saved"
SNAPSHOT_FORMAT = "hermes-session-snapshot/1"


def snapshot_path(home: Path, session_id: str) -> Path:
    """Where ``/save`` writes the snapshot of ``session_id``: ``<id>.json`` in the saved
    folder. An id that is not a plain name (a store made before ids were checked may hold
    ``../../x``) is made one (:func:`~hermes_core.files.safe_file_stem`): the snapshot always
    lands in the folder, and its content keeps the id exactly."""
    from hermes_core.files import path_inside, safe_file_stem

    return path_inside(home / SAVED_DIR, safe_file_stem(session_id) + ".json")


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
    """Write the snapshot of ``session_id`` atomically, mode 0600 (a temporary file renamed
    over the old snapshot: a crash leaves the previous one or the new one, never half of one).

    Raises :class:`~hermes_core.files.OutputError` when it cannot be written (a full disk);
    the temporary file is gone then and the previous snapshot is as it was.
    """
    from hermes_core.files import AtomicFile
    from hermes_core.files.errors import cannot_write

    path = snapshot_path(home, session_id)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise cannot_write(path, error, target_untouched=True) from error
    document = snapshot_document(store, session_id)
    text = json.dumps(document, ensure_ascii=False, indent=2)
    with AtomicFile(path) as out:
        out.write(text.encode("utf-8"))
    return path
