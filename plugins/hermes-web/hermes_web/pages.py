"""The HTML of ``hermes serve``: page shells around the HTML exporter's renderer.

Every piece of session text is escaped by the exporter's :func:`~hermes_export_html.text`
(the one escaping), every message is drawn by its :func:`~hermes_export_html.render_message`,
and every page carries the exporter's Content-Security-Policy with a fresh nonce (plus
``connect-src 'self'`` so the page's script can ask this server for more). The packaged
script never builds markup from session data: it asks the server for escaped fragments.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from importlib.resources import files
from urllib.parse import quote

from hermes_export_html import (
    asset,
    content_security_policy,
    iso_time,
    render_message,
    render_session_head,
    session_label,
    text,
)
from hermes_hookspecs import Session, SessionRecord

from hermes_core.search import MATCH_END, MATCH_START

from .archive import (
    ARCHIVED_CHOICES,
    ROLES,
    TIME_CHOICES,
    FoundSession,
    Lineage,
    ListedSession,
    ListFilters,
)

KIND_LABELS = {
    "compression": "Continued in",
    "branch": "Branches",
    "delegate": "Delegates",
    "reset": "After a reset",
}
PARENT_LABELS = {
    "compression": "Continues",
    "branch": "Branched from",
    "delegate": "Delegate of",
    "reset": "Reset from",
}


@cache
def web_asset(name: str) -> str:
    """The text of a packaged file of this plugin (``web.js``, ``web.css``)."""
    return files(__package__).joinpath(name).read_text(encoding="utf-8")


def page_policy(nonce: str) -> str:
    """The exporter's policy, plus fetches to this server; no framing (an HTTP header)."""
    return content_security_policy(nonce, connect_self=True) + "; frame-ancestors 'none'"


def session_href(session_id: str) -> str:
    return "/session/" + quote(session_id, safe="")


def shell(
    title: str, body: str, nonce: str, *, csrf: str, writes: bool, redacted: bool, kind: str
) -> str:
    """A whole page: head (policy, styles), top bar, ``body``, then the scripts."""
    flags = []
    if redacted:
        flags.append('<span class="badge" id="redacted">redacted</span>')
    if not writes:
        flags.append('<span class="badge" id="read-only">read-only</span>')
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" '
        f'content="{content_security_policy(nonce, connect_self=True)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f'<meta name="hermes-csrf" content="{text(csrf)}">\n'
        f'<meta name="hermes-writes" content="{"on" if writes else "off"}">\n'
        f"<title>{text(title)}</title>\n"
        f'<style nonce="{nonce}">\n{asset("page.css")}\n{web_asset("web.css")}</style>\n'
        f'</head><body class="single web {kind}"><div class="layout">\n'
        '<header class="top"><h1><a href="/" id="home">Hermes sessions</a></h1>'
        f'<nav class="links">{"".join(flags)}<a href="/">Sessions</a>'
        '<a href="/insights" id="insights-link">Insights</a>'
        '<button type="button" class="theme" id="theme-toggle" data-state="auto">'
        "Theme: auto</button></nav></header>\n"
        f'<main id="sessions">\n{body}\n</main></div>\n'
        f'<script nonce="{nonce}">\n{asset("page.js")}\n{web_asset("web.js")}</script>\n'
        "</body></html>\n"
    )


def _options(choices: Iterable[tuple[str, str]], chosen: str) -> str:
    return "".join(
        f'<option value="{text(value)}"{" selected" if value == chosen else ""}>'
        f"{text(label)}</option>"
        for value, label in choices
    )


def list_body(
    filters: ListFilters,
    sources: Sequence[tuple[str, str]],
    rows_html: str,
    status: str,
) -> str:
    """The list page: the search box, the filters, the rows."""
    roles = "".join(
        f'<label><input type="checkbox" name="role" value="{role}"'
        f"{' checked' if role != 'tool' else ''}> {role}</label>"
        for role in ROLES
    )
    source_choices = [("", "any source"), *sources]
    if filters.source and filters.source not in {name for name, _ in sources}:
        source_choices.append((filters.source, filters.source))
    return (
        '<form id="filters" class="filters" autocomplete="off">'
        '<input type="search" id="q" name="q" placeholder="Search every session (press /)" '
        'aria-label="Search every session">'
        f'<span class="roles" aria-label="Roles searched">{roles}</span>'
        f'<select name="source" id="f-source" aria-label="Source">'
        f"{_options(source_choices, filters.source)}</select>"
        f'<input type="text" name="workspace" id="f-workspace" placeholder="workspace" '
        f'value="{text(filters.workspace)}" aria-label="Workspace">'
        f'<select name="active" id="f-active" aria-label="Active">'
        f"{_options(TIME_CHOICES.items(), filters.active)}</select>"
        '<label><input type="checkbox" name="pinned" id="f-pinned" value="1"'
        f"{' checked' if filters.pinned_only else ''}> pinned only</label>"
        f'<select name="archived" id="f-archived" aria-label="Archived">'
        f"{_options(ARCHIVED_CHOICES.items(), filters.archived)}</select>"
        "</form>\n"
        f'<p id="status" class="muted" aria-live="polite">{text(status)}</p>\n'
        f'<ol id="rows" class="rows">{rows_html}</ol>\n'
        '<p class="muted keys">Keys: <kbd>/</kbd> search · <kbd>j</kbd>/<kbd>k</kbd> move · '
        "<kbd>Enter</kbd> open</p>"
    )


def _actions(session: Session, writes: bool) -> str:
    if not writes:
        return ""
    sid = text(session.id)
    return (
        f'<span class="actions" data-session="{sid}">'
        f'<button type="button" data-act="rename">Rename</button>'
        f'<button type="button" data-act="pin" data-value="{"0" if session.pinned else "1"}">'
        f"{'Unpin' if session.pinned else 'Pin'}</button>"
        f'<button type="button" data-act="archive" data-value="{"0" if session.archived else "1"}">'
        f"{'Unarchive' if session.archived else 'Archive'}</button></span>"
    )


def list_rows(rows: Sequence[ListedSession], writes: bool) -> str:
    """The list's rows: title (or the start of the first message), preview, facts, id."""
    out = []
    for row in rows:
        session = row.session
        href = session_href(session.id)
        mark = "📌 " if session.pinned else ""
        title = session.title or row.preview[:80] or "(untitled)"
        facts = [
            session.source,
            session.workspace or "",
            iso_time(session.last_active_at or session.started_at),
            f"{session.message_count} msg",
            "archived" if session.archived else "",
        ]
        out.append(
            f'<li class="row{" pinned" if session.pinned else ""}" data-id="{text(session.id)}">'
            f'<a class="open" href="{text(href)}"><span class="row-title">{text(mark + title)}'
            f'</span><span class="row-preview muted">{text(row.preview)}</span></a>'
            f'<span class="row-facts muted">{text(" · ".join(f for f in facts if f))}'
            f" · <code>{text(session.id)}</code></span>{_actions(session, writes)}</li>"
        )
    return "".join(out)


def highlighted(snippet: str) -> str:
    """A search snippet with its matches in ``<mark>``; every piece escaped."""
    out = []
    rest = snippet
    while MATCH_START in rest:
        before, _, after = rest.partition(MATCH_START)
        match, found, rest = after.partition(MATCH_END)
        out.append(text(before))
        out.append(f"<mark>{text(match)}</mark>")
        if not found:
            rest = ""
    out.append(text(rest))
    return "".join(out)


def search_rows(found: Sequence[FoundSession]) -> str:
    out = []
    for result in found:
        href = session_href(result.session_id)
        facts = [result.source, result.when, "title match" if result.matched == "title" else ""]
        if result.archived:
            facts.append("archived")
        out.append(
            f'<li class="row hit" data-id="{text(result.session_id)}">'
            f'<a class="open" href="{text(href)}"><span class="row-title">'
            f"{text(result.title or result.session_id)}</span>"
            f'<span class="snippet">{highlighted(result.snippet)}</span></a>'
            f'<span class="row-facts muted">{text(" · ".join(f for f in facts if f))}'
            f" · <code>{text(result.session_id)}</code></span></li>"
        )
    return "".join(out)


def lineage_nav(lineage: Lineage) -> str:
    """Links to the parent, the continuations, branches and delegates of a session."""
    parts = []
    if lineage.parent is not None:
        parent_id, kind = lineage.parent
        parts.append(
            f'<span class="link-group" data-kind="parent">{text(PARENT_LABELS.get(kind, "Parent"))}: '
            f'<a rel="up" href="{text(session_href(parent_id))}">{text(parent_id)}</a></span>'
        )
    for kind, ids in lineage.children.items():
        links = ", ".join(
            f'<a href="{text(session_href(child))}">{text(child)}</a>' for child in ids
        )
        parts.append(
            f'<span class="link-group" data-kind="{text(kind)}">'
            f"{text(KIND_LABELS.get(kind, kind))}: {links}</span>"
        )
    if not parts:
        return ""
    return f'<nav class="lineage" aria-label="Lineage">{" · ".join(parts)}</nav>'


def bubbles(record: SessionRecord) -> str:
    """The messages of a page of a session, as the exporter draws them."""
    return "".join(render_message(message) for message in record.messages)


def session_body(
    record: SessionRecord, lineage: Lineage, total: int, offset: int, writes: bool
) -> str:
    """The session page: lineage links, heading and facts, the first page of messages and
    what the script needs to load the rest and follow new ones."""
    session = record.session
    last_id = record.messages[-1].id if record.messages else 0
    empty = "" if total else '<p class="muted" id="empty">This session has no messages yet.</p>'
    left = total - offset
    more = (
        f'<button type="button" id="more" class="more"{" hidden" if left <= 0 else ""}>'
        f"Load more ({max(left, 0)} left)</button>"
    )
    return (
        f"{lineage_nav(lineage)}"
        f'<section class="session active" id="s1">{render_session_head(record)}'
        f"{_actions(session, writes)}{empty}"
        f'<div class="messages" id="messages" data-session="{text(session.id)}" '
        f'data-offset="{offset}" data-total="{total}" data-last="{last_id or 0}">'
        f"{bubbles(record)}</div>{more}"
        f'<p class="muted" id="live" aria-live="polite"></p></section>'
        '<p class="muted keys">Keys: <kbd>j</kbd>/<kbd>k</kbd> next/previous message · '
        "<kbd>/</kbd> search · <kbd>u</kbd> back to the list</p>"
    )


def session_title(session: Session) -> str:
    return session_label(session)


def message_page(body: str) -> str:
    """A short notice (not found, bad request) inside a page body."""
    return f'<p class="notice" id="notice">{text(body)}</p>'
