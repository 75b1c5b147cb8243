"""Files Hermes writes: exports, reports and snapshots for the user, and its own small files.

One rule for all of them (DESIGN §9): a regular file or a new path is replaced atomically — a
temporary file beside it, fsynced, renamed over it — and a device, a FIFO or a descriptor such
as ``/dev/stdout`` is written in place, never replaced. Whatever fails, the temporary file is
removed and the failure is one :class:`OutputError` line naming the file (``cannot write
out.jsonl: the disk is full; nothing was written``).

- :mod:`.output` decides how a path is written and opens it (:func:`open_output`);
- :mod:`.handles` holds the two handles (:class:`AtomicFile`, :class:`WriteThroughFile`);
- :mod:`.errors` words the failures;
- :mod:`.names` makes file names from stored text and keeps paths inside their folder.
"""

from __future__ import annotations

from .errors import OutputError
from .handles import AtomicFile, OutputFile, WriteThroughFile, fsync_directory
from .names import path_inside, safe_file_stem, unsafe_name_reason
from .output import OutputKind, open_output, output_kind, own_descriptor, writes_to_standard_output

__all__ = [
    "AtomicFile",
    "OutputError",
    "OutputFile",
    "OutputKind",
    "WriteThroughFile",
    "fsync_directory",
    "open_output",
    "output_kind",
    "own_descriptor",
    "path_inside",
    "safe_file_stem",
    "unsafe_name_reason",
    "writes_to_standard_output",
]
