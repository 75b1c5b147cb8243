"""Where a chat runs: the working directory, its git repository root and branch.

Read from the ``.git`` entries on disk rather than by running ``git`` (start-up time is a
budget): a ``.git`` folder, or a ``.git`` file (worktrees, submodules) pointing at one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Workspace:
    """The facts a new CLI session records about where it started."""

    cwd: str
    git_repo_root: str | None = None
    git_branch: str | None = None

    @property
    def key(self) -> str:
        """The workspace key (SPEC S2): the repository root, else the working directory."""
        return self.git_repo_root or self.cwd


def _git_dir(entry: Path) -> Path | None:
    """The git directory a ``.git`` entry stands for."""
    if entry.is_dir():
        return entry
    try:
        text = entry.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text.removeprefix("gitdir:").strip())
    return target if target.is_absolute() else (entry.parent / target).resolve()


def _branch(git_dir: Path) -> str | None:
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if head.startswith("ref: refs/heads/"):
        return head.removeprefix("ref: refs/heads/")
    return None  # a detached HEAD has no branch name


def describe_workspace(directory: Path) -> Workspace:
    """The workspace of ``directory``: itself, plus the enclosing git repository if any."""
    try:
        here = directory.resolve()
    except OSError:
        here = directory.absolute()
    for candidate in (here, *here.parents):
        entry = candidate / ".git"
        if entry.exists():
            git_dir = _git_dir(entry)
            branch = _branch(git_dir) if git_dir is not None else None
            return Workspace(str(here), str(candidate), branch)
    return Workspace(str(here))
