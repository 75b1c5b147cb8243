"""The installed ``hermes`` with its real entry points: the import picker in a pseudo-terminal,
``--all`` with its progress bar, and the plain output without a terminal."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pexpect
from claude_helpers import copy_tree, fingerprint
from installed_hermes import hermes_command

from hermes_core.store import SessionStore


def environment(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(tmp_path / "user"), "HERMES_HOME": str(tmp_path / "home")}
    env["CLAUDE_CONFIG_DIR"] = str(copy_tree(tmp_path))
    env["HERMES_PLUGINS"] = "hermes-import-claude"  # only this tool's logs exist here
    env.pop("HERMES_DEBUG", None)
    env.pop("CODEX_HOME", None)
    return env


def spawn(tmp_path: Path, *args: str) -> pexpect.spawn:
    return pexpect.spawn(
        hermes_command(),
        ["sessions", "import", *args],
        env=environment(tmp_path),
        dimensions=(30, 160),
        encoding="utf-8",
        timeout=30,
    )


def stored_titles(tmp_path: Path) -> list[str]:
    with SessionStore.open(tmp_path / "home") as store:
        return sorted(s.title or "" for s in store.select_sessions(None) if s.parent_kind is None)


def test_the_picker_lists_logs_newest_first_and_imports_the_chosen_one(tmp_path: Path) -> None:
    child = spawn(tmp_path)
    child.expect("Import sessions")
    child.expect("Why does the lexer choke on tabs")  # the title cell
    child.expect("parser")  # the working directory's folder
    child.send("lexer")
    child.expect("1 shown")
    child.send("\r")
    child.expect(r"✓ Imported Claude Code session as (\S+):")
    session_id = child.match.group(1)
    child.expect(f"hermes --resume {re.escape(session_id)}")
    child.expect("Summary: 1 imported")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert stored_titles(tmp_path) == [
        "Imported from Claude Code: Why does the lexer choke on tabs? It fails on line 3."
    ]


def test_the_picker_rows_are_in_the_order_of_the_dates_they_show(tmp_path: Path) -> None:
    """Rows show when each conversation started; a file touched later (copied, synced) does
    not jump ahead of newer conversations."""
    env = environment(tmp_path)
    parser = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / "-home-ana-src-parser"
    lexer = parser / "11111111-aaaa-4bbb-8ccc-000000000001.jsonl"  # started 2026-03-01
    tabs = parser / "22222222-aaaa-4bbb-8ccc-000000000002.jsonl"  # started 2026-02-10
    os.utime(lexer, (1_780_000_000, 1_780_000_000))
    os.utime(tabs, (1_790_000_000, 1_790_000_000))  # touched last, started first
    child = pexpect.spawn(
        hermes_command(), ["sessions", "import"], env=env, dimensions=(30, 160),
        encoding="utf-8", timeout=30,
    )  # fmt: skip
    child.expect("Import sessions")
    child.expect("Why does the lexer choke on tabs")
    child.expect("Add a test for tabs")  # drawn after the newer conversation
    child.send("\x1b")
    child.expect(pexpect.EOF)
    child.close()


def test_the_picker_imports_several_marked_logs(tmp_path: Path) -> None:
    child = spawn(tmp_path)
    child.expect("Import sessions")
    child.send("zzzz")
    child.expect(r"\(nothing matches\)")
    child.send("\x15")  # Ctrl-U
    child.send("README")
    child.expect("1 shown")
    child.send("\t")
    child.send("\x15")
    child.send("tabs")
    child.expect("2 shown")
    child.send("\x01")  # Ctrl-A: mark every shown row
    child.expect("3 marked")
    child.send("\r")
    child.expect("Summary: 3 imported")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert len(stored_titles(tmp_path)) == 3


def test_escape_imports_nothing(tmp_path: Path) -> None:
    child = spawn(tmp_path)
    child.expect("Import sessions")
    child.send("\x1b")
    child.expect("Nothing imported.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert not (tmp_path / "home" / "state.db").exists() or stored_titles(tmp_path) == []


def test_all_on_a_terminal_draws_a_progress_bar(tmp_path: Path) -> None:
    child = spawn(tmp_path, "--all")
    child.expect(r"Importing \[")
    child.expect("Summary: 4 imported, 0 appended, 0 unchanged, 3 with no conversation")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_the_installed_command_without_a_terminal(tmp_path: Path) -> None:
    env = environment(tmp_path)
    before = fingerprint(Path(env["CLAUDE_CONFIG_DIR"]))
    bare = subprocess.run(
        [hermes_command(), "sessions", "import"],
        env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
    )  # fmt: skip
    assert bare.returncode == 2
    assert bare.stdout == ""
    assert bare.stderr.startswith("hermes: nothing to import without a terminal")
    everything = subprocess.run(
        [hermes_command(), "sessions", "import", "--all"],
        env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
    )  # fmt: skip
    assert everything.returncode == 0, everything.stderr
    assert "Importing [" not in everything.stderr  # no bar without a terminal
    assert (
        len(re.findall(r"^  Continue it with:  hermes --resume \S+$", everything.stdout, re.M)) == 4
    )
    assert fingerprint(Path(env["CLAUDE_CONFIG_DIR"])) == before
    plugins = subprocess.run(
        [hermes_command(), "plugins"], env=env, capture_output=True, text=True, timeout=60
    )
    assert "importer:claude" in plugins.stdout and "source:claude-code" in plugins.stdout
