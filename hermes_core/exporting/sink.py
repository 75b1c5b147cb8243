"""Where exporters write: files created 0600 and replaced atomically, or stdout.

An exporter never opens files itself; it asks the :class:`FileSink` the core hands it
(``ExportSink`` in the contract). Every file is written to a temporary file in the same
directory (created 0600), flushed and fsynced, then renamed over its target, and the directory
is fsynced (by the sink once per folder when the export ends): a crash leaves either the old
file or the new one, never half of one. A file whose ``with`` block raises is thrown away.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import Any, BinaryIO, Literal, cast

from hermes_core.store.connection import held_store_file

from .errors import ExportError

SinkMode = Literal["stdout", "file", "directory"]


class AtomicFile(io.BufferedWriter):
    """A file that appears under its name only once it is complete and on disk."""

    def __init__(self, target: Path, *, sync_directory: bool = True) -> None:
        self.target = target
        self._sync_directory = sync_directory
        descriptor, temporary = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".partial", dir=target.parent
        )  # mkstemp creates the file 0600
        self._temporary = Path(temporary)
        self._discard = False
        super().__init__(io.FileIO(descriptor, "wb"))

    def discard(self) -> None:
        """Drop what was written: the target is left as it was."""
        self._discard = True
        self.close()

    def close(self) -> None:
        if self.closed:
            return
        try:
            if not self._discard:
                self.flush()
                os.fsync(self.fileno())
        except BaseException:
            self._discard = True
            raise
        finally:
            super().close()
            if self._discard:
                self._temporary.unlink(missing_ok=True)
        if self._discard:
            return
        os.replace(self._temporary, self.target)
        if self._sync_directory:
            _fsync_directory(self.target.parent)

    def __del__(self) -> None:
        # A handle nobody closed was abandoned half-way: never let it replace the target.
        if not self.closed:
            self._discard = True
            self.close()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            self._discard = True
        self.close()


def _fsync_directory(directory: Path) -> None:
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass  # some filesystems cannot fsync a directory; the rename is still atomic
    finally:
        os.close(descriptor)


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
            _fsync_directory(folder)
        self.pending_folders.clear()

    def open_binary(self, relative_name: str) -> BinaryIO:
        """A file under the export destination (or stdout for ``-``), opened for writing."""
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
            handle = _RecordingAtomicFile(target, self)
        except OSError as error:
            raise ExportError(f"cannot write {target}: {error.strerror or error}") from error
        return handle


class _RecordingAtomicFile(AtomicFile):
    def __init__(self, target: Path, sink: FileSink) -> None:
        # The sink fsyncs each folder once in finish(), not once per file.
        super().__init__(target, sync_directory=False)
        self._sink = sink

    def close(self) -> None:
        already = self.closed
        discarded = self._discard
        super().close()
        if not already and not discarded:
            self._sink.files_written += 1
            self._sink.last_written = self.target
            self._sink.pending_folders.add(self.target.parent)


def checked_relative_name(name: str) -> Path:
    """``name`` as a path inside a destination directory; refuses anything that could leave it."""
    if not name or "\x00" in name or "\\" in name:
        raise ExportError(f"an exporter asked for an unsafe file name: {name!r}")
    pure = PurePosixPath(name)
    if pure.is_absolute() or any(part in {"..", ""} for part in pure.parts):
        raise ExportError(f"an exporter asked for an unsafe file name: {name!r}")
    return Path(*pure.parts)
