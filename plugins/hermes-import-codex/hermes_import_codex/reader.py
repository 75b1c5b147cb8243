"""Streaming a rollout file into an :class:`ImportedSession`, line by line, read-only.

The cursor is the byte offset just after the last complete line read, so a rollout that
grows (Codex appends while a session runs) resumes where the previous import stopped. When
the session has used tokens, the cursor also carries the cumulative totals at that point
(``"<offset>:<input>:<output>"``, with ``:<cached input>`` once any input was cached) so a
resumed read reports only the tokens it adds. Codex's input includes its cached input; the
session's input leaves it out, and the cached input is its cache reads.

The last prompt and its answer may still be growing (Codex writes the answer as it works):
the cursor then points at the line that began that prompt, with the totals there and the
totals already reported (``"<offset>:<input>:<output>:<reported input>:<reported
output>"``, or the seven numbers of both with their cached input), and the session's ``open_tail`` says how many of its messages the next read
yields again — which the core replaces instead of appending twice.

A line that is not JSON, not an object, or not UTF-8 is skipped and counted in
``warnings``; an unterminated last line that does not parse is a write in progress: it is
counted, left unread, and the cursor stays before it.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from hermes_hookspecs import ImportedSession, Message

from . import records
from .records import TokenTotals
from .turns import ReadProgress, TurnAssembler

SOURCE = "codex-cli"
TITLE_PREFIX = "Imported from Codex CLI: "
TITLE_TEXT_LIMIT = 60
MALFORMED = "malformed line"
INVALID_UTF8 = "invalid UTF-8 line"
INCOMPLETE = "incomplete last line (left for the next import)"
IDENTITY_SCAN_BYTES = 4 * 1024 * 1024
"""On a resumed read, how far into the file to look for the thread's ``session_meta``."""


def parse_cursor(cursor: str | None) -> tuple[int, TokenTotals, TokenTotals]:
    """``(byte offset, (input, output, cached input) tokens at it, tokens reported already)``
    of a cursor this reader gave.

    Anything else (no cursor, or one this reader cannot have written) means the whole file,
    as in the Claude Code importer: a bare offset is taken as one.
    """
    none: TokenTotals = (0, 0, 0)
    try:
        parts = [int(part) for part in (cursor or "0").split(":")]
    except ValueError:
        return 0, none, none
    if min(parts) < 0:
        return 0, none, none
    offset, numbers = parts[0], parts[1:]
    if len(numbers) == 0:
        return offset, none, none
    if len(numbers) in (2, 3):  # totals, with or without their cached input
        totals = _totals(numbers)
        return offset, totals, totals
    if len(numbers) == 4:  # totals and reported, from before cached input was counted
        return offset, _totals(numbers[:2]), _totals(numbers[2:])
    if len(numbers) == 6:
        return offset, _totals(numbers[:3]), _totals(numbers[3:])
    return 0, none, none


def _totals(numbers: list[int]) -> TokenTotals:
    cached = numbers[2] if len(numbers) == 3 else 0
    return numbers[0], numbers[1], cached


def format_cursor(offset: int, tokens: TokenTotals, reported: TokenTotals | None = None) -> str:
    """The cursor for ``offset`` with the cumulative token totals at that point, and the
    totals reported already when they are more (the read starts again before its end)."""
    cached = bool(tokens[2] or (reported is not None and reported[2]))
    shown = tokens if cached else tokens[:2]
    if reported is not None and reported != tokens:
        both = (*shown, *(reported if cached else reported[:2]))
        return ":".join(str(number) for number in (offset, *both))
    if tokens == (0, 0, 0):
        return str(offset)
    return ":".join(str(number) for number in (offset, *shown))


def read_rollout(path: Path, resume_from: str | None = None) -> Iterator[ImportedSession]:
    """The session in the rollout at ``path`` (none when it holds no conversation).

    The file is opened read-only and stays open until the session's ``messages`` are
    exhausted (or the iterator is closed). ``cursor``, ``warnings``, ``ended_at`` and the
    token counts of the yielded session are final once ``messages`` is exhausted.
    """
    start, tokens_before, tokens_reported = parse_cursor(resume_from)
    handle = path.open("rb")
    handed_over = False
    try:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise IsADirectoryError(f"{path} is not a regular file")
        if start > status.st_size:
            return  # the file shrank: it is not the file the cursor belongs to
        file_uuid, named_start = records.file_identity(path)
        progress = ReadProgress(file_uuid=file_uuid, tokens_current=tokens_before, offset=start)
        assembler = TurnAssembler(progress)
        if start:
            _learn_identity(handle, assembler, start)
        messages = _messages(handle, assembler)
        first = next(messages, None)
        if first is None:
            return
        title = progress.first_user_text if not start else None
        session = ImportedSession(
            foreign_id=progress.foreign_id or file_uuid or path.stem,
            source=SOURCE,
            messages=iter(()),
            title_hint=TITLE_PREFIX + records.one_line_title(title, TITLE_TEXT_LIMIT)
            if title
            else None,
            # A subagent's thread is a delegate of its parent's session. Only on a first read:
            # on a resumed one its turns go to the session the file was imported as.
            parent_foreign_id=progress.parent_thread_id if not start else None,
        )
        finish = _Finish(
            progress,
            tokens_reported,
            started=named_start if named_start is not None else status.st_mtime,
            mtime=status.st_mtime,
        )
        finish.apply(session)
        session.messages = _then_finish(first, messages, handle, session, finish)
        handed_over = True  # the messages iterator owns the file now
        yield session
    finally:
        if not handed_over:
            handle.close()


def _messages(handle: BinaryIO, assembler: TurnAssembler) -> Iterator[Message]:
    progress = assembler.progress
    handle.seek(progress.offset)
    offset = progress.offset
    for raw in handle:
        end = offset + len(raw)
        complete = raw.endswith(b"\n")
        offset = end
        body = raw.strip()
        if not body:
            if complete:
                progress.offset = end
            continue
        try:
            record = json.loads(body.decode("utf-8"))
        except ValueError as error:  # UnicodeDecodeError is a ValueError too
            if not complete:
                progress.warn(INCOMPLETE)
                break
            progress.warn(INVALID_UTF8 if isinstance(error, UnicodeDecodeError) else MALFORMED)
            progress.offset = end
            continue
        progress.offset = end
        if not isinstance(record, dict):
            progress.warn(MALFORMED)
            continue
        classified = records.classify(record)
        if classified is None:
            continue
        tokens_before = progress.tokens_total
        turns = assembler.turns_begun
        assembler.feed(*classified)
        ready = assembler.take()
        progress.emitted += len(ready)
        yield from ready
        if assembler.turns_begun != turns:  # this line began a new prompt
            progress.last_turn_offset = end - len(raw)
            progress.last_turn_tokens = tokens_before
            progress.last_turn_emitted = progress.emitted
    assembler.finish()
    ready = assembler.take()
    progress.emitted += len(ready)
    yield from ready


def _learn_identity(handle: BinaryIO, assembler: TurnAssembler, limit: int) -> None:
    """Read the head of the file (before ``limit``) for the thread's header and model."""
    handle.seek(0)
    scanned = 0
    for raw in handle:
        scanned += len(raw)
        if scanned > min(limit, IDENTITY_SCAN_BYTES):
            break
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        classified = records.classify(record) if isinstance(record, dict) else None
        if classified is None:
            continue
        kind, payload, timestamp = classified
        if kind == "session_meta":
            assembler.session_meta(payload, timestamp)
            if assembler.progress.meta_matched:
                break


class _Finish:
    """Copies what a read has learned onto the session it yielded."""

    def __init__(
        self, progress: ReadProgress, tokens_before: TokenTotals, started: float, mtime: float
    ) -> None:
        self.progress = progress
        self.tokens_before = tokens_before
        self.started = started
        """When nothing in the file says when it started: the name's time, else the mtime."""
        self.mtime = mtime

    def apply(self, session: ImportedSession) -> None:
        progress = self.progress
        total = progress.tokens_total
        before = self.tokens_before
        cached = max(0, total[2] - before[2])
        session.input_tokens = max(0, total[0] - before[0] - cached)
        session.output_tokens = max(0, total[1] - before[1])
        session.cache_read_tokens = cached
        session.cursor = format_cursor(progress.offset, total)
        open_tail = progress.emitted - progress.last_turn_emitted
        if progress.last_turn_offset is not None and open_tail > 0:
            session.cursor = format_cursor(
                progress.last_turn_offset, progress.last_turn_tokens, total
            )
            session.open_tail = open_tail
        else:
            session.open_tail = 0
        session.warnings = dict(progress.warnings)
        session.started_at = progress.started_at or progress.first_timestamp or self.started
        session.ended_at = progress.last_timestamp or self.mtime
        session.cwd = progress.cwd
        session.git_branch = progress.git_branch
        session.model = progress.model
        if progress.foreign_id:
            session.foreign_id = progress.foreign_id


def _then_finish(
    first: Message,
    rest: Iterator[Message],
    handle: BinaryIO,
    session: ImportedSession,
    finish: _Finish,
) -> Iterator[Message]:
    try:
        yield first
        yield from rest
        finish.apply(session)
    finally:
        handle.close()
