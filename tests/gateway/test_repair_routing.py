"""``hermes sessions repair-routing`` on crafted stores (SPEC G6): both evidence rules, both
ambiguities, report-only by default, --apply backs up, adopts and retires."""

from __future__ import annotations

from pathlib import Path

from hermes_hookspecs import Message
from typer.testing import CliRunner

from hermes_core.cli.app import build_app
from hermes_core.gateway.routing import Router
from hermes_core.plugins import PluginHost
from hermes_core.store import SessionStore
from hermes_core.store.routed_sessions import RouteOrigin, RoutingStore

runner = CliRunner()


def hermes(home: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(
        build_app(PluginHost(load_entry_points=False)), ["--home", str(home), *args]
    )
    return result.exit_code, result.output


def origin(chat: str, user: str | None = None) -> RouteOrigin:
    return RouteOrigin(platform="telegram", chat_id=chat, chat_type="dm", user_id=user)


def keyed(
    store: SessionStore, chat: str, *, started: float, quiet_at: float, user: str | None = None
) -> str:
    """A routed telegram session whose last message is at ``quiet_at``."""
    key = f"agent:main:telegram:dm:{chat}"
    session = RoutingStore(store).create_routed_session(key, origin(chat, user), now=started)
    store.append_message(session.id, Message("user", f"hi from {chat}", timestamp=quiet_at))
    return session.id


def orphan(
    store: SessionStore, *, started: float, parent: str | None = None, user: str | None = None
) -> str:
    """A telegram session with messages and no routing identity."""
    session = store.create_session(
        "telegram",
        gateway=True,
        started_at=started,
        user_id=user,
        parent_session_id=parent,
        parent_kind="compression" if parent else None,
    )
    store.append_message(
        session.id, Message("user", "the live conversation", timestamp=started + 5)
    )
    if parent:
        # Today a continuation takes the route over in its own transaction; craft the damage
        # older versions left: the continuation without its identity, the route on the parent.
        store.connection.execute(
            "UPDATE sessions SET session_key = NULL, chat_id = NULL, chat_type = NULL WHERE id = ?",
            (session.id,),
        )
        store.connection.execute(
            "UPDATE gateway_routing SET session_id = ? WHERE session_id = ?", (parent, session.id)
        )
    return session.id


def test_lineage_evidence_adopts_with_apply_and_retires_the_predecessor(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path) as store:
        donor = keyed(store, "c1", started=1_000.0, quiet_at=1_010.0)
        # Long after the donor went quiet: only lineage can connect them.
        lost = orphan(store, started=90_000.0, parent=donor)
    code, report = hermes(tmp_path, "sessions", "repair-routing")
    assert code == 0
    assert f"{lost} (telegram, 1 messages)" in report
    assert f"→ adopt into agent:main:telegram:dm:c1 (from {donor}, evidence: lineage" in report
    assert "Nothing was changed" in report
    with SessionStore.open(tmp_path) as store:
        assert store.get_session(lost).session_key is None  # report-only wrote nothing
    code, applied = hermes(tmp_path, "sessions", "repair-routing", "--apply")
    assert code == 0, applied
    assert "stop" in applied.lower() and "Backup written to" in applied
    backups = [p for p in tmp_path.glob("state.db.backup-*") if not p.name.endswith("-wal")]
    assert len(backups) == 1
    with SessionStore(backups[0]) as backup:
        assert backup.get_session(lost).session_key is None  # taken before the change
    with SessionStore.open(tmp_path) as store:
        adopted = store.get_session(lost)
        assert adopted.session_key == "agent:main:telegram:dm:c1" and adopted.chat_id == "c1"
        assert store.get_session(donor).end_reason == "superseded_by_repair"
        route = RoutingStore(store).route("agent:main:telegram:dm:c1")
        assert route is not None and route.session_id == lost
        # Restart recovery goes to the adopted conversation and never back to the donor.
        resolved = Router(store).resolve("agent:main:telegram:dm:c1", origin("c1"))
        assert resolved.session.id == lost
    assert hermes(tmp_path, "sessions", "repair-routing")[1].startswith("No orphaned")


def test_contiguity_evidence_needs_exactly_one_predecessor_in_the_window(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path) as store:
        donor = keyed(store, "c1", started=1_000.0, quiet_at=5_000.0)
        keyed(store, "c2", started=1_000.0, quiet_at=2_000.0)  # quiet long before: out of window
        lost = orphan(store, started=5_300.0)
    code, report = hermes(tmp_path, "sessions", "repair-routing")
    assert code == 0
    assert f"(from {donor}, evidence: contiguity: went quiet 300s before" in report
    # A narrower window leaves it alone, with the reason.
    _, narrow = hermes(tmp_path, "sessions", "repair-routing", "--max-gap-seconds", "100")
    assert "✗ not repairable — no keyed predecessor fell quiet within 100s" in narrow
    code, _ = hermes(tmp_path, "sessions", "repair-routing", "--apply")
    assert code == 0
    with SessionStore.open(tmp_path) as store:
        assert store.get_session(lost).session_key == "agent:main:telegram:dm:c1"
        assert store.get_session(donor).end_reason == "superseded_by_repair"


def test_two_candidate_predecessors_are_ambiguous_and_left_alone(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path) as store:
        first = keyed(store, "c1", started=1_000.0, quiet_at=5_000.0)
        second = keyed(store, "c2", started=1_000.0, quiet_at=5_100.0)
        lost = orphan(store, started=5_300.0)
    code, report = hermes(tmp_path, "sessions", "repair-routing", "--apply")
    assert code == 0
    assert "ambiguous: more than one keyed predecessor matches this window" in report
    assert first in report and second in report
    assert not list(tmp_path.glob("state.db.backup-*"))  # nothing to do, nothing touched
    with SessionStore.open(tmp_path) as store:
        assert store.get_session(lost).session_key is None
        assert store.get_session(first).end_reason is None
        assert store.get_session(second).end_reason is None


def test_two_orphans_claiming_one_predecessor_are_both_ambiguous(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path) as store:
        donor = keyed(store, "c1", started=1_000.0, quiet_at=5_000.0)
        one = orphan(store, started=5_200.0)
        two = orphan(store, started=90_000.0, parent=donor)
    code, report = hermes(tmp_path, "sessions", "repair-routing", "--apply")
    assert code == 0
    assert report.count(f"ambiguous: 2 orphans claim the predecessor {donor}") == 2
    with SessionStore.open(tmp_path) as store:
        assert store.get_session(one).session_key is None
        assert store.get_session(two).session_key is None
        assert store.get_session(donor).end_reason is None


def test_a_users_predecessor_is_not_another_users(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path) as store:
        keyed(store, "c1", started=1_000.0, quiet_at=5_000.0, user="alice")
        orphan(store, started=5_300.0, user="bob")
    _, report = hermes(tmp_path, "sessions", "repair-routing")
    assert "not repairable" in report


def test_branches_cli_sessions_and_imports_are_not_orphans(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path) as store:
        donor = keyed(store, "c1", started=1_000.0, quiet_at=5_000.0)
        cli = store.create_session("cli", started_at=5_100.0)
        store.append_message(cli.id, Message("user", "a terminal chat", timestamp=5_101.0))
        branch = store.create_session(
            "telegram",
            gateway=True,
            started_at=5_100.0,
            parent_session_id=donor,
            parent_kind="branch",
        )
        RoutingStore(store).clear("agent:main:telegram:dm:c1")  # the branch took the route
        store.connection.execute(
            "UPDATE sessions SET session_key = NULL WHERE id = ?", (branch.id,)
        )
        store.append_message(branch.id, Message("user", "branched", timestamp=5_101.0))
    _, report = hermes(tmp_path, "sessions", "repair-routing")
    assert report.startswith("No orphaned gateway sessions")


def test_apply_refuses_while_a_gateway_runs(tmp_path: Path) -> None:
    import json
    import os

    with SessionStore.open(tmp_path) as store:
        donor = keyed(store, "c1", started=1_000.0, quiet_at=1_010.0)
        orphan(store, started=90_000.0, parent=donor)
    status = tmp_path / "gateway" / "status.json"
    status.parent.mkdir()
    status.write_text(json.dumps({"pid": os.getpid(), "started_at": 0, "platforms": []}))
    code, output = hermes(tmp_path, "sessions", "repair-routing", "--apply")
    assert code == 1
    assert "the gateway is running" in output and "stop it first" in output
    assert not list(tmp_path.glob("state.db.backup-*"))
