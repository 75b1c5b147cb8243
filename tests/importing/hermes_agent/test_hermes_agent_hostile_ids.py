"""A Hermes Agent ``state.db`` whose session ids would leave a folder is imported through the
installed ``hermes`` with new ids, each reported in a ``note:`` line; the lineage between the
renamed sessions holds, and nothing is written outside the home."""

from __future__ import annotations

from pathlib import Path

from agent_stores import T0, AgentStore
from hostile_ids import HOSTILE_IDS
from installed_hermes import run_hermes_in

from hermes_core.store import SessionStore
from hermes_core.store.ids import looks_like_session_id


def test_hostile_agent_ids_are_imported_under_new_ids_each_noted(tmp_path: Path) -> None:
    agent = AgentStore.create(tmp_path / "state.db", 30)
    for number, hostile in enumerate(HOSTILE_IDS):
        agent.add_session(id=hostile, source="cli", started_at=T0 + number)
        agent.add_message(hostile, "user", f"question {number}", T0 + number + 1)
    parent, child = HOSTILE_IDS[0], "../child"
    agent.add_session(
        id=child, source="cli", started_at=T0 + 50, parent_session_id=parent, ended_at=T0 + 60
    )
    agent.add_message(child, "user", "continued", T0 + 51)
    agent.close()
    home = tmp_path / "home"

    done = run_hermes_in(home, "sessions", "import", "--from", "hermes-agent", str(agent.path))

    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    notes = [line for line in done.stdout.splitlines() if line.startswith("  note: ")]
    for hostile in (*HOSTILE_IDS, child):
        assert any(
            f"session {hostile!r}: that is not a session id" in note and "imported as " in note
            for note in notes
        ), (hostile, done.stdout)
    with SessionStore.open(home) as store:
        sessions = store.list_sessions(limit=100)
        assert len(sessions) == len(HOSTILE_IDS) + 1
        assert all(looks_like_session_id(s.id) for s in sessions)
        by_first = {store.messages(s.id)[0].content: s for s in sessions}
        renamed_parent = by_first["question 0"]
        assert by_first["continued"].parent_session_id == renamed_parent.id
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "state.db"]

    again = run_hermes_in(home, "sessions", "import", "--from", "hermes-agent", str(agent.path))
    assert again.returncode == 0, again.stderr
    assert "already imported" in again.stdout
