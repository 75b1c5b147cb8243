"""The two handles a file for the user is written through.

:class:`AtomicFile` writes a temporary file beside its target (``.NAME.xxxx.partial``, created
0600), then flushes and fsyncs it, renames it over the target and fsyncs the folder: a crash
leaves the old file or the new one, never half of one. :class:`WriteThroughFile` writes an
existing device, FIFO or inherited descriptor in place: nothing is created or renamed.

Both are binary files for a ``with`` block, and both keep one promise when anything fails — a
write, the final flush or fsync (a full disk), the rename, or an exception inside the block:
the handle is closed without writing what it still holds, an atomic file's temporary file is
removed and its target left as it was, and a failure of the disk is raised as
:class:`OutputError` naming the target. A handle that failed once never completes afterwards.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, ClassVar

from .errors import OutputError, cannot_write

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer


class OutputFile(io.BufferedWriter):
    """What both handles share: failures named after the target, a failure that sticks, and
    ``with`` (an exception in the block abandons the file)."""

    replaces_target: ClassVar[bool]
    """True when completing renames a new file over the target (its folder is then fsynced)."""

    def __init__(
        self,
        raw: io.RawIOBase,
        target: Path,
        on_complete: Callable[[OutputFile], None] | None = None,
    ) -> None:
        super().__init__(raw)
        self.target = target
        self._on_complete = on_complete
        self._abandoned = False
        self._failure: OutputError | None = None

    def write(self, buffer: ReadableBuffer, /) -> int:
        if self._failure is not None:
            raise self._failure
        try:
            return super().write(buffer)
        except OSError as error:
            self._failure = self._named(error)
            raise self._failure from error

    def flush(self) -> None:
        if self._failure is not None:
            raise self._failure
        try:
            super().flush()
        except OSError as error:
            self._failure = self._named(error)
            raise self._failure from error

    def discard(self) -> None:
        """Close without completing: the target is left as it was (a device keeps what it got)."""
        self._abandoned = True
        self.close()

    def close(self) -> None:
        if self.closed:
            return
        if self._abandoned or self._failure is not None:
            self._abandon()
            if self._failure is not None and not self._abandoned:
                raise self._failure  # closed as if all went well: say it did not
            return
        try:
            self._complete()
        except BaseException as error:
            self._abandon()
            if isinstance(error, OSError):
                raise self._named(error) from error
            raise
        if self._on_complete is not None:
            self._on_complete(self)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            self._abandoned = True
        self.close()

    def __del__(self) -> None:
        # A handle nobody closed was abandoned half-way: it must not complete.
        try:
            closed = self.closed
        except ValueError:
            return  # never opened: the constructor raised before the buffer existed
        if not closed:
            self._abandoned = True
            self.close()

    def _named(self, error: OSError) -> OutputError:
        return cannot_write(self.target, error, target_untouched=self.replaces_target)

    def _abandon(self) -> None:
        """Close the descriptor without writing what is buffered (closing the raw file first
        makes the buffer's own close a no-op: a second flush on a full disk would fail again
        and skip the clean-up)."""
        with contextlib.suppress(OSError):
            self.raw.close()

    def _complete(self) -> None:
        """Write what is buffered and make it final; raises when that fails."""
        raise NotImplementedError


class AtomicFile(OutputFile):
    """A file that appears under its name only once it is complete and on disk.

    ``durable=False`` skips the fsyncs (a file the project can lose, like a terminal's crumb:
    still atomic, never half-written). ``sync_directory=False`` leaves the folder's fsync to
    the caller (an export fsyncs each folder once, not once per file).
    """

    replaces_target = True

    def __init__(
        self,
        target: Path,
        *,
        durable: bool = True,
        sync_directory: bool = True,
        on_complete: Callable[[OutputFile], None] | None = None,
    ) -> None:
        try:
            descriptor, temporary = tempfile.mkstemp(
                prefix=f".{target.name}.", suffix=".partial", dir=target.parent
            )  # mkstemp creates the file 0600
        except OSError as error:
            raise cannot_write(target, error, target_untouched=True) from error
        self._temporary = Path(temporary)
        self._durable = durable
        self._sync_directory = durable and sync_directory
        super().__init__(io.FileIO(descriptor, "wb"), target, on_complete)

    def _complete(self) -> None:
        io.BufferedWriter.flush(self)
        if self._durable:
            os.fsync(self.fileno())
        io.BufferedWriter.close(self)
        os.replace(self._temporary, self.target)
        if self._sync_directory:
            fsync_directory(self.target.parent)

    def _abandon(self) -> None:
        super()._abandon()
        with contextlib.suppress(OSError):
            self._temporary.unlink(missing_ok=True)


class WriteThroughFile(OutputFile):
    """An open descriptor of a device, FIFO or pipe, written in place and closed at the end."""

    replaces_target = False

    def __init__(
        self,
        target: Path,
        descriptor: int,
        *,
        on_complete: Callable[[OutputFile], None] | None = None,
    ) -> None:
        super().__init__(io.FileIO(descriptor, "wb"), target, on_complete)

    def _complete(self) -> None:
        io.BufferedWriter.flush(self)
        io.BufferedWriter.close(self)


def fsync_directory(directory: Path) -> None:
    """Make the renames in ``directory`` durable, where the file system allows it."""
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
