"""What earlier runs of a batch file already answered, so a re-run does not repeat them.

Every batch session carries ``metadata["batch"]``: the file's absolute path, the prompt's
key (see :class:`~.prompts.BatchPrompt`), its line and its ``id``. A session whose turn
succeeded is ended with :data:`DONE_REASON`, one whose turn failed with
:data:`FAILED_REASON`. A prompt is *answered* when a batch session of the same file and key
was ended with :data:`DONE_REASON`; only those count (a failed prompt runs again).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .prompts import BatchPrompt

if TYPE_CHECKING:
    from hermes_core.store.protocol import Store

BATCH_SOURCE = "batch"
DONE_REASON = "batch_done"
FAILED_REASON = "batch_failed"
METADATA_KEY = "batch"


def batch_file_name(path: Path) -> str:
    """How sessions name their batch file: its absolute, resolved path."""
    return str(path.expanduser().resolve())


def batch_metadata(path: Path, prompt: BatchPrompt) -> dict[str, Any]:
    """The ``metadata`` of the session that runs ``prompt`` of ``path``."""
    return {
        METADATA_KEY: {
            "file": batch_file_name(path),
            "key": prompt.key,
            "line": prompt.line,
            "id": prompt.item_id,
        }
    }


def answered_prompts(store: Store, path: Path) -> dict[str, str]:
    """The keys of ``path``'s prompts that a batch session answered, each with the newest such
    session's id."""
    from hermes_core.selection.filters import SessionFilter

    wanted = batch_file_name(path)
    found: dict[str, str] = {}
    selection = SessionFilter(source=BATCH_SOURCE, end_reason=DONE_REASON)
    for session in store.iter_selected(selection, newest_first=True):
        about = session.metadata.get(METADATA_KEY)
        if not isinstance(about, dict) or about.get("file") != wanted:
            continue
        key = about.get("key")
        if isinstance(key, str) and key not in found:
            found[key] = session.id
    return found
