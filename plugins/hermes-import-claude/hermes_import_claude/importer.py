"""The ``claude`` importer: Claude Code transcripts → imported sessions.

``read`` yields the session of the file first, then its subagents as delegate children
(``parent_foreign_id`` set): inline sidechain records of the file (Claude Code 1.0), sibling
``agent-*.jsonl`` files naming the session (2.0), and ``<session-id>/subagents/`` (2.1). The
session's fields (title, times, usage, cursor, warnings) are complete once its ``messages``
are exhausted; the core reads them then.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from hermes_hookspecs import ImportCandidate, ImportedSession, Message

from .discovery import (
    HEAD_BYTES,
    agent_meta,
    count_prompts,
    first_records,
    first_session_id,
    is_agent_file,
    is_orphaned_subagent_file,
    looks_like_claude,
    orphaned_subagent_files,
    projects_root,
    session_files,
    subagent_files,
)
from .records import LineReader
from .text import short_title
from .transcript import TokenCounts, Transcript, timestamp_of

SOURCE = "claude-code"
LABEL = "Claude Code"
TITLE_PREFIX = "Imported from Claude Code: "
SUBAGENT_TITLE_PREFIX = "Claude Code subagent: "
WARMUP_PROMPT = "Warmup"
"""The whole first prompt of the agents Claude Code 2.0 starts to warm its cache up."""
COMPACTION_AGENT_PREFIX = "acompact"
"""How the ids of the agents that compact a conversation begin (``agent-acompact-*.jsonl``)."""


class ClaudeCodeImporter:
    """Reads Claude Code's ``~/.claude/projects`` transcripts (see the module docstring)."""

    name = "claude"
    label = LABEL

    # ------------------------------------------------------------------ discovery

    def discover(self, env: Mapping[str, str]) -> Iterable[ImportCandidate]:
        """Every session transcript under the projects folder, then every orphaned subagent
        transcript (its session's transcript gone), from directory listings and one ``stat``
        each (the file's modification time is its end): ``--all`` over a large unchanged tree
        opens nothing but the head of each Claude Code 2.0 sibling subagent file (which names
        its session only inside). :meth:`describe` fills in the rest for the picker."""
        root = projects_root(env)
        if root is None:
            return
        for path, foreign_id in _discovered(root):
            try:
                modified = path.stat().st_mtime
            except OSError:
                continue
            yield ImportCandidate(
                importer=self.name, path=path, foreign_id=foreign_id, ended_at=modified
            )

    def describe(self, candidate: ImportCandidate) -> ImportCandidate:
        """``candidate`` with what the file's head tells (cwd, first prompt, start) and a
        quick count of its prompts — what the picker shows. Optional importer method."""
        return describe(candidate.path) or candidate

    def sniff(self, path: Path) -> bool:
        """A ``.jsonl`` file whose first records are Claude Code's. A subagent transcript is
        read with its session and is claimed only when that session's transcript is gone
        (``--from claude`` reads any)."""
        if path.suffix != ".jsonl":
            return False
        if is_agent_file(path) and not is_orphaned_subagent_file(path):
            return False
        try:
            if path.stat().st_size == 0:  # an empty transcript: known only by where it is
                return "projects" in path.parent.parent.name.lower() or any(
                    part == ".claude" for part in path.parts
                )
            return looks_like_claude(first_records(path, HEAD_BYTES))
        except OSError:
            return False

    # ------------------------------------------------------------------ reading

    def read(self, path: Path, resume_from: str | None = None) -> Iterator[ImportedSession]:
        """The session in ``path`` (new turns only when ``resume_from`` is a cursor this
        importer gave), then its subagents."""
        start = _offset(resume_from)
        if is_agent_file(path):
            yield self._agent_session(path, start, parent_foreign_id=None)
            return
        foreign_id = path.stem
        sidechains: dict[str, Transcript] = {}
        sidechain_messages: dict[str, list[Message]] = {}
        session = ImportedSession(foreign_id=foreign_id, source=SOURCE, messages=iter(()))
        session.messages = self._main_messages(
            path, start, resume_from, session, sidechains, sidechain_messages
        )
        yield session
        for key, transcript in sidechains.items():
            child = ImportedSession(
                foreign_id=key,
                source=SOURCE,
                messages=iter(sidechain_messages[key]),
                parent_foreign_id=foreign_id,
                warnings=Counter(),
            )
            _fill(child, transcript, SUBAGENT_TITLE_PREFIX)
            child.title_hint = internal_agent_title(key, transcript) or child.title_hint
            yield child
        for agent_path in subagent_files(path, foreign_id):
            yield self._agent_session(agent_path, 0, parent_foreign_id=foreign_id)

    def _main_messages(
        self,
        path: Path,
        start: int,
        resume_from: str | None,
        session: ImportedSession,
        sidechains: dict[str, Transcript],
        sidechain_messages: dict[str, list[Message]],
    ) -> Iterator[Message]:
        reader = LineReader(path, start=start)
        warnings: Counter[str] = Counter()
        transcript = Transcript(warnings)
        agent_of: dict[str, str] = {}
        turn_start = start
        for record in reader.records():
            if record.get("isSidechain") is True:
                key = _sidechain_key(record, agent_of)
                if key not in sidechains:
                    sidechains[key] = Transcript(Counter())
                    sidechain_messages[key] = []
                sidechain_messages[key].extend(sidechains[key].feed(record))
                continue
            opened = transcript.turns_opened
            yield from transcript.feed(record)
            if transcript.turns_opened != opened:
                turn_start = reader.record_start
        # The last answer may still be streaming into the log (an import during a live
        # session): it is stored now and read again, whole, by the next import.
        open_turn, answer_pending = transcript.turn_open, transcript.answer_pending
        yield from transcript.finish()
        for key, side in sidechains.items():
            sidechain_messages[key].extend(side.finish())
        warnings.update(reader.warnings)
        session.warnings = dict(warnings)
        reported = _reported_tokens(resume_from)
        _fill(session, transcript, TITLE_PREFIX if start == 0 else None)
        (
            session.input_tokens,
            session.output_tokens,
            session.cache_read_tokens,
            session.cache_write_tokens,
        ) = (max(0, now - before) for now, before in zip(transcript.tokens, reported, strict=True))
        if open_turn:
            tail = (
                now - before
                for now, before in zip(transcript.tokens, transcript.tokens_before_turn, strict=True)
            )
            parts = list(tail)
            if not any(parts[2:]):  # no cache tokens: the shorter form
                parts = parts[:2]
            session.cursor = ":".join(str(part) for part in (turn_start, *parts))
            session.open_tail = 1 if answer_pending else 0
        else:
            session.cursor = str(reader.cursor)

    def _agent_session(
        self, path: Path, start: int, *, parent_foreign_id: str | None
    ) -> ImportedSession:
        """A subagent transcript file as one session (a delegate of ``parent_foreign_id``, or
        of the session its records name when read on its own)."""
        if parent_foreign_id is None:
            parent_foreign_id = first_session_id(path)
        meta = agent_meta(path)
        session = ImportedSession(
            foreign_id=path.stem.removeprefix("agent-"),
            source=SOURCE,
            messages=iter(()),
            parent_foreign_id=parent_foreign_id,
        )
        description = meta.get("description")

        def messages() -> Iterator[Message]:
            reader = LineReader(path, start=start)
            warnings: Counter[str] = Counter()
            transcript = Transcript(warnings)
            for record in reader.records():
                yield from transcript.feed(record)
            yield from transcript.finish()
            warnings.update(reader.warnings)
            session.warnings = dict(warnings)
            session.cursor = str(reader.cursor)
            _fill(session, transcript, SUBAGENT_TITLE_PREFIX if start == 0 else None)
            if start == 0 and isinstance(description, str) and description.strip():
                session.title_hint = SUBAGENT_TITLE_PREFIX + short_title(description)
            if start == 0:
                internal = internal_agent_title(session.foreign_id, transcript)
                session.title_hint = internal or session.title_hint

        session.messages = messages()
        return session


def _discovered(root: Path) -> Iterator[tuple[Path, str]]:
    """(path, foreign id) of every transcript :meth:`ClaudeCodeImporter.discover` offers."""
    for path in session_files(root):
        yield path, path.stem
    for path in orphaned_subagent_files(root):
        yield path, path.stem.removeprefix("agent-")


def describe(path: Path) -> ImportCandidate | None:
    """The picker's view of one transcript; None when it cannot be read."""
    subagent = is_agent_file(path)  # every record of a subagent's own file is a sidechain
    try:
        records = first_records(path, HEAD_BYTES)
        modified = path.stat().st_mtime
        prompts = count_prompts(path, sidechain=subagent)
    except OSError:
        return None
    transcript = Transcript(Counter())
    for record in records:
        if record.get("isSidechain") is True and not subagent:
            continue
        transcript.feed(record)
        if transcript.first_prompt is not None and transcript.cwd is not None:
            break
    started = transcript.started_at
    if started is None:
        started = next((t for r in records if (t := timestamp_of(r)) is not None), None)
    return ImportCandidate(
        importer="claude",
        path=path,
        foreign_id=path.stem.removeprefix("agent-") if subagent else path.stem,
        title_guess=transcript.title_text(),
        cwd=transcript.cwd,
        started_at=started,
        ended_at=modified,
        turn_count=prompts,
    )


def internal_agent_title(agent_id: str, transcript: Transcript) -> str | None:
    """The title of an agent Claude Code runs for itself — one warming its cache up (its
    whole prompt is ``Warmup``), one compacting the conversation (``acompact…`` ids) — named
    for what it is and by its own id, so the many of them never share one title with
    ``(2)``…``(5)`` suffixes; None for an agent the conversation asked for."""
    if agent_id.startswith(COMPACTION_AGENT_PREFIX):
        return f"Claude Code compaction agent {agent_id}"
    if (transcript.first_prompt or "").strip() == WARMUP_PROMPT:
        return f"Claude Code warm-up agent {agent_id}"
    return None


def _fill(session: ImportedSession, transcript: Transcript, title_prefix: str | None) -> None:
    """Copy what reading found onto ``session``."""
    session.started_at = transcript.started_at
    session.ended_at = transcript.ended_at
    session.cwd = transcript.cwd
    session.git_branch = transcript.git_branch
    session.model = transcript.model
    session.input_tokens = transcript.input_tokens
    session.output_tokens = transcript.output_tokens
    session.cache_read_tokens = transcript.cache_read_tokens
    session.cache_write_tokens = transcript.cache_write_tokens
    if title_prefix is not None:
        text = transcript.title_text()
        session.title_hint = title_prefix + text if text else None
        if transcript.custom_title and title_prefix == TITLE_PREFIX:
            session.title_hint = transcript.custom_title  # the name the person chose


def _sidechain_key(record: dict[str, Any], agent_of: dict[str, str]) -> str:
    """Which subagent an inline sidechain record belongs to: its ``agentId``, else the root
    of its ``parentUuid`` chain."""
    uuid = record.get("uuid")
    agent = record.get("agentId")
    if isinstance(agent, str) and agent:
        key = agent
    else:
        parent = record.get("parentUuid")
        key = agent_of.get(parent, "") if isinstance(parent, str) else ""
        if not key:
            key = uuid if isinstance(uuid, str) and uuid else f"sidechain-{len(agent_of)}"
    if isinstance(uuid, str) and uuid:
        agent_of[uuid] = key
    return key


def _offset(cursor: str | None) -> int:
    """The byte offset in a cursor this importer gave; 0 (the whole file) otherwise. A
    cursor is ``OFFSET`` (read on from there), or ``OFFSET:IN:OUT:CACHE_READ:CACHE_WRITE``
    when the last answer was still being written: it begins at ``OFFSET``, and those tokens
    of it were reported already (``OFFSET:IN:OUT`` from before cache tokens were counted
    apart)."""
    if cursor is None:
        return 0
    try:
        offset = int(cursor.split(":", 1)[0])
    except ValueError:
        return 0
    return max(0, offset)


def _reported_tokens(cursor: str | None) -> TokenCounts:
    """The input, output, cache-read and cache-write tokens an earlier read reported for the
    answer a cursor reads again; none for any other cursor."""
    parts = (cursor or "").split(":")[1:]
    if len(parts) not in (2, 4):
        return 0, 0, 0, 0
    try:
        counts = [max(0, int(part)) for part in parts] + [0, 0]
    except ValueError:
        return 0, 0, 0, 0
    return counts[0], counts[1], counts[2], counts[3]
