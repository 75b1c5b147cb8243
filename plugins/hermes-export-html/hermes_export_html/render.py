"""Session → HTML fragments. Every piece of session text passes through :func:`text`.

Rendering is done here, on the server side: the page's script never builds markup from
session data, it only shows, hides and filters what is already in the document. Messages are
shown as plain text (``white-space: pre-wrap``), never interpreted as Markdown or HTML, so no
link, image or element can come out of a message.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from datetime import UTC, datetime

from hermes_hookspecs import Message, Session, SessionRecord, ToolCall

ROLE_LABELS = {"user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool"}


def text(value: object) -> str:
    """``value`` as HTML text, with ``& < > " '`` escaped (safe in content and attributes)."""
    return html.escape(str(value), quote=True)


def iso_time(timestamp: float | None) -> str:
    """A UTC timestamp as ``2026-01-31 14:05:09 UTC``, or an empty string when unknown."""
    if timestamp is None:
        return ""
    try:
        moment = datetime.fromtimestamp(timestamp, UTC)
    except (OverflowError, OSError, ValueError):
        return ""
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def session_label(session: Session) -> str:
    """The name a session goes by in the sidebar and its heading."""
    return session.title or session.id


def pretty_arguments(arguments: str) -> str:
    """Tool-call arguments, indented when they are JSON, else as the model wrote them."""
    try:
        parsed = json.loads(arguments)
    except (ValueError, RecursionError):
        return arguments
    return json.dumps(parsed, indent=2, ensure_ascii=False)


def render_tool_call(call: ToolCall) -> str:
    """A collapsed tool call: its name in the summary, its arguments inside."""
    call_id = f' <span class="muted">{text(call.id)}</span>' if call.id else ""
    return (
        '<details class="tool-call"><summary>Tool call: '
        f"<code>{text(call.name)}</code>{call_id}</summary>"
        f"<pre>{text(pretty_arguments(call.arguments))}</pre></details>"
    )


def render_message(message: Message) -> str:
    """One chat bubble; tool output and reasoning are collapsed in ``<details>``."""
    role = message.role if message.role in ROLE_LABELS else "system"
    parts = [f'<article class="bubble {role}">']
    stamp = iso_time(message.timestamp)
    who = ROLE_LABELS[role]
    if role == "tool" and message.tool_name:
        who = f"Tool · {message.tool_name}"
    parts.append(f'<header><span class="who">{text(who)}</span>')
    if stamp:
        parts.append(f'<time class="muted">{text(stamp)}</time>')
    parts.append("</header>")
    if message.reasoning:
        parts.append(
            '<details class="reasoning"><summary>Reasoning</summary>'
            f'<div class="text">{text(message.reasoning)}</div></details>'
        )
    if role == "tool":
        line_count = message.content.count("\n") + 1 if message.content else 0
        call_id = f" · {message.tool_call_id}" if message.tool_call_id else ""
        parts.append(
            f'<details class="tool-output"><summary>Output{text(call_id)} '
            f'<span class="muted">({line_count} line{"" if line_count == 1 else "s"})</span>'
            f"</summary><pre>{text(message.content)}</pre></details>"
        )
    elif message.content:
        parts.append(f'<div class="text">{text(message.content)}</div>')
    parts.extend(render_tool_call(call) for call in message.tool_calls)
    parts.append("</article>")
    return "".join(parts)


def _facts(session: Session) -> Iterable[tuple[str, str]]:
    yield "id", session.id
    yield "source", session.source
    if session.model:
        yield "model", session.model
    yield "started", iso_time(session.started_at)
    if session.ended_at is not None:
        ended = iso_time(session.ended_at)
        yield "ended", f"{ended} ({session.end_reason})" if session.end_reason else ended
    if session.workspace:
        yield "workspace", session.workspace
    if session.parent_session_id:
        yield "parent", f"{session.parent_session_id} ({session.parent_kind or 'parent'})"


def _with_segment_marks(record: SessionRecord) -> Iterable[str]:
    """The messages' bubbles; in a logical lineage, a mark where each continuation starts."""
    segment = record.messages[0].session_id if record.messages else None
    for message in record.messages:
        if record.lineage and message.session_id and message.session_id != segment:
            segment = message.session_id
            yield f'<p class="segment muted">continued in session {text(segment)}</p>'
        yield render_message(message)


def render_session_head(record: SessionRecord) -> str:
    """A session's heading and facts (id, source, times, workspace, parent, delegates,
    lineage), without its messages."""
    session = record.session
    facts = "".join(
        f"<div><dt>{text(name)}</dt><dd>{text(value)}</dd></div>" for name, value in _facts(session)
    )
    if record.children:
        facts += f"<div><dt>delegates</dt><dd>{text(', '.join(record.children))}</dd></div>"
    if record.lineage:
        facts += f"<div><dt>lineage</dt><dd>{text(' → '.join(record.lineage))}</dd></div>"
    return f'<h2>{text(session_label(session))}</h2><dl class="facts">{facts}</dl>'


def render_session(record: SessionRecord, anchor: str, active: bool) -> str:
    """A whole session as a ``<section>``: heading, facts and its messages in order."""
    state = " active" if active else ""
    head = f'<section class="session{state}" id="{text(anchor)}">{render_session_head(record)}'
    body = "".join(_with_segment_marks(record))
    if not record.messages:
        body = '<p class="muted">This session has no messages.</p>'
    return f'{head}<div class="messages">{body}</div></section>\n'


def render_sidebar_entry(record: SessionRecord, anchor: str, active: bool) -> str:
    """A sidebar button that shows the session ``anchor``."""
    session = record.session
    pressed = "true" if active else "false"
    return (
        f'<li><button type="button" class="pick" data-target="{text(anchor)}" '
        f'aria-pressed="{pressed}"><span class="pick-title">{text(session_label(session))}'
        f'</span><span class="muted">{text(iso_time(session.started_at))} · '
        f"{text(session.source)} · {len(record.messages)} msg</span></button></li>"
    )
