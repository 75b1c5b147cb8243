"""Terminal crumbs (SPEC R1): which session each terminal had last, so a bare ``hermes -c``
in two side-by-side panes continues each pane's own conversation.

A crumb is a small JSON file in ``$HERMES_HOME/terminal-sessions/`` named after the terminal.
The terminal is recognised from the variables terminals and multiplexers document for this,
finest first — a tmux pane inside a kitty window is the pane:

=====================  =====================================================
tmux                   ``TMUX`` (server socket) + ``TMUX_PANE``
Zellij                 ``ZELLIJ`` + ``ZELLIJ_SESSION_NAME`` + ``ZELLIJ_PANE_ID``
WezTerm                ``WEZTERM_PANE``
kitty                  ``KITTY_WINDOW_ID`` (+ ``KITTY_PID``)
Windows Terminal       ``WT_SESSION``
anything else          the controlling tty device (``/dev/pts/3``)
=====================  =====================================================

A crumb older than :data:`CRUMB_MAX_AGE_SECONDS` counts as absent.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path

CRUMB_DIR_NAME = "terminal-sessions"
CRUMB_MAX_AGE_SECONDS = 30 * 24 * 3600
"""Thirty days: an older crumb is ignored (SPEC R1)."""


def controlling_tty() -> str | None:
    """The tty device of standard input, output or error, if any is a terminal."""
    for fd in (0, 1, 2):
        try:
            return os.ttyname(fd)
        except OSError:
            continue
    return None


def terminal_key(
    env: Mapping[str, str], *, tty: Callable[[], str | None] = controlling_tty
) -> str | None:
    """A stable name for the terminal this process runs in, or None when there is none."""
    pane = env.get("TMUX_PANE")
    if env.get("TMUX") and pane:
        socket = env["TMUX"].split(",", 1)[0]
        return f"tmux:{socket}:{pane}"
    if env.get("ZELLIJ") is not None and env.get("ZELLIJ_PANE_ID"):
        return f"zellij:{env.get('ZELLIJ_SESSION_NAME', '')}:{env['ZELLIJ_PANE_ID']}"
    if env.get("WEZTERM_PANE"):
        return f"wezterm:{env['WEZTERM_PANE']}"
    if env.get("KITTY_WINDOW_ID"):
        return f"kitty:{env.get('KITTY_PID', '')}:{env['KITTY_WINDOW_ID']}"
    if env.get("WT_SESSION"):
        return f"wt:{env['WT_SESSION']}"
    device = tty()
    return f"tty:{device}" if device else None


def _file_name(key: str) -> str:
    readable = re.sub(r"[^A-Za-z0-9]+", "-", key).strip("-")[:60]
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]
    return f"{readable}-{digest}.json"


class CrumbJar:
    """The crumb files of one Hermes home."""

    def __init__(self, home: Path) -> None:
        self.directory = home / CRUMB_DIR_NAME

    def path_for(self, key: str) -> Path:
        """The crumb file of terminal ``key``."""
        return self.directory / _file_name(key)

    def read(self, key: str, *, now: float | None = None) -> str | None:
        """The session id this terminal had, unless there is no crumb or it is too old."""
        try:
            data = json.loads(self.path_for(key).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        session_id, written = data.get("session_id"), data.get("written_at")
        if not isinstance(session_id, str) or not isinstance(written, int | float):
            return None
        moment = time.time() if now is None else now
        if moment - written > CRUMB_MAX_AGE_SECONDS:
            return None
        return session_id

    def write(self, key: str, session_id: str, *, now: float | None = None) -> None:
        """Remember ``session_id`` for terminal ``key`` (atomically: a reader never sees half
        a crumb). A crumb that cannot be written costs only the per-terminal ``-c``."""
        record = {
            "session_id": session_id,
            "terminal": key,
            "written_at": time.time() if now is None else now,
        }
        from hermes_core.files import AtomicFile

        # Not fsynced (durable=False): a crumb lost in a crash costs one ``-c``, while an fsync
        # would cost every chat start. A full disk leaves no temporary file behind.
        with contextlib.suppress(OSError):
            self.directory.mkdir(parents=True, exist_ok=True)
            with AtomicFile(self.path_for(key), durable=False) as out:
                out.write(json.dumps(record).encode("utf-8"))
