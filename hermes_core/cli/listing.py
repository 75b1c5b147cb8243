"""The two layouts of ``hermes sessions list`` (SPEC C1) and its JSON shape.

With any titled session: Title, Preview, Last Active, ID. Without titles: Preview, Last
Active, Src (short origin label), ID. The id is always shown whole — it is the one field people
copy, and a prefix unique among the rows shown may not be unique in the store.

The width comes from ``$COLUMNS``, else the terminal. Up to the seed's own width (Title 22,
Preview 40 or 50) the columns are the seed's; on a narrower terminal the preview gives way,
then title and preview share what is left; a wider terminal gives the room to the title first
(as far as the longest title needs), then to the preview. Output that is not a terminal (a pipe,
a file) without ``$COLUMNS`` gets the seed's fixed layout with ids in full.

An imported session's title, ``Imported from Claude Code: Fix the lexer``, is shown as
``claude: Fix the lexer`` (the origin's short label, then what tells it apart); the stored title
and ``--json`` are unchanged.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_hookspecs import Session

from .formatting import display_width, fit, iso_local, relative_time

RULE = "─"
TITLE_WIDTH = 22
"""The seed's title column, kept at 80 columns and on narrower terminals."""
PREVIEW_WIDTH = 40
"""The seed's preview column next to titles."""
PLAIN_PREVIEW_WIDTH = 50
"""The seed's preview column in the layout without titles."""
NARROW_PREVIEW_WIDTH = 16
"""Below title 22 + this, title and preview shrink together (the id never does)."""
MIN_CELL_WIDTH = 6
ACTIVE_WIDTH = 13
SOURCE_WIDTH = 6
_IMPORTED_TITLE = re.compile(r"^Imported from [^:]+: (?P<rest>.+)$", re.DOTALL)


def session_tokens(session: Session) -> dict[str, int]:
    """A session's token counters as ``show --json`` gives them (see docs/cli.md): input
    outside the prompt cache, cache reads, cache writes, output."""
    return {
        "input": session.input_tokens,
        "cache_read": session.cache_read_tokens,
        "cache_write": session.cache_write_tokens,
        "output": session.output_tokens,
    }


def list_as_json(sessions: Sequence[Session], previews: Mapping[str, str]) -> list[dict[str, Any]]:
    """The documented, stable JSON shape of ``list --json`` (see docs/cli.md)."""
    return [
        {
            "id": s.id,
            "title": s.title,
            "preview": previews.get(s.id, ""),
            "source": s.source,
            "started_at": iso_local(s.started_at),
            "last_active_at": iso_local(s.last_active_at),
            "ended_at": iso_local(s.ended_at),
            "end_reason": s.end_reason,
            "message_count": s.message_count,
            "model": s.model,
            "workspace": s.workspace,
            "parent_session_id": s.parent_session_id,
            "parent_kind": s.parent_kind,
            "pinned": s.pinned,
            "archived": s.archived,
        }
        for s in sessions
    ]


@dataclass(frozen=True, slots=True)
class ListWidths:
    """Column widths of one listing (``title`` is 0 in the layout without titles)."""

    title: int
    preview: int
    session_id: int


def titled_widths(
    total: int | None, *, id_width: int, title_need: int, preview_need: int
) -> ListWidths:
    """Widths for the layout with titles: Title, Preview, Last Active, ID.

    ``total`` is the terminal's width (None: not a terminal, the seed's layout); ``id_width``
    the longest id, always shown whole; ``title_need``/``preview_need`` the widest cells,
    which bound how far the columns grow on a wide terminal."""
    if total is None:
        return ListWidths(TITLE_WIDTH, PREVIEW_WIDTH, id_width)
    separators = 1 + 2 + 1
    room = max(0, total - ACTIVE_WIDTH - separators - id_width)
    if room >= TITLE_WIDTH + NARROW_PREVIEW_WIDTH:
        title = TITLE_WIDTH
        preview = min(PREVIEW_WIDTH, room - title)
    else:  # narrow: title and preview shrink together, never the id
        title = max(MIN_CELL_WIDTH, room * TITLE_WIDTH // (TITLE_WIDTH + NARROW_PREVIEW_WIDTH))
        preview = max(MIN_CELL_WIDTH, room - title)
    spare = room - title - preview
    if spare > 0:  # wider than the seed's table: the title first, then the preview
        grow = min(spare, max(0, title_need - title))
        title += grow
        preview += min(spare - grow, max(0, preview_need - preview))
    return ListWidths(title, preview, id_width)


def plain_widths(total: int | None, *, id_width: int, preview_need: int) -> ListWidths:
    """Widths for the layout without titles: Preview, Last Active, Src, ID (see
    :func:`titled_widths`; the id is whole, the preview gives way)."""
    if total is None:
        return ListWidths(0, PLAIN_PREVIEW_WIDTH, id_width)
    room = max(0, total - ACTIVE_WIDTH - SOURCE_WIDTH - 2 - 1 - 1 - id_width)
    preview = max(MIN_CELL_WIDTH, min(PLAIN_PREVIEW_WIDTH, room))
    spare = room - preview
    if spare > 0:
        preview += min(spare, max(0, preview_need - preview))
    return ListWidths(0, preview, id_width)


def title_cell(session: Session, short_label: Callable[[str], str]) -> str:
    """What the Title column shows: ``—`` for none, 📌 before a pinned one, and an imported
    title's "Imported from <tool>: " replaced by the origin's short label."""
    title = session.title or "—"
    if session.title_source == "import":
        imported = _IMPORTED_TITLE.match(title)
        if imported:
            title = f"{short_label(session.source)}: {imported['rest']}"
    return ("📌 " if session.pinned else "") + title


def render_list(
    sessions: Sequence[Session],
    previews: Mapping[str, str],
    short_label: Callable[[str], str],
    *,
    now: float | None = None,
    terminal_width: int | None = None,
) -> str:
    """The human listing, as the seed shows it, laid out for ``terminal_width`` columns
    (by default the terminal's, see :func:`terminal_columns`)."""
    total = terminal_width or terminal_columns()
    ids = [s.id for s in sessions]
    full_id = max((len(i) for i in ids), default=0)
    titled = any(s.title for s in sessions)
    rows: list[list[str]] = []

    def active(session: Session) -> str:
        return fit(relative_time(session.last_active_at or session.started_at, now), ACTIVE_WIDTH)

    if titled:
        titles = [title_cell(s, short_label) for s in sessions]
        widths = titled_widths(
            total,
            id_width=full_id,
            title_need=max(map(display_width, titles)),
            preview_need=max(display_width(previews.get(i, "")) for i in ids),
        )
        header = (
            fit("Title", widths.title)
            + " "
            + fit("Preview", widths.preview)
            + "  "
            + fit("Last Active", ACTIVE_WIDTH)
            + " ID"
        )
        for session, title in zip(sessions, titles, strict=True):
            rows.append(
                [
                    fit(title, widths.title),
                    fit(previews.get(session.id, ""), widths.preview),
                    active(session),
                    session.id,
                ]
            )
        separators = [" ", "  ", " "]
    else:
        cells = [("📌 " if s.pinned else "") + previews.get(s.id, "") for s in sessions]
        widths = plain_widths(
            total, id_width=full_id, preview_need=max(map(display_width, cells), default=0)
        )
        header = (
            fit("Preview", widths.preview)
            + "  "
            + fit("Last Active", ACTIVE_WIDTH)
            + " "
            + fit("Src", SOURCE_WIDTH)
            + " ID"
        )
        for session, preview in zip(sessions, cells, strict=True):
            rows.append(
                [
                    fit(preview, widths.preview),
                    active(session),
                    fit(short_label(session.source), SOURCE_WIDTH),
                    session.id,
                ]
            )
        separators = ["  ", " ", " "]
    lines = [header]
    width = max([display_width(header), *(display_width(_join(r, separators)) for r in rows)])
    lines.append(RULE * width)
    lines.extend(_join(row, separators).rstrip() for row in rows)
    return "\n".join(lines)


def _join(cells: Sequence[str], separators: Sequence[str]) -> str:
    out = cells[0]
    for separator, cell in zip(separators, cells[1:], strict=True):
        out += separator + cell
    return out


def terminal_columns() -> int | None:
    """The width to lay a listing out for: ``$COLUMNS`` when set, else the terminal's; None
    when standard output is not a terminal (a pipe or a file), for the seed's fixed layout."""
    value = os.environ.get("COLUMNS", "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    try:
        if sys.stdout.isatty():
            return os.get_terminal_size(sys.stdout.fileno()).columns
    except (AttributeError, ValueError, OSError):
        pass
    return None
