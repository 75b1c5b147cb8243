"""``session/list``: every stored session, newest activity first, a page at a time.

Sessions of every origin are listed (an editor can resume a chat, a platform conversation or an
imported one); archived and delegate (subagent) sessions are left out, as ``hermes sessions
list`` leaves them out. The optional ``cwd`` keeps the sessions whose working directory is it
or inside it. The cursor is the position of the next page (opaque to the editor).

A session that recorded no working directory (a messaging platform's) is listed with the
Hermes home as its ``cwd`` (the protocol asks for an absolute path); ``_meta.hermes`` says
where each session comes from.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from acp.schema import ListSessionsResponse, SessionInfo
from hermes_hookspecs import Session

from hermes_core.selection.filters import SessionFilter
from hermes_core.store.protocol import Store

from .errors import invalid

PAGE_SIZE = 50
TITLE_FROM_PREVIEW = 80
"""An untitled session is labelled with this many characters of its first message."""


def _offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit():
        raise invalid(f"cursor {cursor!r} is not one this agent gave")
    return int(cursor)


def _iso(moment: float | None) -> str | None:
    return datetime.fromtimestamp(moment, tz=UTC).isoformat() if moment is not None else None


def session_info(session: Session, preview: str | None, home: Path) -> SessionInfo:
    """One session as the editor lists it."""
    title = session.title
    if not title and preview:
        line = " ".join(preview.split())
        title = line[:TITLE_FROM_PREVIEW] + ("…" if len(line) > TITLE_FROM_PREVIEW else "")
    return SessionInfo(
        session_id=session.id,
        cwd=session.cwd or session.git_repo_root or str(home),
        title=title or None,
        updated_at=_iso(session.last_active_at or session.started_at),
        field_meta={
            "hermes": {
                "source": session.source,
                "cwdRecorded": bool(session.cwd or session.git_repo_root),
                "endedAt": _iso(session.ended_at),
            }
        },
    )


def list_page(store: Store, home: Path, cwd: str | None, cursor: str | None) -> ListSessionsResponse:
    """The page of sessions at ``cursor`` (None: the first), filtered by ``cwd``."""
    if cwd is not None and not Path(cwd).is_absolute():
        raise invalid(f"cwd {cwd!r} is not an absolute path")
    offset = _offset(cursor)
    selection = SessionFilter(cwd=cwd, include_archived=False, include_delegates=False)
    rows = list(store.iter_selected(selection, limit=offset + PAGE_SIZE + 1))[offset:]
    page = rows[:PAGE_SIZE]
    previews = store.previews([s.id for s in page if not s.title]) if page else {}
    return ListSessionsResponse(
        sessions=[session_info(s, previews.get(s.id), home) for s in page],
        next_cursor=str(offset + PAGE_SIZE) if len(rows) > PAGE_SIZE else None,
    )
