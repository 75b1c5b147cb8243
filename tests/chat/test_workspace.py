"""Workspace facts recorded on a new CLI session: cwd, git repository root, branch."""

from __future__ import annotations

from pathlib import Path

from hermes_core.chat.workspace import describe_workspace


def test_a_folder_outside_git_is_its_own_workspace(tmp_path: Path) -> None:
    place = describe_workspace(tmp_path)
    assert (place.cwd, place.git_repo_root, place.git_branch) == (
        str(tmp_path.resolve()),
        None,
        None,
    )
    assert place.key == str(tmp_path.resolve())


def test_a_subfolder_of_a_repository_records_the_root_and_branch(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/feature/login\n")
    sub = tmp_path / "src" / "app"
    sub.mkdir(parents=True)
    place = describe_workspace(sub)
    assert place.cwd == str(sub.resolve())
    assert place.git_repo_root == str(tmp_path.resolve())
    assert place.git_branch == "feature/login"
    assert place.key == str(tmp_path.resolve())


def test_a_worktree_git_file_is_followed_and_a_detached_head_has_no_branch(
    tmp_path: Path,
) -> None:
    real = tmp_path / "main.git" / "worktrees" / "wt"
    real.mkdir(parents=True)
    (real / "HEAD").write_text("3f2a1c0ffee\n")
    tree = tmp_path / "wt"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {real}\n")
    place = describe_workspace(tree)
    assert place.git_repo_root == str(tree.resolve())
    assert place.git_branch is None
