"""What ``-c/--continue``, ``-r/--resume`` and ``--in`` mean (SPEC R1, R2, I4), decided
without a terminal so every rule is tested over a real store.

- bare ``-c``: this terminal's crumb (unless ``session.terminal_continue`` is false), when it
  names a session that still exists and is at most 30 days old; else the most recent CLI
  session. With ``--in DIR``: the most recent CLI session of DIR's workspace (crumbs are not
  consulted: the directory is the stronger hint).
- ``-c NAME``: an id, a unique id prefix or a title — a title means the newest session of its
  compression lineage. ``-c latest`` is the session titled "latest".
- ``-r latest``: the most recent CLI session (of DIR's workspace with ``--in``); ``latest`` is
  reserved here. ``-r @claude`` / ``-r @codex``: import a log of that tool first (the caller
  runs the picker). ``-r REF``: as ``-c NAME``.
- Resuming otherwise changes back to the session's recorded directory (:func:`restore_workspace`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_hookspecs import Session, UserFacingError

from .crumbs import CrumbJar
from .workspace import describe_workspace

if TYPE_CHECKING:
    from hermes_hookspecs import Importer

    from hermes_core.store.protocol import Store

LATEST = "latest"
"""The reserved word of ``--resume``."""

FOREIGN_PREFIX = "@"


class ResumeError(UserFacingError):
    """What was asked to resume does not lead to one session; the message is one line."""


@dataclass(frozen=True, slots=True)
class ResumeRequest:
    """The resume options as given on the command line."""

    continue_: str | None = None
    """None: no ``-c``; the empty string: a bare ``-c``; else ``-c NAME``."""
    resume: str | None = None
    """``-r`` / ``--resume`` value."""
    in_dir: Path | None = None
    """``--in DIR`` (already changed into by the caller, or to be)."""

    @property
    def wanted(self) -> bool:
        """Whether any resume was asked for."""
        return self.continue_ is not None or self.resume is not None


@dataclass(frozen=True, slots=True)
class ResumeChoice:
    """The outcome: a session to resume, or a foreign tool to import from first."""

    session_id: str | None = None
    how: str = ""
    """Why this one, for the notice line ("this terminal's last session", …)."""
    import_from: str | None = None
    """The importer name of ``--resume @claude`` / ``@codex``."""


def most_recent_cli_session(store: Store, *, workspace: str | None = None) -> str | None:
    """The newest (by activity) listed CLI session, within the workspace ``workspace``
    (a path: sessions started in it or below it) when given."""
    from hermes_core.selection.filters import SessionFilter

    selection = SessionFilter(
        source="cli", cwd=workspace, include_archived=False, include_delegates=False
    )
    found = store.select_sessions(selection, limit=1)
    return found[0].id if found else None


def _exists(store: Store, session_id: str) -> bool:
    from hermes_core.store import SessionNotFound

    try:
        store.get_session(session_id)
    except SessionNotFound:
        return False
    return True


def _by_reference(store: Store, reference: str) -> str:
    from hermes_core.store import StoreError

    try:
        return store.resolve(reference)
    except StoreError as error:
        raise ResumeError(str(error)) from None


def _latest(store: Store, request: ResumeRequest) -> ResumeChoice:
    workspace = describe_workspace(request.in_dir).key if request.in_dir else None
    found = most_recent_cli_session(store, workspace=workspace)
    if found is None:
        where = f" in {workspace}" if workspace else ""
        return ResumeChoice(None, f"no earlier CLI session{where}")
    return ResumeChoice(
        found, "most recent CLI session" + (f" in {workspace}" if workspace else "")
    )


def resolve_resume(
    store: Store,
    request: ResumeRequest,
    *,
    crumbs: CrumbJar | None = None,
    terminal: str | None = None,
    now: float | None = None,
) -> ResumeChoice:
    """The session ``request`` means. ``crumbs`` and ``terminal`` are None when terminal
    crumbs are switched off or this process has no terminal. A choice without a session id
    and without ``import_from`` means "nothing to continue": start a new session."""
    if request.continue_ is not None and request.resume is not None:
        raise ResumeError("give -c/--continue or -r/--resume, not both")
    if request.resume is not None:
        wanted = request.resume.strip()
        if not wanted:
            raise ResumeError("--resume needs an id, a title, 'latest' or @claude / @codex")
        if wanted == LATEST:
            return _latest(store, request)
        if wanted.startswith(FOREIGN_PREFIX):
            return ResumeChoice(import_from=wanted[1:].strip().lower(), how="import")
        return ResumeChoice(_by_reference(store, wanted), "by reference")
    assert request.continue_ is not None
    if request.continue_.strip():
        return ResumeChoice(_by_reference(store, request.continue_), "by name")
    if request.in_dir is None and crumbs is not None and terminal is not None:
        remembered = crumbs.read(terminal, now=now)
        if remembered is not None and _exists(store, remembered):
            return ResumeChoice(remembered, "this terminal's last session")
    return _latest(store, request)


def check_importer(importers: Mapping[str, Importer], name: str, env: Mapping[str, str]) -> None:
    """Refuse ``--resume @name`` in one line when no such importer is installed or it finds
    no log (the caller then shows the picker over what was found)."""
    from hermes_core.importing import gather_candidates

    if name not in importers:
        known = ", ".join(f"@{known}" for known in sorted(importers)) or "none is installed"
        raise ResumeError(f"no importer '{name}' to resume from (available: {known})")
    if not gather_candidates(importers, env, only=name):
        label = getattr(importers[name], "label", name)
        raise ResumeError(f"no {label} conversations were found to resume")


def restore_workspace(
    session: Session, *, chdir: Callable[[str], None] = os.chdir, current: str | None = None
) -> str | None:
    """Change into the directory ``session`` was recorded in (its cwd, else its repository
    root). Returns the line to print: ``↪ restored workspace dir: …``, a line saying why it
    could not be restored (the resume goes on regardless), or None when there is nothing to
    do (no directory recorded, or already there)."""
    target = session.cwd or session.git_repo_root
    if not target:
        return None
    here = current if current is not None else os.getcwd()
    if os.path.normpath(here) == os.path.normpath(target):
        return None
    try:
        chdir(target)
    except OSError as error:
        reason = error.strerror or str(error)
        return f"↪ could not restore workspace dir {target} ({reason}); staying in {here}"
    return f"↪ restored workspace dir: {target}"
