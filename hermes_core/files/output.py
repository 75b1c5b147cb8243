"""Opening a file the user named: replaced atomically, or written in place (DESIGN §9).

A regular file or a new path is replaced atomically (:class:`AtomicFile`). Anything else that
exists — a terminal, ``/dev/null``, a FIFO, the pipe of a process substitution
(``>(gzip)``, i.e. ``/dev/fd/63``) — is written in place (:class:`WriteThroughFile`): never
created, renamed over or chmod'ed, so ``hermes … /dev/null`` run as root leaves ``/dev/null`` a
device. A descriptor of this process named by path (``/dev/stdout``, ``/dev/fd/N``,
``/proc/self/fd/N``) is duplicated rather than opened again, so the shell's redirection holds as
the shell set it up (``>> log`` appends, it does not overwrite from the start). A directory, a
block device (a disk) and a socket are refused.

``-`` is not a path here: a command that takes it for stdout sends it there itself.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from .errors import cannot_write, refused
from .handles import AtomicFile, OutputFile, WriteThroughFile

OutputKind = Literal["replace", "through"]
"""``replace``: a temporary file renamed over the target; ``through``: written in place."""

_MAX_LINKS = 40  # as the kernel's own limit on a chain of symbolic links


def _descriptor_folders() -> re.Pattern[str]:
    """Folders whose entries are this process's descriptors, once symbolic links are resolved
    (``/proc/self/fd`` resolves to ``/proc/<pid>/fd``, ``/proc/thread-self/fd`` to
    ``/proc/<pid>/task/<tid>/fd``; ``/dev/fd`` is its own folder where it is not a link)."""
    return re.compile(rf"/proc/{os.getpid()}(?:/task/\d+)?/fd|/dev/fd")


def own_descriptor(path: Path) -> int | None:
    """The descriptor of this process that ``path`` names (``/dev/stdout`` → 1, ``/dev/fd/63``
    → 63), or None when it names none. Symbolic links are followed one at a time, so a link to
    ``/dev/stdout`` counts too."""
    folders = _descriptor_folders()
    current = os.path.abspath(path)
    for _ in range(_MAX_LINKS):
        folder, name = os.path.split(current)
        folder = os.path.realpath(folder)
        if name.isdigit() and folders.fullmatch(folder):
            return int(name)
        try:
            link = os.readlink(os.path.join(folder, name))
        except OSError:
            return None  # not a link: a file, a device, or nothing at all
        current = os.path.normpath(os.path.join(folder, link))
    return None


def output_kind(path: Path) -> OutputKind:
    """How ``path`` is written: ``replace`` for a regular file or a new path, ``through`` for
    an existing character device, FIFO or descriptor of this process.

    Raises :class:`OutputError` for a directory, a block device or a socket.
    """
    if own_descriptor(path) is not None:
        return "through"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "replace"
    except OSError:
        return "replace"  # a folder that cannot be read: creating the file says why in one line
    if stat.S_ISREG(mode):
        return "replace"
    if stat.S_ISDIR(mode):
        raise refused(path, "it is a directory; name a file")
    if stat.S_ISBLK(mode):
        raise refused(path, "it is a block device (a disk); Hermes does not write onto disks")
    if stat.S_ISSOCK(mode):
        raise refused(path, "it is a socket, which cannot be opened as a file")
    return "through"


def open_output(
    path: Path,
    *,
    durable: bool = True,
    sync_directory: bool = True,
    on_complete: Callable[[OutputFile], None] | None = None,
) -> OutputFile:
    """``path`` opened for writing, as :func:`output_kind` decides.

    ``durable`` and ``sync_directory`` apply to an atomic replace (see :class:`AtomicFile`);
    ``on_complete`` is called with the handle once the file is complete. Raises
    :class:`OutputError` when the file cannot be opened. Opening a FIFO waits for its reader.
    """
    number = own_descriptor(path)
    try:
        if number is not None:
            return WriteThroughFile(path, os.dup(number), on_complete=on_complete)
        if output_kind(path) == "through":
            descriptor = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
            return WriteThroughFile(path, descriptor, on_complete=on_complete)
    except OSError as error:
        raise cannot_write(path, error, target_untouched=True) from error
    return AtomicFile(path, durable=durable, sync_directory=sync_directory, on_complete=on_complete)


def writes_to_standard_output(path: Path) -> bool:
    """Whether writing ``path`` lands where this process's stdout goes (``/dev/stdout``,
    ``/dev/fd/1``, the very terminal or pipe stdout is): messages then belong on stderr."""
    if own_descriptor(path) == 1:
        return True
    try:
        if output_kind(path) != "through":
            return False
        named, standard = os.stat(path), os.fstat(1)
    except (OSError, ValueError):
        return False
    return (named.st_dev, named.st_ino) == (standard.st_dev, standard.st_ino)
