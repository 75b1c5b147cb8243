"""Where an export goes: stdout, one file, or a directory of files (DESIGN §2 Exporter).

The layout follows from OUTPUT, the format's traits and the selection: ``-`` is stdout; a
one-file-per-session format writes into a directory (default ``$HERMES_HOME/session-exports``)
unless one session goes to a named file; the other formats write one file (a directory given
as OUTPUT gets a file named by the exporter). ``--only user-prompts`` always writes one file.
An OUTPUT that is written in place (``/dev/null``, a FIFO, ``/dev/stdout``, ``/dev/fd/63``)
is one file: one session of any format may go there, several sessions of a
one-file-per-session format may not.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hermes_core.files import OutputError, output_kind, writes_to_standard_output

from .errors import ExportError
from .formats import ExporterTraits
from .request import EXPORTS_FOLDER
from .sink import FileSink, SinkMode


@dataclass(frozen=True, slots=True)
class ExportLayout:
    """The sink mode and destination of one export."""

    mode: SinkMode
    destination: Path | None
    temporary: bool = False
    """An ``--upload`` without OUTPUT: the files go to a private temporary folder that the
    exporter uploads from and the engine removes afterwards (``destination`` is set then)."""

    def sink(self) -> FileSink:
        """A fresh sink for this layout."""
        return FileSink(self.mode, self.destination)

    @property
    def messages_to_stderr(self) -> bool:
        """The export goes where stdout goes (``-``, ``/dev/stdout``): messages must not mix
        into it."""
        if self.mode == "stdout":
            return True
        return (
            self.mode == "file"
            and self.destination is not None
            and writes_to_standard_output(self.destination)
        )

    def describe(self) -> str:
        """Where the export goes, for messages."""
        if self.temporary:
            return "the upload"
        return "stdout" if self.destination is None else str(self.destination)

    @contextlib.contextmanager
    def opened(self) -> Iterator[ExportLayout]:
        """This layout, with its temporary folder created for the export and removed after."""
        if not self.temporary:
            yield self
            return
        folder = Path(tempfile.mkdtemp(prefix="hermes-upload-"))  # created 0700
        try:
            yield ExportLayout("directory", folder, temporary=True)
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def _names_directory(output: str) -> bool:
    return output.endswith(("/", os.sep)) or Path(output).expanduser().is_dir()


def _written_in_place(path: Path) -> bool:
    """``path`` is a device, a FIFO or a descriptor (never replaced: see hermes_core.files)."""
    try:
        return output_kind(path) == "through"
    except OutputError as error:  # a block device or a socket
        raise ExportError(str(error)) from None


def choose_layout(
    output: str | None,
    *,
    home: Path,
    traits: ExporterTraits,
    single_session: bool,
    user_prompts_only: bool,
    separate_files: bool,
    upload: bool = False,
) -> ExportLayout:
    """The layout for OUTPUT; ``separate_files`` (``--delete-after-verified``) forces a
    directory so every session gets a file of its own; ``upload`` without OUTPUT writes to a
    temporary folder."""
    per_session = traits.one_file_per_session and not user_prompts_only
    if upload and output is None:
        return ExportLayout("directory", None, temporary=True)
    if upload and output == "-":
        raise ExportError("--upload writes files to send; give a file or directory, not -")
    if separate_files:
        if output == "-":
            raise ExportError("--delete-after-verified writes files to verify, not to stdout")
        folder = Path(output).expanduser() if output else home / EXPORTS_FOLDER
        if folder.exists() and not folder.is_dir():
            raise ExportError(
                f"{folder} is not a directory; --delete-after-verified needs one for its files"
            )
        return ExportLayout("directory", folder)
    if output == "-":
        if per_session and not single_session:
            raise ExportError(
                "several sessions make several files, which cannot go to stdout; give a "
                "directory as OUTPUT (or select one session with --session-id)"
            )
        return ExportLayout("stdout", None)
    if output is None:
        if single_session and traits.stdout_for_single_session:
            return ExportLayout("stdout", None)
        if per_session:
            return ExportLayout("directory", home / EXPORTS_FOLDER)
        raise ExportError("give OUTPUT: a file to write, a directory, or - for stdout")
    path = Path(output).expanduser()
    if _names_directory(output):
        return ExportLayout("directory", path)
    if _written_in_place(path):
        if per_session and not single_session:
            raise ExportError(
                f"several sessions make several files, which cannot all go to {path}; give a "
                "directory as OUTPUT (or select one session with --session-id)"
            )
        return ExportLayout("file", path)
    if per_session and not (single_session and path.suffix):
        if path.exists():
            raise ExportError(
                f"{path} is a file, but this export writes a file per session: give a directory"
            )
        return ExportLayout("directory", path)
    if path.parent.exists() and not path.parent.is_dir():
        raise ExportError(f"cannot write {path}: {path.parent} is not a directory")
    return ExportLayout("file", path)
