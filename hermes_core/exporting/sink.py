"""Where exporters write: files created 0600 and replaced atomically, devices written in
place, or stdout.

An exporter never opens files itself; it asks the :class:`FileSink` the core hands it
(``ExportSink`` in the contract). A file is written to a temporary file in the same directory
(created 0600), flushed and fsynced, then renamed over its target, and the directory is fsynced
(by the sink once per folder when the export ends): a crash leaves either the old file or the
new one, never half of one. One named OUTPUT that is not a regular file (``/dev/null``, a FIFO,
``/dev/stdout``, a process substitution's ``/dev/fd/63``) is written in place instead
(:func:`hermes_core.files.open_output` decides). A file whose ``with`` block raises, or whose
writing fails (a full disk), is thrown away: its temporary file is removed, the target is left
as it was, and the failure is an :class:`~hermes_core.files.OutputError` naming the file.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO, Literal, cast

from hermes_core.files import (
    AtomicFile,
    OutputFile,
    fsync_directory,
    open_output,
    unsafe_name_reason,
)
from hermes_core.files.errors import cannot_write
from hermes_core.store.connection import held_store_file

from .errors import ExportError

SinkMode = Literal["stdout", "file", "directory"]


class _StreamRaw(io.RawIOBase):
    """Forwards bytes to a binary stream it does not own (stdout)."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def writable(self) -> bool:
        return True

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        self._stream.write(bytes(data))
        return len(data)

    def flush(self) -> None:
        self._stream.flush()

    def close(self) -> None:
        # Closing an exporter's handle must not close the process's stdout.
        if not self.closed:
            self._stream.flush()
        super().close()


def _stdout_binary() -> BinaryIO:
    return sys.stdout.buffer


class FileSink:
    """The core's ``ExportSink``: stdout, one named file, or a directory of files.

    ``mode`` ``file``: every ``open_binary`` call opens ``destination`` itself (the name is the
    exporter's choice for a directory layout and is ignored), and only one file may be opened.
    ``mode`` ``directory``: ``open_binary(name)`` opens ``destination/name``; a name that is
    absolute, climbs with ``..`` or holds a NUL is refused. ``files_written`` counts the files
    completed so far and ``last_written`` names the latest (a count, not a list: an export of
    many sessions must not grow with them).
    """

    def __init__(self, mode: SinkMode, destination: Path | None = None) -> None:
        if mode != "stdout" and destination is None:
            raise ValueError(f"a {mode} sink needs a destination")
        self.mode: SinkMode = mode
        self._destination = destination
        self.files_written = 0
        self.last_written: Path | None = None
        self.pending_folders: set[Path] = set()

    @property
    def destination(self) -> Path | None:
        """The file or directory being written, or None for stdout."""
        return self._destination

    def finish(self) -> None:
        """Make the renames of every completed file durable (one fsync per folder written)."""
        for folder in sorted(self.pending_folders):
            fsync_directory(folder)
        self.pending_folders.clear()

    def open_binary(self, relative_name: str) -> BinaryIO:
        """A file under the export destination (or stdout for ``-``), opened for writing.

        Raises :class:`~hermes_core.files.OutputError` (an ``OSError``) when it cannot be
        opened, as its writes and its close do when the disk fails.
        """
        if self.mode == "stdout":
            return io.BufferedWriter(cast(Any, _StreamRaw(_stdout_binary())))
        assert self._destination is not None
        if self.mode == "file":
            if self.files_written:
                raise ExportError(
                    f"{self._destination} is one file but this export writes several; "
                    "give a directory as OUTPUT"
                )
            target = self._destination
        else:
            target = self._destination / checked_relative_name(relative_name)
        if held_store_file(target):
            # Renamed over, the store (or its write-ahead log) would be gone under every
            # process that has it open, this one included.
            raise ExportError(
                f"{target} is a file of the session store in use; "
                "writing over it would destroy the store: give another OUTPUT"
            )
        try:
            # Folders the export creates hold transcripts: private like the files.
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as error:
            raise cannot_write(target, error, target_untouched=True) from error
        if self.mode == "file":  # the OUTPUT the user named: it may be a device or a FIFO
            return open_output(target, sync_directory=False, on_complete=self._completed)
        return AtomicFile(target, sync_directory=False, on_complete=self._completed)

    def _completed(self, handle: OutputFile) -> None:
        """Count a file once it is complete; its folder is fsynced in :meth:`finish`."""
        self.files_written += 1
        self.last_written = handle.target
        if handle.replaces_target:
            self.pending_folders.add(handle.target.parent)


def checked_relative_name(name: str) -> Path:
    """``name`` as a path inside a destination directory; refuses anything that could leave it
    (the rule of :func:`hermes_core.files.path_inside`)."""
    why = unsafe_name_reason(name)
    if why is not None:
        raise ExportError(f"an exporter asked for an unsafe file name: {name!r} ({why})")
    return Path(*PurePosixPath(name).parts)
