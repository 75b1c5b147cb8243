"""What ``hermes sessions import`` prints for a Hermes Agent store (typer's CliRunner on
``build_app`` with the real ``hermes-agent`` plugin module): one count line for a store of many
sessions, the appended line for a grown one, notes for clashes."""

from __future__ import annotations

from pathlib import Path

import hermes_import_hermes_agent.plugin
import pytest
from agent_stores import ROOT, T0, AgentStore, sample_store
from typer.testing import CliRunner, Result

from hermes_core.cli.app import build_app
from hermes_core.plugins import PluginHost
from hermes_core.store import SessionStore

runner = CliRunner()


@pytest.fixture
def host() -> PluginHost:
    return PluginHost(
        load_entry_points=False,
        extra_plugins=[("hermes-agent", hermes_import_hermes_agent.plugin)],
    )


def run(host: PluginHost, home: Path, *args: str) -> Result:
    return runner.invoke(build_app(host), ["--home", str(home), "sessions", "import", *args])


def test_a_store_of_many_sessions_is_one_count_line(host: PluginHost, tmp_path: Path) -> None:
    agent = AgentStore.create(tmp_path / "state.db", 30)
    for number in range(12):
        session_id = f"20260401_0900{number:02d}_{number:06x}"
        agent.add_session(
            id=session_id, source="cli", started_at=T0 + number, title=f"chat {number}"
        )
        agent.add_message(session_id, "user", f"question {number}", T0 + number + 1)
    agent.add_session(
        id="sub",
        source="subagent",
        started_at=T0 + 50,
        parent_session_id=f"20260401_090000_{0:06x}",
    )
    agent.add_message("sub", "user", "delegated work", T0 + 51)
    agent.close()

    result = run(host, tmp_path / "home", "--from", "hermes-agent", str(agent.path))

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == (
        f"✓ Imported 12 Hermes Agent sessions and 1 delegate session(s) from {agent.path}"
    )
    assert lines[1] == "  List them with:  hermes sessions list --limit 12"
    assert lines[-1].startswith("Summary: 1 imported, 0 appended, 0 unchanged")
    assert lines[-1].endswith("Sessions written: 13.")


def test_a_grown_store_reports_appends_and_clashes_are_notes(
    host: PluginHost, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    with SessionStore.open(home) as store:
        store.create_session(source="cli", title="my project")
    sample, agent = sample_store(tmp_path / "state.db", 30, keep_open=True)
    first = run(host, home, str(sample.path))  # recognised without --from
    assert first.exit_code == 0, first.output
    assert "✓ Imported Hermes Agent session (restored) as " in first.output
    assert (
        f"  note: session {ROOT}: the title 'my project' is used by another session; "
        "imported as 'my project (2)'"
    ) in first.output
    assert "  with 1 gateway routing row(s)" in first.output
    agent.add_message(ROOT, "user", "and now?", T0 + 9999)
    agent.close()

    grown = run(host, home, str(sample.path))

    assert grown.exit_code == 0, grown.output
    assert grown.output.splitlines()[0] == (
        f"↻ Appended 1 new message(s) to 1 session(s) from {sample.path}"
    )
    assert "Summary: 0 imported, 1 appended, 0 unchanged" in grown.output
