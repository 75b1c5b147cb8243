"""The export engine's guarantees: exporters get an iterator of records loaded one at a time,
files are private and atomic, manifests hash what is on disk."""

from __future__ import annotations

import gc
import io
import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from export_helpers import ExporterPlugin, RecordingExporter, host, make, sha256
from hermes_hookspecs import ExportedFile, SessionRecord
from installed_hermes import hermes_command

from hermes_core.exporting import (
    MANIFEST_NAME,
    ExportError,
    ExportRequest,
    FileSink,
    plan_export,
    read_manifest,
    run_export,
)
from hermes_core.exporting.manifest import write_manifest
from hermes_core.exporting.verification import verify_coverage, verify_files
from hermes_core.store import SessionStore


class ProbingExporter(RecordingExporter):
    """Checks, as it consumes, how many records the engine has built and how many are alive."""

    def __init__(self, loaded: list[int]) -> None:
        super().__init__("probe")
        self.loaded = loaded
        self.loaded_when_taken: list[int] = []
        self.alive_when_taken: list[int] = []

    def export(self, sessions, sink, options):
        assert isinstance(sessions, Iterator)
        assert not isinstance(sessions, list | tuple)
        for record in sessions:
            self.loaded_when_taken.append(self.loaded[0])
            self.records.append(record.session.id)  # ids only: hold nothing else
            del record
            gc.collect()
            self.alive_when_taken.append(
                sum(1 for item in gc.get_objects() if isinstance(item, SessionRecord))
            )
        return super().export(iter(()), sink, options)


def test_the_exporter_gets_an_iterator_that_loads_one_record_at_a_time(tmp_path, monkeypatch):
    home = tmp_path / "home"
    with SessionStore.open(home) as store:
        ids = [make(store, days_ago=30 - i, messages=6) for i in range(25)]
        # The engine must stream: listing the whole selection is not allowed.
        for name in ("select_sessions", "list_sessions"):
            monkeypatch.setattr(
                SessionStore, name, lambda *a, **k: pytest.fail("the engine listed sessions")
            )
        loaded = [0]
        probe = ProbingExporter(loaded)
        plugin_host = host(("probe", ExporterPlugin(probe)))
        plan = plan_export(
            store,
            plugin_host,
            ExportRequest(format="probe", output=str(tmp_path / "out.txt")),
            home=home,
        )

        def count(_record: SessionRecord) -> None:
            loaded[0] += 1

        report = run_export(plan, store, plugin_host, on_record=count)
    assert probe.records == ids
    assert probe.loaded_when_taken == list(range(1, 26))  # built only when asked for
    # Only the record being handed over is alive (the engine's generator still names it):
    # none of the ones before it are kept.
    assert max(probe.alive_when_taken) == 1
    assert report.sessions_written == 25


# ---------------------------------------------------------------- the sink


@pytest.mark.parametrize(
    "name", ["../escape.md", "/etc/passwd", "a/../../b.md", "", "a\\..\\b", "nul\x00.md"]
)
def test_a_directory_sink_refuses_names_that_could_leave_it(tmp_path, name):
    sink = FileSink("directory", tmp_path / "out")
    with pytest.raises(ExportError, match="unsafe file name"):
        sink.open_binary(name)
    assert not (tmp_path / "escape.md").exists()


def test_files_are_created_0600_whatever_the_umask(tmp_path):
    previous = os.umask(0)
    try:
        sink = FileSink("directory", tmp_path / "out")
        with sink.open_binary("nested/a.md") as handle:
            handle.write(b"text")
    finally:
        os.umask(previous)
    written = tmp_path / "out" / "nested" / "a.md"
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert stat.S_IMODE(written.parent.stat().st_mode) == 0o700
    assert (sink.files_written, sink.last_written) == (1, written)
    assert sink.pending_folders == {written.parent}  # its rename is made durable by finish()
    sink.finish()
    assert sink.pending_folders == set()


def test_a_failed_write_leaves_the_previous_file_and_no_temporary_file(tmp_path):
    target = tmp_path / "backup.jsonl"
    target.write_bytes(b"the old backup\n")
    sink = FileSink("file", target)
    with pytest.raises(RuntimeError), sink.open_binary("ignored") as handle:
        handle.write(b"half of a new")
        raise RuntimeError("disk gone")
    assert target.read_bytes() == b"the old backup\n"
    assert [p.name for p in tmp_path.iterdir()] == ["backup.jsonl"]
    assert sink.files_written == 0


def test_an_abandoned_handle_never_replaces_the_file(tmp_path):
    target = tmp_path / "backup.jsonl"
    target.write_bytes(b"old\n")
    handle = FileSink("file", target).open_binary("x")
    handle.write(b"partial")
    del handle
    gc.collect()
    assert target.read_bytes() == b"old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["backup.jsonl"]


def test_a_file_sink_takes_one_file_only(tmp_path):
    sink = FileSink("file", tmp_path / "one.md")
    with sink.open_binary("a.md") as handle:
        handle.write(b"a")
    with pytest.raises(ExportError, match="give a directory"):
        sink.open_binary("b.md")


def test_the_stdout_sink_leaves_stdout_open(monkeypatch):
    buffer = io.BytesIO()
    monkeypatch.setattr("hermes_core.exporting.sink._stdout_binary", lambda: buffer)
    sink = FileSink("stdout")
    for part in (b"one\n", b"two\n"):
        with sink.open_binary("ignored") as handle:
            handle.write(part)
    assert not buffer.closed
    assert buffer.getvalue() == b"one\ntwo\n"
    assert sink.destination is None


# ---------------------------------------------------------------- manifest and verification


def exported(path: Path, session_id: str, count: int = 1) -> ExportedFile:
    return ExportedFile(path, (session_id,), count, sha256(path))


def test_the_manifest_hashes_the_files_and_keeps_lines_of_files_not_rewritten(tmp_path):
    (tmp_path / "a.md").write_text("a")
    (tmp_path / "b.md").write_text("b")
    write_manifest(
        tmp_path,
        [exported(tmp_path / "a.md", "A"), exported(tmp_path / "b.md", "B")],
        format_name="md",
        lineage_of={},
    )
    (tmp_path / "b.md").write_text("b, again")
    write_manifest(
        tmp_path,
        [ExportedFile(Path("b.md"), ("B",), 2, sha256(tmp_path / "b.md"))],
        format_name="md",
        lineage_of={"B": ("B0", "B")},
    )
    entries = {e["path"]: e for e in read_manifest(tmp_path)}
    assert set(entries) == {"a.md", "b.md"}
    assert entries["b.md"]["sha256"] == sha256(tmp_path / "b.md")
    assert entries["b.md"]["lineage_ids"] == ["B0", "B"]
    assert entries["b.md"]["message_count"] == 2
    assert stat.S_IMODE((tmp_path / MANIFEST_NAME).stat().st_mode) == 0o600
    raw = (tmp_path / MANIFEST_NAME).read_text().splitlines()
    assert all(json.loads(line)["format"] == "md" for line in raw)


def test_verification_catches_a_changed_a_missing_and_an_incomplete_file(tmp_path):
    path = tmp_path / "a.md"
    path.write_text("as exported")
    good = exported(path, "A", 3)
    verify_files([good])
    path.write_text("as exported, then edited")
    with pytest.raises(ExportError, match="does not match"):
        verify_files([good])
    path.unlink()
    with pytest.raises(ExportError, match="cannot re-read"):
        verify_files([good])
    with pytest.raises(ExportError, match="holds 3 message"):
        verify_coverage([good], {"A": 4})
    with pytest.raises(ExportError, match="not written to a file of its own"):
        verify_coverage([good], {"A": 3, "B": 1})


class DeletingExporter(RecordingExporter):
    """Once it has taken the first record, another process deletes ``doomed`` (as a prune or a
    ``hermes sessions delete`` running beside the export would), then it takes the rest."""

    def __init__(self, home: Path, doomed: str) -> None:
        super().__init__("deleting")
        self.home = home
        self.doomed = doomed

    def export(self, sessions, sink, options):
        def then_delete():
            for number, record in enumerate(sessions):
                yield record
                if number == 0:
                    deleted = subprocess.run(
                        [hermes_command(), "--home", str(self.home), "sessions", "delete",
                         self.doomed, "--yes"],
                        capture_output=True, text=True, timeout=60,
                    )  # fmt: skip
                    assert deleted.returncode == 0, deleted.stderr

        return super().export(then_delete(), sink, options)


def test_a_session_deleted_by_another_process_during_the_export_is_left_out(tmp_path):
    home = tmp_path / "home"
    with SessionStore.open(home) as store:
        ids = [make(store, days_ago=30 - i, messages=4) for i in range(5)]
        exporter = DeletingExporter(home, ids[3])
        plugin_host = host(("deleting", ExporterPlugin(exporter)))
        plan = plan_export(
            store,
            plugin_host,
            ExportRequest(format="deleting", output=str(tmp_path / "out.txt")),
            home=home,
        )
        report = run_export(plan, store, plugin_host)
    assert [record.session.id for record in exporter.records] == ids[:3] + ids[4:]
    assert (report.sessions_written, report.sessions_vanished) == (4, 1)
    assert all(len(record.messages) == 4 for record in exporter.records)
