"""Markdown text of a session: a heading per message, tool calls and output collapsed.

Message text is written as Markdown (it usually is already), made inert: no raw HTML, no
image a viewer would fetch, no link to a script URL (see :func:`message_markdown`); tool
arguments, tool output
and reasoning go inside ``<details>`` blocks in fenced code, with a fence longer than any run
of backticks in the text so nothing can close it early.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from datetime import UTC, datetime

from hermes_hookspecs import Message, SessionRecord

_BACKTICKS = re.compile(r"`+")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# A link's or image's target: one level of parentheses inside, on one line.
_TARGET = r"(?:[^()\n]|\([^()\n]*\))*"
_LABEL = r"(?:[^\[\]\n]|\[[^\[\]\n]*\])*"
_IMAGE_OR_TARGET = re.compile(
    rf"(?P<image>!\[(?P<alt>{_LABEL})\]\((?P<src>{_TARGET})\))"
    rf"|(?P<link>\[(?P<text>{_LABEL})\]\((?P<href>{_TARGET})\))"
    # The end of a link whose text began on an earlier line.
    rf"|(?P<target>\]\((?P<dest>{_TARGET})\))"
)
_DEFINITION = re.compile(r"^ {0,3}\[[^\]\n]+\]:[ \t]*(?P<dest>\S*)")
_BACKSLASH_ESCAPE = re.compile(r"\\(?=[!-/:-@\[-`{-~])")
_SCRIPT_SCHEMES = ("javascript:", "vbscript:", "data:")
_ROLE_NAMES = {"user": "User", "assistant": "Assistant", "tool": "Tool", "system": "System"}


def iso(timestamp: float | None) -> str | None:
    """A POSIX time as ISO 8601 UTC with seconds (``2026-07-05T14:30:00Z``)."""
    if timestamp is None:
        return None
    moment = datetime.fromtimestamp(timestamp, UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def one_line(text: str) -> str:
    """``text`` on one line, for headings and summaries."""
    return " ".join(text.split())


def fenced(text: str, language: str = "text") -> str:
    """``text`` in a code fence no backtick run inside it can close."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def message_markdown(text: str) -> str:
    """A message's own Markdown, made safe to embed in the transcript.

    Raw HTML is neutralised outside fenced code (see :func:`_escape_outside_code_spans`), so a
    ``<script>`` or ``<img onerror=…>`` in a message shows as text wherever the file is
    rendered (Quarto passes raw HTML through); images and links to script URLs become text
    with their URL as code (:func:`_inert_text`, :func:`_inert_definition`); a code fence the message leaves open is closed,
    so it cannot swallow the rest of the transcript.
    """
    out: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        opener = _FENCE.match(line)
        if opener and opener.group(1)[0] == "`" and "`" in line[opener.end() :]:
            opener = None  # CommonMark: a backtick fence's info string holds no backtick
        if fence is None:
            if opener:
                fence = opener.group(1)
                out.append(line)
            else:
                out.append(_escape_outside_code_spans(_inert_definition(line)))
        else:
            out.append(line)
            if (
                opener
                and opener.group(1)[0] == fence[0]
                and len(opener.group(1)) >= len(fence)
                and not line.strip().strip(fence[0])
            ):
                fence = None
    if fence is not None:
        out.append(("" if not out or out[-1].endswith("\n") else "\n") + fence)
    return "".join(out)


def runs_script(target: str) -> bool:
    """Whether a link target opens a ``javascript:``, ``vbscript:`` or ``data:`` URL as a
    browser would read it: character references decoded (``&#106;avascript:``), Markdown
    backslash escapes removed, whitespace and control characters dropped (``java\tscript:``),
    any case."""
    text = _BACKSLASH_ESCAPE.sub("", html.unescape(target))
    text = "".join(c for c in text if not c.isspace() and c.isprintable())
    return text.lstrip("<").lower().startswith(_SCRIPT_SCHEMES)


def _shown_url(url: str) -> str:
    """A URL as inert text: a code span (an HTML ``<code>`` when it holds ``<``)."""
    url = url.strip()
    return f"<code>{_escape_html(url)}</code>" if "<" in url else inline_code(url)


def _inert_text(text: str) -> str:
    """Text outside code spans with nothing a viewer would fetch or run: no raw ``<``, no
    image (``![alt](url)`` becomes ``alt (url)`` with the URL as code, as the HTML export shows
    none), and no link to a script URL (``[x](javascript:…)`` becomes ``x (javascript:…)``,
    the URL as code). Links to web pages stay links."""
    pieces: list[str] = []
    position = 0
    for found in _IMAGE_OR_TARGET.finditer(text):
        if found.group("image"):
            label, url = found.group("alt") or "image", found.group("src")
        elif found.group("link") and runs_script(found.group("href")):
            label, url = found.group("text"), found.group("href")
        elif found.group("target") and runs_script(found.group("dest")):
            label, url = None, found.group("dest")
        else:
            continue
        pieces.append(_plain(text[position : found.start()]))
        if label is None:
            pieces.append(f"] ({_shown_url(url)})")
        else:
            label = label.replace("[", "\\[").replace("]", "\\]")
            pieces.append(f"{_plain(label)} ({_shown_url(url)})")
        position = found.end()
    pieces.append(_plain(text[position:]))
    return "".join(pieces)


def _plain(text: str) -> str:
    """No raw HTML and no image syntax (a reference image ``![x][id]`` too) in ``text``."""
    return text.replace("<", "&lt;").replace("![", "!\\[")


def _inert_definition(line: str) -> str:
    """A link reference definition (``[id]: url``) to a script URL, or with its URL on the
    next line, turned into text: it could give a later ``[x][id]`` that target."""
    found = _DEFINITION.match(line)
    if found and (not found.group("dest") or runs_script(found.group("dest"))):
        start = line.index("[")
        return line[:start] + "\\" + line[start:]
    return line


def _escape_outside_code_spans(line: str) -> str:
    """``line`` with no raw ``<`` left: outside code spans it becomes ``&lt;``; a code span
    holding ``<`` becomes an HTML ``<code>`` element with its text escaped.

    Whichever way a renderer pairs the backticks, no ``<`` of the message reaches it raw: at
    worst a stray backtick pair shows an ``&lt;`` literally.
    """
    pieces: list[str] = []
    position = 0
    while position < len(line):
        opening = _BACKTICKS.search(line, position)
        if opening is None:
            break
        closing = next(
            (
                run
                for run in _BACKTICKS.finditer(line, opening.end())
                if len(run.group()) == len(opening.group())
            ),
            None,
        )
        if closing is None:
            break
        pieces.append(_inert_text(line[position : opening.start()]))
        span = line[opening.start() : closing.end()]
        if "<" in span:
            code = line[opening.end() : closing.start()]
            if code.startswith(" ") and code.endswith(" ") and code.strip():
                code = code[1:-1]
            span = f"<code>{_escape_html(code)}</code>"
        pieces.append(span)
        position = closing.end()
    pieces.append(_inert_text(line[position:]))
    return "".join(pieces)


def inline_code(text: str) -> str:
    """``text`` as an inline code span no backtick inside it can end early."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    padding = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{ticks}{padding}{text}{padding}{ticks}"


def heading_text(text: str) -> str:
    """``text`` on one line, safe in a heading (raw HTML neutralised)."""
    return _escape_outside_code_spans(one_line(text))


def collapsed(summary: str, body: str) -> str:
    """A ``<details>`` block (the summary is HTML-escaped)."""
    return f"<details>\n<summary>{_escape_html(summary)}</summary>\n\n{body}\n\n</details>"


def _escape_html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def message_heading(message: Message) -> str:
    """``### User — 2026-07-05T14:30:00Z`` (tool rows name the tool)."""
    parts = [_ROLE_NAMES.get(message.role, message.role.title())]
    if message.role == "tool" and message.tool_name:
        parts.append(heading_text(message.tool_name))
    when = iso(message.timestamp)
    if when:
        parts.append(when)
    return "### " + " — ".join(parts)


def message_body(message: Message) -> str:
    """The text of one message; tool output, tool calls and reasoning collapsed."""
    blocks: list[str] = []
    if message.reasoning:
        blocks.append(collapsed("Reasoning", fenced(message.reasoning)))
    if message.role == "tool":
        lines = message.content.count("\n") + 1 if message.content else 0
        blocks.append(collapsed(f"Tool output ({lines} lines)", fenced(message.content)))
    elif message.role == "system":
        blocks.append(collapsed("System message", fenced(message.content)))
    elif message.content:
        blocks.append(message_markdown(message.content))
    for call in message.tool_calls:
        label = f"Tool call: {one_line(call.name)}"
        if call.id:
            label += f" ({one_line(call.id)})"
        blocks.append(collapsed(label, fenced(call.arguments, "json")))
    return "\n\n".join(blocks) if blocks else "_(empty)_"


def transcript(record: SessionRecord) -> Iterator[str]:
    """The body of a session's document, in chunks (front matter not included)."""
    session = record.session
    yield f"# {heading_text(session.title) if session.title else f'Session {session.id}'}\n\n"
    facts = [
        ("Session ID", session.id),
        ("Source", session.source),
        ("Started", iso(session.started_at)),
        ("Ended", iso(session.ended_at)),
        ("Model", session.model),
        ("Working directory", session.cwd),
    ]
    for label, value in facts:
        if value:
            yield f"- {label}: {inline_code(one_line(value))}\n"
    if record.lineage:
        yield f"- Lineage: {', '.join(inline_code(part) for part in record.lineage)}\n"
    if record.children:
        yield f"- Delegate sessions: {', '.join(inline_code(c) for c in record.children)}\n"
    yield "\n## Messages\n"
    segment: str | None = record.lineage[0] if record.lineage else None
    for message in record.messages:
        if record.lineage and message.session_id and message.session_id != segment:
            segment = message.session_id
            yield f"\n## Continued in session {segment}\n"
        yield f"\n{message_heading(message)}\n\n{message_body(message)}\n"


def prompts_document() -> str:
    """The heading of a prompts-only document (see :func:`prompt_section`)."""
    return "# User prompts\n"


def prompt_section(record: SessionRecord) -> Iterator[str]:
    """One session's prompts: a ``##`` heading, then ``### n. time`` and the text of each."""
    title = f" — {heading_text(record.session.title)}" if record.session.title else ""
    yield f"\n## Session {record.session.id}{title}\n"
    prompts = [message for message in record.messages if message.role == "user"]
    if not prompts:
        yield "\n_No user prompts found._\n"
    for index, message in enumerate(prompts, start=1):
        when = iso(message.timestamp) or "time unknown"
        yield f"\n### {index}. {when}\n\n{message_markdown(message.content)}\n"
