"""The one error of writing a file: :class:`OutputError`, whose text is the line a user sees.

It is an ``OSError`` (code that handles failures of the operating system keeps handling it) whose
``str()`` names the file, says why in words (``the disk is full``, not ``[Errno 28]``) and what
became of the file: left as it was, or written in part.
"""

from __future__ import annotations

import errno
from pathlib import Path

_REASONS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EIO: "the device reported an input/output error",
    errno.EROFS: "the file system is read-only",
    errno.EPIPE: "the reader closed it before the end",
}


class OutputError(OSError):
    """A file could not be written; ``str(error)`` is one line for the user.

    ``target`` is the file the user asked for (not the temporary file beside it) and ``errno``
    the operating system's code, or None when the refusal is Hermes's own (a directory, a disk).
    """

    def __init__(self, message: str, target: Path, code: int | None = None) -> None:
        super().__init__(message)
        self.errno = code
        self.target = target


def reason(error: OSError) -> str:
    """Why ``error`` happened, in words (the system's own text for the less common codes)."""
    if error.errno in _REASONS:
        return _REASONS[error.errno]
    return error.strerror or str(error)


def cannot_write(target: Path, error: OSError, *, target_untouched: bool) -> OutputError:
    """The :class:`OutputError` for ``error`` while writing ``target``.

    ``target_untouched``: the target is as it was before (an atomic replace that failed, or a
    file that could not be opened), else some bytes may have reached it (a device or a FIFO
    written in place).
    """
    if isinstance(error, OutputError):
        return error
    outcome = "nothing was written" if target_untouched else "what was written is incomplete"
    return OutputError(f"cannot write {target}: {reason(error)}; {outcome}", target, error.errno)


def refused(target: Path, why: str) -> OutputError:
    """Hermes's own refusal to write ``target`` (``why`` says what it is)."""
    return OutputError(f"cannot write {target}: {why}", target)
