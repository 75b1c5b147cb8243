"""Resume resolution (SPEC R1, R2, I4) over real stores: crumbs, names, ``latest``, ``--in``,
``@claude`` / ``@codex``, and restoring the workspace directory."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_hookspecs import Message

from hermes_core.chat.crumbs import CRUMB_MAX_AGE_SECONDS, CrumbJar
from hermes_core.chat.resume import (
    ResumeError,
    ResumeRequest,
    check_importer,
    resolve_resume,
    restore_workspace,
)
from hermes_core.plugins import PluginHost
from hermes_core.store import SessionStore

TERMINAL = "tmux:/tmp/tmux-1000/default:%1"
OTHER_TERMINAL = "tmux:/tmp/tmux-1000/default:%2"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    with SessionStore.open(tmp_path / "home") as opened:
        yield opened


def cli_session(store: SessionStore, *, age: float, cwd: str = "/work/a", **fields: object) -> str:
    """A CLI session last active ``age`` seconds ago, with one exchange."""
    started = time.time() - age
    session = store.create_session("cli", started_at=started, cwd=cwd, **fields)
    store.append_messages(
        session.id,
        [
            Message("user", "hello", timestamp=started),
            Message("assistant", "hi", timestamp=started),
        ],
    )
    return session.id


def test_bare_continue_takes_this_terminals_crumb_over_the_newest(
    store: SessionStore, tmp_path: Path
) -> None:
    mine = cli_session(store, age=300)
    newest = cli_session(store, age=10)
    jar = CrumbJar(tmp_path / "home")
    jar.write(TERMINAL, mine)
    jar.write(OTHER_TERMINAL, newest)
    choice = resolve_resume(store, ResumeRequest(continue_=""), crumbs=jar, terminal=TERMINAL)
    assert choice.session_id == mine
    other = resolve_resume(store, ResumeRequest(continue_=""), crumbs=jar, terminal=OTHER_TERMINAL)
    assert other.session_id == newest


def test_bare_continue_without_a_crumb_takes_the_most_recent_cli_session(
    store: SessionStore, tmp_path: Path
) -> None:
    cli_session(store, age=300)
    newest = cli_session(store, age=10)
    store.create_session("telegram", started_at=time.time(), gateway=True)  # not a CLI session
    jar = CrumbJar(tmp_path / "home")
    choice = resolve_resume(store, ResumeRequest(continue_=""), crumbs=jar, terminal=TERMINAL)
    assert choice.session_id == newest


def test_a_crumb_naming_a_deleted_session_falls_back_to_the_most_recent(
    store: SessionStore, tmp_path: Path
) -> None:
    gone = cli_session(store, age=300)
    newest = cli_session(store, age=10)
    jar = CrumbJar(tmp_path / "home")
    jar.write(TERMINAL, gone)
    store.delete_session(gone)
    choice = resolve_resume(store, ResumeRequest(continue_=""), crumbs=jar, terminal=TERMINAL)
    assert choice.session_id == newest


def test_a_crumb_older_than_thirty_days_falls_back_to_the_most_recent(
    store: SessionStore, tmp_path: Path
) -> None:
    mine = cli_session(store, age=300)
    newest = cli_session(store, age=10)
    jar = CrumbJar(tmp_path / "home")
    jar.write(TERMINAL, mine, now=time.time() - CRUMB_MAX_AGE_SECONDS - 1)
    choice = resolve_resume(store, ResumeRequest(continue_=""), crumbs=jar, terminal=TERMINAL)
    assert choice.session_id == newest


def test_terminal_continue_false_means_no_crumbs(store: SessionStore, tmp_path: Path) -> None:
    mine = cli_session(store, age=300)
    newest = cli_session(store, age=10)
    CrumbJar(tmp_path / "home").write(TERMINAL, mine)
    # session.terminal_continue: false → the chat passes no crumb jar
    choice = resolve_resume(store, ResumeRequest(continue_=""), crumbs=None, terminal=TERMINAL)
    assert choice.session_id == newest


def test_bare_continue_with_no_cli_session_at_all_starts_fresh(store: SessionStore) -> None:
    choice = resolve_resume(store, ResumeRequest(continue_=""))
    assert choice.session_id is None and choice.import_from is None


def test_archived_sessions_are_not_the_most_recent(store: SessionStore) -> None:
    older = cli_session(store, age=300)
    hidden = cli_session(store, age=10)
    store.set_archived([hidden], True)
    assert resolve_resume(store, ResumeRequest(resume="latest")).session_id == older


def test_continue_name_takes_the_newest_of_the_lineage(store: SessionStore, tmp_path: Path) -> None:
    first = cli_session(store, age=300, title="my project")
    second = store.continue_after_compression(first)
    third = store.continue_after_compression(second.id)
    assert third.title == "my project #3"
    jar = CrumbJar(tmp_path / "home")
    jar.write(TERMINAL, first)  # crumbs affect only a bare -c
    choice = resolve_resume(
        store, ResumeRequest(continue_="my project"), crumbs=jar, terminal=TERMINAL
    )
    assert choice.session_id == third.id
    assert resolve_resume(store, ResumeRequest(resume="my project")).session_id == third.id
    assert resolve_resume(store, ResumeRequest(resume="my project #2")).session_id == second.id


def test_latest_is_reserved_for_resume_and_a_title_latest_is_reached_with_c(
    store: SessionStore,
) -> None:
    titled = cli_session(store, age=300, title="latest")
    newest = cli_session(store, age=10)
    assert resolve_resume(store, ResumeRequest(resume="latest")).session_id == newest
    assert resolve_resume(store, ResumeRequest(continue_="latest")).session_id == titled
    assert resolve_resume(store, ResumeRequest(resume=titled)).session_id == titled


def test_resume_by_id_and_by_unique_prefix(store: SessionStore) -> None:
    wanted = cli_session(store, age=300)
    assert resolve_resume(store, ResumeRequest(resume=wanted)).session_id == wanted
    prefix = wanted[: len(wanted) - 2]
    assert resolve_resume(store, ResumeRequest(resume=prefix)).session_id == wanted


def test_unknown_and_ambiguous_references_are_one_line_errors(store: SessionStore) -> None:
    one = store.create_session("cli", session_id="20260301_101010_aaaaaa")
    store.create_session("cli", session_id="20260301_101010_aaaabb")
    with pytest.raises(ResumeError, match="no session matches 'nothing-like-this'"):
        resolve_resume(store, ResumeRequest(resume="nothing-like-this"))
    with pytest.raises(ResumeError, match="matches 2 sessions") as raised:
        resolve_resume(store, ResumeRequest(continue_="20260301_101010_aaaa"))
    assert "\n" not in str(raised.value)
    assert resolve_resume(store, ResumeRequest(resume=one.id[:-1])).session_id == one.id


def test_continue_and_resume_together_are_refused(store: SessionStore) -> None:
    with pytest.raises(ResumeError, match="not both"):
        resolve_resume(store, ResumeRequest(continue_="", resume="latest"))


def test_in_dir_picks_the_newest_session_of_that_workspace(
    store: SessionStore, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (project / "src").mkdir()
    root = str(project.resolve())
    inside = cli_session(store, age=300, cwd=f"{root}/src", git_repo_root=root)
    cli_session(store, age=10, cwd=str(tmp_path / "elsewhere"))  # newer, other workspace
    jar = CrumbJar(tmp_path / "home")
    jar.write(TERMINAL, inside)
    for request in (
        ResumeRequest(continue_="", in_dir=project),
        ResumeRequest(resume="latest", in_dir=project / "src"),
    ):
        assert resolve_resume(store, request, crumbs=jar, terminal=TERMINAL).session_id == inside
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    choice = resolve_resume(store, ResumeRequest(continue_="", in_dir=empty))
    assert choice.session_id is None


def test_resume_at_tool_asks_for_that_importer(store: SessionStore) -> None:
    choice = resolve_resume(store, ResumeRequest(resume="@Claude"))
    assert choice.import_from == "claude" and choice.session_id is None


def test_at_claude_with_no_logs_is_one_line(tmp_path: Path) -> None:
    importers = PluginHost().importers()
    if "claude" not in importers:
        pytest.skip("hermes-import-claude is not installed")
    env = {"HOME": str(tmp_path / "user"), "CLAUDE_CONFIG_DIR": str(tmp_path / "no-claude")}
    with pytest.raises(ResumeError, match="no Claude Code conversations were found") as raised:
        check_importer(importers, "claude", env)
    assert "\n" not in str(raised.value)
    with pytest.raises(ResumeError, match=r"no importer 'gemini'.*@claude"):
        check_importer(importers, "gemini", env)


def test_restoring_the_workspace_changes_directory_and_says_so(
    store: SessionStore, tmp_path: Path
) -> None:
    target = tmp_path / "proj"
    target.mkdir()
    session = store.get_session(cli_session(store, age=5, cwd=str(target)))
    visited: list[str] = []
    line = restore_workspace(session, chdir=visited.append, current=str(tmp_path))
    assert visited == [str(target)]
    assert line == f"↪ restored workspace dir: {target}"
    assert restore_workspace(session, chdir=visited.append, current=str(target)) is None


def test_a_failed_restore_is_a_line_not_an_error(store: SessionStore, tmp_path: Path) -> None:
    session = store.get_session(cli_session(store, age=5, cwd=str(tmp_path / "gone")))
    import os

    here = os.getcwd()
    line = restore_workspace(session)
    assert line is not None and line.startswith("↪ could not restore workspace dir")
    assert str(tmp_path / "gone") in line and os.getcwd() == here
