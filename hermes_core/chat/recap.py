"""The recap panel shown when a session is resumed (SPEC R3).

:func:`build_recap` is a pure function of the stored messages: user messages (● gold) cut at
300 characters; per exchange, the assistant's text (◆ green) cut at 200 characters or 3 lines,
with its tool calls collapsed to ``[3 tool calls: terminal, web_search]``; system messages,
tool results and reasoning hidden; the last 10 exchanges, the rest counted in
``... N earlier messages ...`` (N counts the hidden user and assistant messages). A fresh
compression continuation (nothing said in it yet) shows the summary it was seeded with (≡),
else its parent's last exchanges, under a line saying where they come from.
:func:`recap_panel` draws it dimmed in a rounded frame as prompt_toolkit formatted text (so a
resume shows it without importing rich, see :mod:`.output`), wrapping by terminal cells with
wcwidth (wide characters, emoji); :func:`minimal_notice` is the one line of
``display.resume_display: minimal``. Stored text is drawn through
:func:`hermes_core.terminal_text.terminal_safe` (an escape sequence shows as ``^[…``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from hermes_hookspecs import Message, Session

from hermes_core.terminal_text import terminal_line, terminal_safe

if TYPE_CHECKING:
    from prompt_toolkit.formatted_text import ANSI

    from hermes_core.store.protocol import Store

USER_LIMIT = 300
ASSISTANT_LIMIT = 200
ASSISTANT_LINES = 3
EXCHANGES_SHOWN = 10
USER_MARK = "●"
ASSISTANT_MARK = "◆"
SUMMARY_MARK = "≡"
SUMMARY_LIMIT = 600
SUMMARY_LINES = 8
ELLIPSIS = "…"
DIM = "\x1b[2m"
"""The whole panel is dimmed (SGR 2)."""
USER_COLOUR = "\x1b[38;5;220m"
"""Gold (xterm colour 220) for ``●``."""
ASSISTANT_COLOUR = "\x1b[32m"
"""Green for ``◆``."""
DEFAULT_COLOUR = "\x1b[39m"
ITALIC, NOT_ITALIC = "\x1b[3m", "\x1b[23m"
RESET = "\x1b[0m"
NARROWEST_PANEL = 20


@dataclass(frozen=True, slots=True)
class RecapLine:
    """One entry of the panel."""

    role: Literal["user", "assistant", "summary"]
    text: str
    tool_summary: str = ""
    """``[3 tool calls: terminal, web_search]`` for an assistant turn that called tools."""


@dataclass(frozen=True, slots=True)
class Recap:
    """What the panel shows."""

    lines: tuple[RecapLine, ...]
    earlier_messages: int
    """User and assistant messages before the shown exchanges."""
    note: str = ""
    """Where the lines come from when they are not this session's own (a continuation)."""


@dataclass(slots=True)
class _Exchange:
    user: Message | None = None
    assistant: list[Message] = field(default_factory=list)

    @property
    def message_count(self) -> int:
        return (1 if self.user is not None else 0) + len(self.assistant)


def cut_text(text: str, limit: int, max_lines: int | None = None) -> str:
    """``text`` (trailing blank space dropped) cut to ``limit`` characters and, when given,
    ``max_lines`` lines; a cut ends in ``…``."""
    text = text.strip()
    cut = False
    if max_lines is not None:
        lines = text.splitlines()
        if len(lines) > max_lines:
            text = "\n".join(lines[:max_lines]).rstrip()
            cut = True
    if len(text) > limit:
        text = text[:limit].rstrip()
        cut = True
    return text + ELLIPSIS if cut else text


def tool_summary(messages: Iterable[Message]) -> str:
    """``[N tool calls: a, b]`` over the tool calls of ``messages`` (names in first-use
    order, each once); empty when there are none."""
    names: list[str] = []
    count = 0
    for message in messages:
        for call in message.tool_calls:
            count += 1
            if call.name not in names:
                names.append(call.name)
    if not count:
        return ""
    noun = "tool call" if count == 1 else "tool calls"
    return f"[{count} {noun}: {', '.join(names)}]"


def _exchanges(messages: Iterable[Message]) -> list[_Exchange]:
    exchanges: list[_Exchange] = []
    for message in messages:
        if message.role == "user":
            exchanges.append(_Exchange(user=message))
        elif message.role == "assistant":
            if not exchanges:
                exchanges.append(_Exchange())
            exchanges[-1].assistant.append(message)
        # system and tool messages are hidden, and reasoning is never read
    return exchanges


def build_recap(
    messages: Iterable[Message], *, exchanges: int = EXCHANGES_SHOWN, earlier: int = 0
) -> Recap:
    """The recap of a session's messages (oldest first). ``earlier`` counts user and assistant
    messages before ``messages`` (a caller that passes only the end of a session)."""
    every = _exchanges(messages)
    shown, hidden = every[-exchanges:] if exchanges else [], every[: max(0, len(every) - exchanges)]
    lines: list[RecapLine] = []
    for exchange in shown:
        if exchange.user is not None:
            lines.append(RecapLine("user", cut_text(exchange.user.content, USER_LIMIT)))
        if exchange.assistant:
            said = "\n".join(m.content.strip() for m in exchange.assistant if m.content.strip())
            lines.append(
                RecapLine(
                    "assistant",
                    cut_text(said, ASSISTANT_LIMIT, ASSISTANT_LINES),
                    tool_summary(exchange.assistant),
                )
            )
    return Recap(tuple(lines), earlier + sum(exchange.message_count for exchange in hidden))


SHOWN_ROLES = ("user", "assistant")


def recap_of_session(store: Store, session_id: str, *, depth: int = 0) -> Recap:
    """The recap of a stored session, reading only its end: user and assistant messages newest
    first until the last :data:`EXCHANGES_SHOWN` exchanges are complete (a 10,000-message
    session costs a few rows, not 10,000). A fresh compression continuation gets the summary
    it was seeded with, else its parent's end (see :func:`_seeded_recap`)."""
    tail: list[Message] = []
    users = 0
    for message in store.iter_messages_newest_first(session_id, roles=SHOWN_ROLES):
        if message.role == "user":
            if users == EXCHANGES_SHOWN:
                break
            users += 1
        tail.append(message)
    tail.reverse()
    earlier = store.count_messages(session_id, roles=SHOWN_ROLES) - len(tail)
    recap = build_recap(tail, earlier=earlier)
    if recap.lines or depth >= _MAX_PARENTS:
        return recap
    return _seeded_recap(store, session_id, depth) or recap


_MAX_PARENTS = 20
"""How far up a chain of empty continuations the recap looks (a guard against a cycle)."""


def _seeded_recap(store: Store, session_id: str, depth: int) -> Recap | None:
    """For a compression continuation nothing was said in yet: the summary it was seeded
    with, else its parent's last exchanges; None for any other session."""
    from hermes_core.agent.compression import SUMMARY_HEADER

    session = store.get_session(session_id)
    parent = session.parent_session_id
    if session.parent_kind != "compression" or not parent:
        return None
    header = SUMMARY_HEADER.split("{", 1)[0]
    for message in itertools.islice(store.iter_messages(session_id), 5):
        if message.role == "system" and message.content.startswith(header):
            summary = message.content.split("\n", 1)[1] if "\n" in message.content else ""
            if summary.strip():
                text = cut_text(summary, SUMMARY_LIMIT, SUMMARY_LINES)
                return Recap(
                    (RecapLine("summary", text),),
                    0,
                    note=f"Continued from {parent}; the summary it starts from:",
                )
    earlier = recap_of_session(store, parent, depth=depth + 1)
    if not earlier.lines:
        return None
    note = f"Continued from {parent}; its last exchanges:"
    return Recap(earlier.lines, earlier.earlier_messages, note=earlier.note or note)


def earlier_line(count: int) -> str:
    """The indicator of what the panel leaves out."""
    noun = "message" if count == 1 else "messages"
    return f"... {count} earlier {noun} ..."


def session_label(session: Session) -> str:
    """How a session is named in notices: its title and id, or its id."""
    return f"{session.title} ({session.id})" if session.title else session.id


_MARKS = {
    "user": (USER_COLOUR, USER_MARK),
    "assistant": (ASSISTANT_COLOUR, ASSISTANT_MARK),
    "summary": (DEFAULT_COLOUR, SUMMARY_MARK),
}


def recap_panel(session: Session, recap: Recap, width: int) -> ANSI:
    """The dimmed panel of ``recap`` in a rounded frame ``width`` terminal cells wide (at least
    :data:`NARROWEST_PANEL`), titled ``Resumed <title> (<id>)``, as prompt_toolkit formatted text."""
    from prompt_toolkit.formatted_text import ANSI
    from wcwidth import clip, ljust, wrap
    from wcwidth import width as cells

    width = max(width, NARROWEST_PANEL)
    inner = width - 4
    rows: list[str] = []
    if recap.note:
        rows.extend(wrap(DIM + ITALIC + terminal_safe(recap.note) + NOT_ITALIC, inner) or [""])
    if recap.earlier_messages:
        rows.append(ITALIC + earlier_line(recap.earlier_messages) + NOT_ITALIC)
    for line in recap.lines:
        colour, mark = _MARKS[line.role]
        text = terminal_safe(line.text)
        if line.tool_summary:
            text += (" " if text else "") + ITALIC + terminal_safe(line.tool_summary) + NOT_ITALIC
        paragraphs = f"{colour}{mark}{DEFAULT_COLOUR} {text}".split("\n")
        for paragraph in paragraphs:
            rows.extend(wrap(DIM + paragraph, inner, replace_whitespace=False) or [""])
    if not recap.lines:
        rows.append("(no messages yet)")
    title = clip(terminal_line(f"Resumed {session_label(session)}"), 0, width - 6)
    top = f"╭─ {title} {'─' * (width - 5 - cells(title))}╮"
    framed = [top, *(f"│ {ljust(DIM + row, inner)}{RESET}{DIM} │" for row in rows)]
    framed.append(f"╰{'─' * (width - 2)}╯")
    return ANSI("\n".join(f"{DIM}{row}{RESET}" for row in framed))


def minimal_notice(session: Session) -> str:
    """The one line shown instead of the panel with ``display.resume_display: minimal``."""
    count = session.message_count
    noun = "message" if count == 1 else "messages"
    return f"↻ Resumed {session_label(session)} — {count} {noun}"


def render_plain(recap: Recap) -> Sequence[str]:
    """The panel's text without styling or frame (one string per entry), for logs and tests."""
    lines = [recap.note] if recap.note else []
    if recap.earlier_messages:
        lines.append(earlier_line(recap.earlier_messages))
    for line in recap.lines:
        mark = _MARKS[line.role][1]
        text = " ".join(part for part in (line.text, line.tool_summary) if part)
        lines.append(f"{mark} {text}")
    return lines
