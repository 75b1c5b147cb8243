"""A Claude Code subagent transcript whose session's transcript is gone (deleted by hand, or
by Claude Code's own clean-up) is still a conversation: ``import --all``, ``import FILE`` and
``import FOLDER`` bring it in as a session without a parent, say so in a ``note:`` line and
count it — through the installed ``hermes``."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from claude_helpers import S20, S21, copy_tree, fingerprint
from installed_hermes import run_hermes_in

NESTED_AGENT = "agent-a0f1e2d3c4b5a6978"


def hermes(home: Path, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed ``hermes`` with Claude Code's folder at ``config``."""
    env = {"CLAUDE_CONFIG_DIR": str(config), "HOME": str(home.parent / "nobody")}
    return run_hermes_in(home, *args, env=env)


def orphaned_tree(tmp_path: Path) -> tuple[Path, Path]:
    """The sample tree with the 2.1 session's transcript deleted; returns (config, the
    session's folder holding ``subagents/``)."""
    config = copy_tree(tmp_path)
    parser = config / "projects" / S21.parent.name
    (parser / S21.name).unlink()
    return config, parser / S21.stem


def imported(output: str) -> list[str]:
    return re.findall(r"✓ Imported Claude Code session as (\S+):", output)


def test_all_imports_an_orphaned_subagent_once_with_a_note(tmp_path: Path) -> None:
    config, _ = orphaned_tree(tmp_path)
    before = fingerprint(config)
    home = tmp_path / "home"

    first = hermes(home, config, "sessions", "import", "--all")

    assert first.returncode == 0, first.stderr
    ids = imported(first.stdout)
    # The 2.0 and 1.0 sessions, the orphaned 2.1 subagent, and the sample's 2.0 warm-up agent
    # (agent-9c9c9c9c.jsonl) whose session's transcript was never there.
    assert len(ids) == 4
    [note] = [
        line
        for line in first.stdout.splitlines()
        if "imported without a parent" in line and "11111111-" in line
    ]
    orphan = note.split()[1]
    assert orphan in ids
    assert "11111111-aaaa-4bbb-8ccc-000000000001" in note
    assert "Summary: 4 imported" in first.stdout
    shown = hermes(home, config, "sessions", "show", orphan)
    assert shown.returncode == 0, shown.stderr
    assert "Claude Code subagent" in shown.stdout
    as_json = json.loads(hermes(home, config, "sessions", "show", orphan, "--json").stdout)
    assert as_json["parent_session_id"] is None
    assert len(as_json["messages"]) >= 2

    again = hermes(home, config, "sessions", "import", "--all")
    assert again.returncode == 0, again.stderr
    assert "0 imported, 0 appended, 4 unchanged" in again.stdout
    assert fingerprint(config) == before  # foreign files: only read


def test_the_orphaned_file_and_its_session_folder_are_recognised(tmp_path: Path) -> None:
    config, session_folder = orphaned_tree(tmp_path)
    agent_file = session_folder / "subagents" / f"{NESTED_AGENT}.jsonl"

    by_file = hermes(tmp_path / "one", config, "sessions", "import", str(agent_file))
    by_folder = hermes(tmp_path / "two", config, "sessions", "import", str(session_folder))

    for result in (by_file, by_folder):
        assert result.returncode == 0, result.stdout + result.stderr
        assert len(imported(result.stdout)) == 1, result.stdout
        assert "imported without a parent" in result.stdout
        assert "no installed importer" not in result.stdout + result.stderr


def test_a_sibling_subagent_file_of_claude_code_2_0_is_recognised_once_its_session_is_gone(
    tmp_path: Path,
) -> None:
    config = copy_tree(tmp_path)
    parser = config / "projects" / S20.parent.name
    sibling = parser / "agent-2b2b2b2b.jsonl"  # names session 22222222…

    kept = hermes(tmp_path / "one", config, "sessions", "import", str(sibling))
    assert kept.returncode != 0  # its session is there: import that, the subagent comes along
    assert "no installed importer recognises it" in kept.stderr

    (parser / S20.name).unlink()
    orphaned = hermes(tmp_path / "two", config, "sessions", "import", str(sibling))
    assert orphaned.returncode == 0, orphaned.stderr
    assert len(imported(orphaned.stdout)) == 1
    assert "(22222222-aaaa-4bbb-8ccc-000000000002)" in orphaned.stdout


def test_all_imports_an_orphaned_sibling_subagent_of_claude_code_2_0_once(tmp_path: Path) -> None:
    config = copy_tree(tmp_path)
    parser = config / "projects" / S20.parent.name
    (parser / S20.name).unlink()
    home = tmp_path / "home"

    first = hermes(home, config, "sessions", "import", "--all")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "(22222222-aaaa-4bbb-8ccc-000000000002)" in first.stdout
    assert "imported without a parent" in first.stdout
    again = hermes(home, config, "sessions", "import", "--all")
    assert again.returncode == 0, again.stderr
    assert " 0 imported, 0 appended" in again.stdout
