"""Terminal crumbs (SPEC R1): which terminal this is, and what it had last."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from disks import fill, small_tmpfs

from hermes_core.chat.crumbs import CRUMB_MAX_AGE_SECONDS, CrumbJar, terminal_key


def no_tty() -> None:
    return None


def test_tmux_pane_wins_over_the_terminal_it_runs_in() -> None:
    env = {"TMUX": "/tmp/tmux-1000/default,42,0", "TMUX_PANE": "%3", "KITTY_WINDOW_ID": "2"}
    assert terminal_key(env, tty=no_tty) == "tmux:/tmp/tmux-1000/default:%3"


def test_two_tmux_servers_with_the_same_pane_number_are_different_terminals() -> None:
    one = terminal_key({"TMUX": "/tmp/a,1,0", "TMUX_PANE": "%0"}, tty=no_tty)
    two = terminal_key({"TMUX": "/tmp/b,1,0", "TMUX_PANE": "%0"}, tty=no_tty)
    assert one != two


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"ZELLIJ": "0", "ZELLIJ_SESSION_NAME": "work", "ZELLIJ_PANE_ID": "5"}, "zellij:work:5"),
        ({"WEZTERM_PANE": "7"}, "wezterm:7"),
        ({"KITTY_WINDOW_ID": "4", "KITTY_PID": "99"}, "kitty:99:4"),
        ({"WT_SESSION": "b4f0-11"}, "wt:b4f0-11"),
    ],
)
def test_each_documented_terminal_variable_names_the_terminal(
    env: dict[str, str], expected: str
) -> None:
    assert terminal_key(env, tty=lambda: "/dev/pts/9") == expected


def test_a_plain_terminal_is_known_by_its_tty_device() -> None:
    assert terminal_key({}, tty=lambda: "/dev/pts/4") == "tty:/dev/pts/4"


def test_no_terminal_at_all_has_no_key() -> None:
    assert terminal_key({"TERM": "xterm"}, tty=no_tty) is None


def test_a_pane_variable_without_its_multiplexer_is_ignored() -> None:
    assert terminal_key({"TMUX_PANE": "%1"}, tty=lambda: "/dev/pts/2") == "tty:/dev/pts/2"


def test_a_crumb_is_read_back_per_terminal(tmp_path: Path) -> None:
    jar = CrumbJar(tmp_path)
    jar.write("tmux:/s:%1", "20260101_000000_aaaaaa")
    jar.write("tmux:/s:%2", "20260101_000000_bbbbbb")
    assert jar.read("tmux:/s:%1") == "20260101_000000_aaaaaa"
    assert jar.read("tmux:/s:%2") == "20260101_000000_bbbbbb"
    assert jar.read("tmux:/s:%3") is None
    assert jar.directory == tmp_path / "terminal-sessions"
    assert not [p for p in jar.directory.iterdir() if p.name.startswith(".")]  # no temporary


def test_a_full_disk_costs_only_the_crumb_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    jar = CrumbJar(tmp_path)
    with small_tmpfs(jar.directory):
        jar.write("tty:/dev/pts/1", "20260101_000000_aaaaaa")
        fill(jar.directory)
        jar.write("tty:/dev/pts/1", "20260101_000000_bbbbbb")  # no exception
        assert jar.read("tty:/dev/pts/1") == "20260101_000000_aaaaaa"  # the old crumb, whole
        names = sorted(p.name for p in jar.directory.iterdir())
        assert names == sorted(["filler", jar.path_for("tty:/dev/pts/1").name])


def test_a_crumb_older_than_thirty_days_is_ignored(tmp_path: Path) -> None:
    jar = CrumbJar(tmp_path)
    now = time.time()
    jar.write("tty:/dev/pts/1", "20260101_000000_aaaaaa", now=now - CRUMB_MAX_AGE_SECONDS - 60)
    assert jar.read("tty:/dev/pts/1", now=now) is None
    jar.write("tty:/dev/pts/1", "20260101_000000_aaaaaa", now=now - CRUMB_MAX_AGE_SECONDS + 60)
    assert jar.read("tty:/dev/pts/1", now=now) == "20260101_000000_aaaaaa"


def test_a_damaged_crumb_counts_as_none(tmp_path: Path) -> None:
    jar = CrumbJar(tmp_path)
    jar.write("tty:/dev/pts/1", "x")
    path = jar.path_for("tty:/dev/pts/1")
    path.write_text("{not json")
    assert jar.read("tty:/dev/pts/1") is None
    path.write_text(json.dumps({"session_id": 3, "written_at": time.time()}))
    assert jar.read("tty:/dev/pts/1") is None


def test_an_unwritable_crumb_directory_costs_only_the_crumb(tmp_path: Path) -> None:
    (tmp_path / "terminal-sessions").write_text("a file where the folder should be")
    jar = CrumbJar(tmp_path)
    jar.write("tty:/dev/pts/1", "20260101_000000_aaaaaa")  # no exception
    assert jar.read("tty:/dev/pts/1") is None


def test_crumb_file_names_are_safe_whatever_the_terminal_key(tmp_path: Path) -> None:
    jar = CrumbJar(tmp_path)
    path = jar.path_for("tmux:/tmp/../../etc/passwd:%1")
    assert path.parent == jar.directory
    assert "/" not in path.name
