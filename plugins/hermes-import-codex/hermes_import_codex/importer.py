"""The ``codex`` importer: Codex CLI rollouts (``~/.codex/sessions``) as Hermes sessions."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from hermes_hookspecs import ImportCandidate, ImportedSession

from . import discovery, records
from .reader import read_rollout

SNIFF_BYTES = 64 * 1024
_ENVELOPE_MARKERS = tuple(f'"type":"{kind}"'.encode() for kind in records.ENVELOPE_KINDS)


class CodexImporter:
    """Reads Codex CLI rollouts, envelope (Sept 2025 on) and bare (earlier) formats alike.

    A pure reader: it opens files read-only and yields what it finds; the core stores it.
    """

    name = "codex"
    label = "Codex CLI"

    def discover(self, env: Mapping[str, str]) -> Iterable[ImportCandidate]:
        """The rollouts under ``$CODEX_HOME/sessions`` (else ``~/.codex/sessions``).

        One ``stat`` per file, nothing opened: the id and times come from the file name and
        the modification time. :meth:`describe` adds what the picker shows.
        """
        for path in discovery.rollout_files(discovery.sessions_root(env)):
            found = discovery.listed(path, self.name)
            if found is not None:
                yield found

    def describe(self, candidate: ImportCandidate) -> ImportCandidate:
        """``candidate`` with its title, cwd and turn count, from the first 64 KiB of the file.

        Optional for importers: the import picker calls it on the candidates it lists;
        ``--all`` never does.
        """
        return discovery.described(candidate)

    def sniff(self, path: Path) -> bool:
        """True for a ``rollout-*.jsonl`` name, or a first line in either rollout format."""
        if discovery.is_rollout_name(path.name):
            return True
        try:
            with path.open("rb") as handle:
                head = handle.read(SNIFF_BYTES)
        except OSError:
            return False
        first = head.lstrip().split(b"\n", 1)[0]
        try:
            record = json.loads(first)
        except ValueError:
            # A header longer than the sniffed bytes: judge by its opening.
            compact = first.replace(b" ", b"")
            return (
                b'"payload"' in compact
                and compact.startswith(b"{")
                and any(marker in compact for marker in _ENVELOPE_MARKERS)
            )
        if not isinstance(record, dict):
            return False
        if "payload" in record:
            return record.get("type") in records.ENVELOPE_KINDS
        # The bare format's header: an id and a time, none of Claude Code's record fields.
        return (
            isinstance(record.get("id"), str)
            and "timestamp" in record
            and "type" not in record
            and "sessionId" not in record
        )

    def read(self, path: Path, resume_from: str | None = None) -> Iterator[ImportedSession]:
        """Stream the session in ``path`` from the start, or after ``resume_from``.

        Yields nothing when the file holds no conversation (empty, or only headers and
        instructions). See :func:`hermes_import_codex.reader.read_rollout`.
        """
        return read_rollout(path, resume_from)
