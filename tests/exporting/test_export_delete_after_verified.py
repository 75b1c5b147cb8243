"""``--delete-after-verified`` (SPEC X3): each session to its own file, every file re-read and
re-hashed, then one transaction that refuses when the delegate set or a message count changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from export_helpers import ExporterPlugin, host, invoke, make, sha256
from hermes_export_jsonl.exporter import JsonlExporter
from hermes_hookspecs import Message

from hermes_core.exporting import (
    ExportError,
    ExportRequest,
    export_each,
    plan_export,
    read_manifest,
    verify_export,
)
from hermes_core.exporting.deletion import delete_exported
from hermes_core.store import SessionStore


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def family(store: SessionStore) -> tuple[str, str, str, str]:
    """A parent, its delegate, the delegate's own delegate, and a branch of the parent."""
    parent = make(store, title="parent", messages=4)
    delegate = make(store, parent_session_id=parent, parent_kind="delegate", messages=3)
    nested = make(store, parent_session_id=delegate, parent_kind="delegate", messages=1)
    branch = make(store, parent_session_id=parent, parent_kind="branch", title="branch")
    return parent, delegate, nested, branch


def existing(home: Path) -> set[str]:
    with SessionStore.open(home) as store:
        return {row[0] for row in store.connection.execute("SELECT id FROM sessions")}


def test_each_session_is_exported_verified_then_all_deleted_together(home, tmp_path):
    with SessionStore.open(home) as store:
        parent, delegate, nested, branch = family(store)
    out = tmp_path / "kept"
    result = invoke(
        host(), home, "sessions", "export", str(out), "-f", "md", "--session-id", parent,
        "--delete-after-verified", "--yes",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Verified 3 file(s)" in result.stdout and "Deleted 3 session(s)" in result.stdout
    entries = read_manifest(out)
    assert [e["session_ids"] for e in entries] == [[parent], [delegate], [nested]]
    assert [e["message_count"] for e in entries] == [4, 3, 1]
    for entry in entries:
        assert sha256(out / entry["path"]) == entry["sha256"]
    assert existing(home) == {branch}  # a branch is a conversation of its own
    with SessionStore.open(home) as store:
        assert store.get_session(branch).parent_session_id is None


def test_jsonl_gives_every_session_its_own_file_too(home, tmp_path):
    with SessionStore.open(home) as store:
        parent, delegate, nested, _ = family(store)
    out = tmp_path / "kept"
    result = invoke(
        host(), home, "sessions", "export", str(out), "--session-id", parent,
        "--delete-after-verified", "--yes",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert {p.name for p in out.iterdir()} == {
        f"{parent}.jsonl",
        f"{delegate}.jsonl",
        f"{nested}.jsonl",
        "manifest.jsonl",
    }


def test_without_yes_it_is_refused_before_anything_is_written(home, tmp_path):
    # The seed: --delete-after-verified "exige --yes" (even when the answer would be yes).
    with SessionStore.open(home) as store:
        parent, *_ = family(store)
    out = tmp_path / "kept"
    result = invoke(
        host(), home, "sessions", "export", str(out), "-f", "md", "--session-id", parent,
        "--delete-after-verified", input="y\n",
    )  # fmt: skip
    assert result.exit_code == 1
    assert "needs --yes" in result.stderr
    assert len(existing(home)) == 4
    assert not out.exists()


def plan_for(store: SessionStore, home: Path, session_id: str, out: Path):
    plugin_host = host()
    request = ExportRequest(
        format="md", output=str(out), session_reference=session_id, delete_after_verified=True
    )
    return plan_export(store, plugin_host, request, home=home), plugin_host


def test_a_file_changed_after_the_export_refuses_the_delete(home, tmp_path):
    with SessionStore.open(home) as store:
        parent, *_ = family(store)
        plan, plugin_host = plan_for(store, home, parent, tmp_path / "o")
        verified = export_each(plan, store, plugin_host)
        tampered = verified.report.files[1].path
        tampered.write_text(tampered.read_text() + "\nedited by someone\n")
        with pytest.raises(ExportError, match="does not match what was exported"):
            verify_export(verified)
    assert len(existing(home)) == 4


def test_a_delegate_added_after_the_export_refuses_the_delete(home, tmp_path):
    with SessionStore.open(home) as store:
        parent, *_ = family(store)
        plan, plugin_host = plan_for(store, home, parent, tmp_path / "o")
        verified = export_each(plan, store, plugin_host)
        verify_export(verified)
        late = make(store, parent_session_id=parent, parent_kind="delegate")
        with pytest.raises(ExportError, match=f"changed during the export \\(new: {late}\\)"):
            delete_exported(store, parent, verified.exported_messages)
    assert len(existing(home)) == 5


def test_a_message_added_after_the_export_refuses_the_delete(home, tmp_path):
    with SessionStore.open(home) as store:
        parent, delegate, *_ = family(store)
        plan, plugin_host = plan_for(store, home, parent, tmp_path / "o")
        verified = export_each(plan, store, plugin_host)
        store.append_messages(delegate, [Message("assistant", "one more thing")])
        with pytest.raises(ExportError, match=f"session {delegate} changed"):
            delete_exported(store, parent, verified.exported_messages)
    assert len(existing(home)) == 4


class DelegateSpawningExporter(JsonlExporter):
    """Exports like jsonl, but a new delegate of the parent appears while it writes (another
    process recording a subagent, through its own connection)."""

    name = "racy"

    def __init__(self, home: Path, parent: list[str]) -> None:
        self.home = home
        self.parent = parent

    def export(self, sessions, sink, options):
        with SessionStore.open(self.home) as other:
            if len(self.parent) == 1:  # once: export runs once per session
                self.parent.append(
                    make(other, parent_session_id=self.parent[0], parent_kind="delegate")
                )
        return super().export(sessions, sink, options)


def test_a_delegate_appearing_during_the_export_refuses_the_delete(home, tmp_path):
    with SessionStore.open(home) as store:
        parent, *_ = family(store)
    spawned = [parent]
    plugin_host = host(("racy", ExporterPlugin(DelegateSpawningExporter(home, spawned))))
    result = invoke(
        plugin_host, home, "sessions", "export", str(tmp_path / "o"), "-f", "racy",
        "--session-id", parent, "--delete-after-verified", "--yes",
    )  # fmt: skip
    assert result.exit_code == 1
    assert "changed during the export" in result.stderr and "nothing was deleted" in result.stderr
    assert parent in existing(home) and set(spawned) <= existing(home)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ((), "works on one session named with --session-id"),
        (("--session-id", "SID", "--only", "user-prompts"), "not --only"),
        (("--session-id", "SID", "--lineage", "logical"), "leave out --lineage logical"),
    ],
    ids=["no-session-id", "only", "logical"],
)
def test_delete_after_verified_refuses_what_it_cannot_verify(home, tmp_path, extra, message):
    with SessionStore.open(home) as store:
        session_id = make(store)
    args = [a.replace("SID", session_id) for a in extra]
    result = invoke(
        host(), home, "sessions", "export", str(tmp_path / "o"), "--delete-after-verified",
        "--yes", *args,
    )  # fmt: skip
    assert result.exit_code == 1 and message in result.stderr
    assert existing(home) == {session_id}
    assert not (tmp_path / "o").exists()


def test_delete_after_verified_refuses_stdout_and_active_sessions(home):
    with SessionStore.open(home) as store:
        ended = make(store)
        active = make(store, ended=False)
    result = invoke(
        host(), home, "sessions", "export", "-", "--session-id", ended,
        "--delete-after-verified", "--yes",
    )  # fmt: skip
    assert result.exit_code == 1 and "not to stdout" in result.stderr
    result = invoke(
        host(), home, "sessions", "export", "-f", "md", "--session-id", active,
        "--delete-after-verified", "--yes",
    )  # fmt: skip
    assert result.exit_code == 1 and "still active" in result.stderr
    assert existing(home) == {ended, active}


def test_dry_run_names_what_would_be_deleted_and_changes_nothing(home, tmp_path):
    with SessionStore.open(home) as store:
        parent, delegate, nested, _ = family(store)
    result = invoke(
        host(), home, "sessions", "export", str(tmp_path / "o"), "-f", "md", "--session-id",
        parent, "--delete-after-verified", "--yes", "--dry-run",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (
        f"3 session(s) would be deleted once their files verify: {parent} {delegate} {nested}"
        in result.stdout
    )
    assert len(existing(home)) == 4 and not (tmp_path / "o").exists()
