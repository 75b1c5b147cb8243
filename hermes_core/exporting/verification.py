"""Checking that exported files are on disk exactly as the exporter reported them."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from hermes_hookspecs import ExportedFile

from .errors import ExportError

_CHUNK = 1 << 20


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def verify_files(files: Sequence[ExportedFile]) -> None:
    """Re-read every file and compare its SHA-256 with the reported one.

    Raises :class:`ExportError` naming the first file that is missing, unreadable or changed.
    """
    for exported in files:
        try:
            actual = file_sha256(exported.path)
        except OSError as error:
            raise ExportError(
                f"cannot re-read {exported.path} to verify it: {error.strerror or error}"
            ) from error
        if actual != exported.sha256:
            raise ExportError(
                f"{exported.path} does not match what was exported (SHA-256 {actual[:12]}… "
                f"instead of {exported.sha256[:12]}…)"
            )


def verify_coverage(
    files: Sequence[ExportedFile], expected_messages: dict[str, int]
) -> dict[str, ExportedFile]:
    """Each expected session → the file holding it alone, with every one of its messages.

    Raises :class:`ExportError` when a session has no file of its own or its file reports a
    different message count than the store holds.
    """
    by_session: dict[str, ExportedFile] = {}
    for exported in files:
        if len(exported.session_ids) == 1:
            by_session[exported.session_ids[0]] = exported
    for session_id, count in expected_messages.items():
        found = by_session.get(session_id)
        if found is None:
            raise ExportError(f"session {session_id} was not written to a file of its own")
        if found.message_count != count:
            raise ExportError(
                f"{found.path} holds {found.message_count} message(s) of session {session_id}, "
                f"the store has {count}"
            )
    return by_session
