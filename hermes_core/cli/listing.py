"""The two layouts of ``hermes sessions list`` (SPEC C1) and its JSON shape.

With any titled session: Title, Preview, Last Active, ID. Without titles: Preview, Last
Active, Src (short origin label), ID. IDs are shortened to fit the terminal, never below a
prefix that is unique among the rows shown (prefixes resolve everywhere an id is accepted).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_hookspecs import Session

from .formatting import display_width, fit, iso_local, relative_time

RULE = "─"
MIN_ID_WIDTH = 17


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


def _shortest_unique_ids(ids: Sequence[str], width: int) -> list[str]:
    width = max(width, MIN_ID_WIDTH)
    while width < max((len(i) for i in ids), default=0):
        cut = [i[:width] for i in ids]
        if len(set(cut)) == len(cut):
            return cut
        width += 1
    return list(ids)


def render_list(
    sessions: Sequence[Session],
    previews: Mapping[str, str],
    short_label: Callable[[str], str],
    *,
    now: float | None = None,
    terminal_width: int | None = None,
) -> str:
    """The human listing, as the seed shows it."""
    total = terminal_width or _terminal_columns()
    ids = [s.id for s in sessions]
    full_id = max((len(i) for i in ids), default=MIN_ID_WIDTH)
    titled = any(s.title for s in sessions)
    active_width = 13
    rows: list[list[str]] = []
    if titled:
        fixed = 22 + 2 + active_width + 1
        id_width = max(MIN_ID_WIDTH, min(full_id, total - fixed - 20 - 1))
        preview_width = max(20, min(40, total - fixed - id_width - 1))
        shown_ids = _shortest_unique_ids(ids, id_width)
        header = (
            fit("Title", 22)
            + " "
            + fit("Preview", preview_width)
            + "  "
            + fit("Last Active", active_width)
            + " ID"
        )
        for session, shown in zip(sessions, shown_ids, strict=True):
            title = ("📌 " if session.pinned else "") + (session.title or "—")
            rows.append(
                [
                    fit(title, 22),
                    fit(previews.get(session.id, ""), preview_width),
                    fit(
                        relative_time(session.last_active_at or session.started_at, now),
                        active_width,
                    ),
                    shown,
                ]
            )
        lines = [header]
        separators = [" ", "  ", " "]
    else:
        fixed = active_width + 1 + 6 + 1
        id_width = max(MIN_ID_WIDTH, min(full_id, total - fixed - 30 - 1))
        preview_width = max(20, min(50, total - fixed - id_width - 2))
        shown_ids = _shortest_unique_ids(ids, id_width)
        header = (
            fit("Preview", preview_width)
            + "  "
            + fit("Last Active", active_width)
            + " "
            + fit("Src", 6)
            + " ID"
        )
        for session, shown in zip(sessions, shown_ids, strict=True):
            preview = ("📌 " if session.pinned else "") + previews.get(session.id, "")
            rows.append(
                [
                    fit(preview, preview_width),
                    fit(
                        relative_time(session.last_active_at or session.started_at, now),
                        active_width,
                    ),
                    fit(short_label(session.source), 6),
                    shown,
                ]
            )
        lines = [header]
        separators = ["  ", " ", " "]
    width = (
        max(display_width(header), *(display_width(_join(r, separators)) for r in rows))
        if rows
        else display_width(header)
    )
    lines.append(RULE * width)
    lines.extend(_join(row, separators).rstrip() for row in rows)
    return "\n".join(lines)


def _join(cells: Sequence[str], separators: Sequence[str]) -> str:
    out = cells[0]
    for separator, cell in zip(separators, cells[1:], strict=True):
        out += separator + cell
    return out


def _terminal_columns() -> int:
    """The terminal's width ($COLUMNS first), 120 when there is no terminal."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(1).columns
    except OSError:
        return 120
