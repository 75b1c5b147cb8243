"""``hermes sessions import --from hermes-agent`` end to end: the installed ``hermes`` in a
subprocess, the real entry point of ``hermes-import-hermes-agent``, real stores."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

from agent_stores import CONTINUATION, ROOT, T0, TELEGRAM, file_state, sample_store
from installed_hermes import hermes_command

from hermes_core.store import STATE_DB_NAME, SessionStore


def run_hermes(
    tmp_path: Path, *args: str, hermes_home: bool = True, agent_home: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "CODEX_", "CLAUDE_"))
    }
    env.update(
        HOME=str(tmp_path / "home"),
        COLUMNS="200",
        CLAUDE_CONFIG_DIR=str(tmp_path / "none"),
        CODEX_HOME=str(tmp_path / "none"),
    )
    if hermes_home:
        env["HERMES_HOME"] = str(tmp_path / "hermes-home")
    if agent_home:
        env["HERMES_AGENT_HOME"] = str(tmp_path / "agent")
    return subprocess.run(
        [hermes_command(), *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def agent_store(tmp_path: Path, version: int = 30) -> Path:
    (tmp_path / "agent").mkdir(exist_ok=True)
    sample, _ = sample_store(tmp_path / "agent" / "state.db", version)
    return sample.path


def test_import_from_the_default_place_then_again_then_search(tmp_path: Path) -> None:
    path = agent_store(tmp_path)
    before = file_state(path)

    first = run_hermes(tmp_path, "sessions", "import", "--from", "hermes-agent")

    assert first.returncode == 0, first.stderr
    assert first.stderr == ""
    assert f"✓ Imported Hermes Agent session (restored) as {ROOT}: my project" in first.stdout
    assert "  with 1 gateway routing row(s)" in first.stdout
    assert "Sessions written: 7." in first.stdout
    assert file_state(path) == before

    again = run_hermes(tmp_path, "sessions", "import", "--from", "hermes-agent")
    assert again.returncode == 0, again.stderr
    assert f"= {path}: already imported: no new sessions or messages" in again.stdout
    assert "Summary: 0 imported, 0 appended, 1 unchanged" in again.stdout

    for query, expected in (("数据库迁移", ROOT), ("rollback", CONTINUATION), ("東京", TELEGRAM)):
        found = run_hermes(tmp_path, "sessions", "search", "--json", query)
        assert found.returncode == 0, found.stderr
        ids = [result["session_id"] for result in json.loads(found.stdout)["results"]]
        assert ids[:1] == [expected], (query, found.stdout)

    with SessionStore.open(tmp_path / "hermes-home") as store:
        assert store.get_session(TELEGRAM).pinned
        assert store.get_session(CONTINUATION).parent_kind == "compression"


def test_a_path_is_recognised_without_from_and_all_includes_the_default(tmp_path: Path) -> None:
    path = agent_store(tmp_path)
    elsewhere = tmp_path / "copy.db"
    elsewhere.write_bytes(path.read_bytes())

    by_path = run_hermes(tmp_path, "sessions", "import", str(elsewhere))
    assert by_path.returncode == 0, by_path.stderr
    assert "Sessions written: 7." in by_path.stdout

    everything = run_hermes(tmp_path, "sessions", "import", "--all")
    assert everything.returncode == 0, everything.stderr
    # The same sessions reached through another file: already here, nothing doubled.
    assert "Summary: 0 imported, 0 appended, 1 unchanged" in everything.stdout
    with SessionStore.open(tmp_path / "hermes-home") as store:
        assert store.connection.execute("SELECT count(*) FROM sessions").fetchone()[0] == 7


def test_a_grown_store_appends(tmp_path: Path) -> None:
    path = agent_store(tmp_path)
    run_hermes(tmp_path, "sessions", "import", "--from", "hermes-agent")
    with sqlite3.connect(path) as connection:
        connection.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
            (ROOT, "a follow-up about indexes", T0 + 9000),
        )

    grown = run_hermes(tmp_path, "sessions", "import", "--from", "hermes-agent")

    assert grown.returncode == 0, grown.stderr
    assert f"↻ Appended 1 new message(s) to 1 session(s) from {path}" in grown.stdout
    assert "Summary: 0 imported, 1 appended, 0 unchanged" in grown.stdout


def test_the_default_place_being_this_store_is_refused(tmp_path: Path) -> None:
    # No HERMES_HOME and no HERMES_AGENT_HOME: both tools default to ~/.hermes/state.db.
    created = run_hermes(tmp_path, "sessions", "list", hermes_home=False, agent_home=False)
    assert created.returncode == 0, created.stderr
    own = tmp_path / "home" / ".hermes" / STATE_DB_NAME
    assert own.exists()

    refused = run_hermes(
        tmp_path,
        "sessions",
        "import",
        "--from",
        "hermes-agent",
        hermes_home=False,
        agent_home=False,
    )

    assert refused.returncode == 1
    assert refused.stderr == (
        f"hermes: {own}: this is the session store being imported into; "
        "refusing to import it into itself (if the other tool shares this home, give its "
        "store's path, or set HERMES_AGENT_HOME, or run this tool with --home elsewhere)\n"
    )
    everything = run_hermes(
        tmp_path, "sessions", "import", "--all", hermes_home=False, agent_home=False
    )
    assert "No sessions found to import." in everything.stdout  # left out, not an error


def test_this_store_given_as_a_path_is_refused_before_any_importer_opens_it(
    tmp_path: Path,
) -> None:
    # Without --from each importer's sniff would open the file by path in this process,
    # which holds the store open (DESIGN §9): it is refused first, and the home as a folder
    # imports nothing of it.
    home = tmp_path / "hermes-home"
    assert run_hermes(tmp_path, "sessions", "list").returncode == 0
    own = home / STATE_DB_NAME
    for path in (own, Path(f"{own}-wal"), Path(f"{own}-shm")):
        refused = run_hermes(tmp_path, "sessions", "import", str(path))
        assert refused.returncode == 1
        assert refused.stderr == (
            f"hermes: {path}: this is the session store being imported into; "
            "refusing to import it into itself\n"
        )
    folder = run_hermes(tmp_path, "sessions", "import", str(home))
    assert folder.returncode == 1
    assert folder.stderr.startswith(f"hermes: {home}: no log any importer reads was found")
    assert run_hermes(tmp_path, "sessions", "list").returncode == 0


def test_bad_stores_are_one_line_each(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    newer = agent_store(tmp_path, 31)
    missing_default = run_hermes(
        tmp_path, "sessions", "import", "--from", "hermes-agent", agent_home=False
    )

    assert missing_default.returncode == 1
    assert missing_default.stderr == (
        "hermes: no Hermes Agent store was found in its default place; give its PATH\n"
    )
    for path, message in (
        (text, "cannot import: not a Hermes Agent store (not an SQLite database)"),
        (newer, "cannot import: this Hermes Agent store has schema v31, newer than this importer "
         "knows (up to v30): upgrade hermes-import-hermes-agent"),
        (tmp_path / "nowhere.db", "cannot read: no such file"),
    ):  # fmt: skip
        result = run_hermes(tmp_path, "sessions", "import", "--from", "hermes-agent", str(path))
        assert result.returncode == 1, result.stdout
        assert result.stderr == f"hermes: {path}: {message}\n"
        assert "Traceback" not in result.stdout
    with SessionStore.open(tmp_path / "hermes-home") as store:
        assert store.connection.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0


def test_hermes_plugins_lists_the_importer(tmp_path: Path) -> None:
    listed = run_hermes(tmp_path, "plugins", "--json")
    assert listed.returncode == 0, listed.stderr
    [plugin] = [
        p
        for p in json.loads(listed.stdout)
        if p.get("distribution") == "hermes-import-hermes-agent"
    ]
    assert "importer:hermes-agent" in plugin["components"]
