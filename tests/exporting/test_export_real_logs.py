"""Exports of real agent logs (../shared/fixtures, imported by the real importers), through the
installed ``hermes``: the jsonl backup restores them exactly, every markdown file has parseable
front matter and a verified hash, and a session with subagents deletes only once each of its
files verifies."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from export_helpers import sha256
from installed_hermes import hermes_command

from hermes_core.exporting import read_manifest
from hermes_core.store import SessionStore

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"
pytestmark = pytest.mark.skipif(
    not (FIXTURES / "claude").is_dir(), reason=f"the real logs folder {FIXTURES} is absent"
)


def hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = hermes_command()
    environment = {**os.environ, "HOME": str(home.parent), "HERMES_HOME": str(home)}
    for name in ("HERMES_DEBUG", "HERMES_PLUGINS"):
        environment.pop(name, None)
    done = subprocess.run(
        [command, *args], capture_output=True, text=True, env=environment, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def real_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("real") / "home"
    folders = [str(FIXTURES / name) for name in ("claude", "codex") if (FIXTURES / name).is_dir()]
    hermes(home, "sessions", "import", *folders)
    return home


def contents(home: Path) -> dict[str, tuple[object, list[object]]]:
    with SessionStore.open(home) as store:
        ids = [row[0] for row in store.connection.execute("SELECT id FROM sessions")]
        return {
            i: (store.get_session(i), [dataclasses.replace(m, id=None) for m in store.messages(i)])
            for i in ids
        }


def test_a_backup_of_real_imported_logs_restores_exactly(real_home, tmp_path):
    backup = tmp_path / "backup.jsonl"
    hermes(real_home, "sessions", "export", str(backup))
    restored = tmp_path / "restored"
    hermes(restored, "sessions", "import", "--from", "jsonl", str(backup))
    before, after = contents(real_home), contents(restored)
    assert len(before) >= 10 and set(after) == set(before)
    for session_id, stored in before.items():
        assert after[session_id] == stored, session_id


def test_markdown_of_real_logs_has_yaml_front_matter_and_verified_hashes(real_home, tmp_path):
    out = tmp_path / "md"
    hermes(real_home, "sessions", "export", str(out), "-f", "qmd", "--min-messages", "0")
    entries = read_manifest(out)
    assert len(entries) == len(list(out.glob("*.qmd"))) >= 10
    for entry in entries:
        path = out / entry["path"]
        assert sha256(path) == entry["sha256"]
        meta = yaml.safe_load(path.read_text(encoding="utf-8").split("---\n")[1])
        assert meta["session_id"] == entry["session_ids"][0] and meta["format"] == "html"
        assert meta["message_count"] == entry["message_count"]


def test_redacted_prompts_of_real_logs_are_one_record_per_user_message(real_home):
    done = hermes(real_home, "sessions", "export", "-", "--only", "user-prompts", "--redact")
    records = [json.loads(line) for line in done.stdout.splitlines()]
    with SessionStore.open(real_home) as store:
        users = store.connection.execute("SELECT count(*) FROM messages WHERE role = 'user'")
        assert len(records) == users.fetchone()[0] > 0


def test_a_real_session_with_subagents_is_deleted_only_after_each_file_verifies(
    real_home, tmp_path
):
    home = tmp_path / "copy"
    backup = tmp_path / "backup.jsonl"
    hermes(real_home, "sessions", "export", str(backup))
    hermes(home, "sessions", "import", "--from", "jsonl", str(backup))
    with SessionStore.open(home) as store:
        row = store.connection.execute(
            "SELECT parent_session_id, count(*) FROM sessions WHERE parent_kind = 'delegate' "
            "GROUP BY parent_session_id ORDER BY count(*) DESC LIMIT 1"
        ).fetchone()
    if row is None:
        pytest.skip("the real logs hold no session with subagents")
    parent, delegates = row
    out = tmp_path / "kept"
    done = hermes(
        home, "sessions", "export", str(out), "-f", "md", "--session-id", parent,
        "--delete-after-verified", "--yes",
    )  # fmt: skip
    assert f"Deleted {delegates + 1} session(s)" in done.stdout
    entries = read_manifest(out)
    assert len(entries) == delegates + 1 and entries[0]["session_ids"] == [parent]
    for entry in entries:
        assert sha256(out / entry["path"]) == entry["sha256"]
    remaining = contents(home)
    assert parent not in remaining and len(remaining) == len(contents(real_home)) - delegates - 1
