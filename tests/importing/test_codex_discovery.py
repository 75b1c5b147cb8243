"""Finding rollouts: CODEX_HOME and ~/.codex, both layouts, symlinks, cheap candidates."""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from codex_helpers import (
    ENVELOPE_SAMPLE,
    LEGACY_SAMPLE,
    SESSION_ID,
    agent_event,
    line,
    meta,
    user_event,
    write_rollout,
)
from hermes_hookspecs import ImportCandidate, Importer
from hermes_import_codex import discovery
from hermes_import_codex.importer import CodexImporter

from hermes_core.cli.import_commands import candidate_cells
from hermes_core.importing import described as described_log
from hermes_core.importing import gather_candidates
from hermes_core.plugins import PluginHost


def codex_tree(root: Path) -> Path:
    """A sessions folder with a date-sharded envelope rollout and a flat legacy one."""
    sessions = root / "sessions"
    sharded = sessions / "2026" / "03" / "14"
    sharded.mkdir(parents=True)
    shutil.copy(ENVELOPE_SAMPLE, sharded / ENVELOPE_SAMPLE.name)
    shutil.copy(LEGACY_SAMPLE, sessions / LEGACY_SAMPLE.name)
    return sessions


def discovered(env: dict[str, str]) -> dict[str, ImportCandidate]:
    return {c.path.name: c for c in CodexImporter().discover(env)}


def described(env: dict[str, str]) -> dict[str, ImportCandidate]:
    importer = CodexImporter()
    return {c.path.name: importer.describe(c) for c in importer.discover(env)}


def test_a_file_that_cannot_be_read_is_described_as_discovered(tmp_path: Path) -> None:
    sessions = codex_tree(tmp_path)
    [candidate] = [
        c
        for c in CodexImporter().discover({"CODEX_HOME": str(tmp_path)})
        if c.path.name == LEGACY_SAMPLE.name
    ]
    (sessions / LEGACY_SAMPLE.name).unlink()
    assert CodexImporter().describe(candidate) == candidate


def test_the_plugin_registers_the_importer_and_its_source() -> None:
    host = PluginHost()
    importer = host.importer("codex")
    assert isinstance(importer, Importer)
    assert (importer.name, importer.label) == ("codex", "Codex CLI")
    source = host.sources()["codex-cli"]
    assert (source.label, source.short_label) == ("Codex CLI", "codex")
    assert not source.interactive and not source.gateway


def test_codex_home_wins_over_the_home_folder(tmp_path: Path) -> None:
    codex_tree(tmp_path / "custom")
    codex_tree(tmp_path / "home" / ".codex")
    (tmp_path / "home" / ".codex" / "sessions" / LEGACY_SAMPLE.name).unlink()
    env = {"CODEX_HOME": str(tmp_path / "custom"), "HOME": str(tmp_path / "home")}
    assert set(discovered(env)) == {ENVELOPE_SAMPLE.name, LEGACY_SAMPLE.name}
    assert set(discovered({"HOME": str(tmp_path / "home")})) == {ENVELOPE_SAMPLE.name}
    assert discovered({"HOME": str(tmp_path / "nobody")}) == {}


def test_discover_takes_its_facts_from_names_and_stat_alone(tmp_path: Path) -> None:
    codex_tree(tmp_path)
    found = discovered({"CODEX_HOME": str(tmp_path)})
    envelope = found[ENVELOPE_SAMPLE.name]
    assert envelope.foreign_id == "0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    # the name's time is local time, as Codex names its files
    assert envelope.started_at == datetime(2026, 3, 14, 9, 30, 0).timestamp()
    assert envelope.ended_at == envelope.path.stat().st_mtime
    # nothing inside the file was read
    assert (envelope.title_guess, envelope.cwd, envelope.turn_count) == (None, None, None)
    assert found[LEGACY_SAMPLE.name].foreign_id == "5f0c2a8e-9b1d-4c3e-a7f6-2d8e4b6c1a90"


def test_described_candidates_of_both_layouts_and_formats_carry_the_picker_facts(
    tmp_path: Path,
) -> None:
    codex_tree(tmp_path)
    found = described({"CODEX_HOME": str(tmp_path)})
    envelope = found[ENVELOPE_SAMPLE.name]
    assert envelope.importer == "codex"
    assert envelope.foreign_id == "0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    assert envelope.cwd == "/home/ana/src/tide-tables"
    assert envelope.title_guess == ("The tide table for 29 February is wrong; leap years are not…")
    assert envelope.turn_count == 2
    assert envelope.ended_at == envelope.path.stat().st_mtime
    assert envelope.started_at == datetime(2026, 3, 14, 8, 30, tzinfo=UTC).timestamp()
    legacy = found[LEGACY_SAMPLE.name]
    assert legacy.foreign_id == "5f0c2a8e-9b1d-4c3e-a7f6-2d8e4b6c1a90"
    assert legacy.cwd == "/Users/lena/code/weather-cli"
    assert legacy.title_guess == "Why does `weather --units metric` still print Fahrenheit?"
    assert legacy.turn_count == 2


def test_a_long_rollout_gets_its_title_from_the_head_and_no_turn_count(tmp_path: Path) -> None:
    big_header = line(
        "session_meta",
        {
            "id": SESSION_ID,
            "cwd": "/projects/huge",
            "base_instructions": {"text": "i" * (discovery.HEAD_BYTES + 10)},
        },
    )
    sessions = tmp_path / "sessions"
    write_rollout(sessions, big_header, user_event("first", 1), agent_event("a" * 100, 2))
    [candidate] = described({"CODEX_HOME": str(tmp_path)}).values()
    # the header alone is longer than the head: its cwd is still found, the title is not
    assert candidate.cwd == "/projects/huge"
    assert candidate.title_guess is None
    assert candidate.turn_count is None

    filler = [agent_event("b" * 1000, 3) for _ in range(100)]
    write_rollout(sessions, meta(), user_event("what a long day", 1), *filler)
    [candidate] = described({"CODEX_HOME": str(tmp_path)}).values()
    assert candidate.title_guess == "what a long day"
    assert candidate.turn_count is None


def test_empty_rollouts_are_not_offered_and_headers_alone_have_no_turns(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    (sessions / "rollout-2026-01-01T00-00-00-0195b000-0000-7000-8000-000000000001.jsonl").touch()
    header_only = "rollout-2026-01-01T00-00-00-0195b000-0000-7000-8000-000000000002.jsonl"
    write_rollout(sessions, meta(), name=header_only)
    real = write_rollout(sessions, meta(), user_event("real", 1))
    found = described({"CODEX_HOME": str(tmp_path)})
    assert set(found) == {header_only, real.name}
    assert (found[header_only].turn_count, found[real.name].turn_count) == (0, 1)


def test_only_rollout_files_are_offered(tmp_path: Path) -> None:
    sessions = codex_tree(tmp_path)
    (sessions.parent / "history.jsonl").write_text(user_event("not a session"))
    (sessions / "notes.jsonl").write_text(user_event("not a rollout"))
    (sessions / "rollout-x.jsonl.zst").write_bytes(b"\x28\xb5\x2f\xfd")
    (sessions / "2026" / "rollout-dir.jsonl").mkdir()
    assert set(discovered({"CODEX_HOME": str(tmp_path)})) == {
        ENVELOPE_SAMPLE.name,
        LEGACY_SAMPLE.name,
    }


def test_symlinks_leaving_the_root_and_non_regular_files_are_skipped(tmp_path: Path) -> None:
    sessions = codex_tree(tmp_path / "codex")
    outside = tmp_path / "outside"
    outside.mkdir()
    escaped = write_rollout(outside, meta(), user_event("outside", 1))
    (
        sessions / "rollout-2026-05-05T00-00-00-0195b000-0000-7000-8000-00000000000a.jsonl"
    ).symlink_to(escaped)
    (sessions / "linked-dir").symlink_to(outside, target_is_directory=True)
    (sessions / "2026" / "loop").symlink_to(sessions, target_is_directory=True)
    inside_link = (
        sessions / "rollout-2026-05-05T00-00-00-0195b000-0000-7000-8000-00000000000b.jsonl"
    )
    inside_link.symlink_to(sessions / LEGACY_SAMPLE.name)
    dangling = sessions / "rollout-2026-05-05T00-00-00-0195b000-0000-7000-8000-00000000000c.jsonl"
    dangling.symlink_to(tmp_path / "gone.jsonl")
    os.mkfifo(sessions / "rollout-2026-05-05T00-00-00-0195b000-0000-7000-8000-00000000000d.jsonl")
    found = discovered({"CODEX_HOME": str(tmp_path / "codex")})
    assert set(found) == {ENVELOPE_SAMPLE.name, LEGACY_SAMPLE.name, inside_link.name}


def test_discovery_reads_only_and_changes_nothing(tmp_path: Path) -> None:
    sessions = codex_tree(tmp_path)
    files = sorted(p for p in sessions.rglob("*") if p.is_file())
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files}
    described({"CODEX_HOME": str(tmp_path)})
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files} == before
    assert sorted(p for p in sessions.rglob("*") if p.is_file()) == files


def test_sniff_recognises_both_formats_and_refuses_others(tmp_path: Path) -> None:
    importer = CodexImporter()
    assert importer.sniff(ENVELOPE_SAMPLE) and importer.sniff(LEGACY_SAMPLE)
    renamed = tmp_path / "session.jsonl"
    for sample in (ENVELOPE_SAMPLE, LEGACY_SAMPLE):
        shutil.copy(sample, renamed)
        assert importer.sniff(renamed), sample.name
    long_header = line("session_meta", {"id": SESSION_ID, "base_instructions": "i" * 100_000})
    renamed.write_text(long_header)
    assert importer.sniff(renamed)
    claude = (
        '{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user",'
        '"content":"hi"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s1"}\n'
    )
    for content in (claude, '{"type":"summary","summary":"x","leafUuid":"u"}\n', "not json\n", ""):
        renamed.write_text(content)
        assert not importer.sniff(renamed), content
    assert not importer.sniff(tmp_path / "missing.jsonl")
    assert not importer.sniff(tmp_path)


@pytest.mark.parametrize("depth", ["flat", "sharded"])
def test_discovered_paths_read_back_to_the_same_thread(tmp_path: Path, depth: str) -> None:
    codex_tree(tmp_path)
    name = LEGACY_SAMPLE.name if depth == "flat" else ENVELOPE_SAMPLE.name
    candidate = described({"CODEX_HOME": str(tmp_path)})[name]
    [session] = CodexImporter().read(candidate.path)
    assert session.foreign_id == candidate.foreign_id
    assert session.cwd == candidate.cwd
    assert sum(1 for m in session.messages if m.role == "user") == candidate.turn_count


def test_the_import_pickers_rows_show_codex_rollouts(tmp_path: Path) -> None:
    codex_tree(tmp_path)
    host = PluginHost()
    env = {"CODEX_HOME": str(tmp_path), "HOME": str(tmp_path / "nobody")}
    rows = {
        log.candidate.path.name: candidate_cells(described_log(log))
        for log in gather_candidates(host.importers(), env, only="codex")
    }
    _, tool, title, folder, turns = rows[ENVELOPE_SAMPLE.name]
    assert (tool, folder, turns) == ("Codex CLI", "tide-tables", "2")
    assert title == "The tide table for 29 February is wrong; leap years are not…"
    _, tool, title, folder, turns = rows[LEGACY_SAMPLE.name]
    assert (tool, title, folder, turns) == (
        "Codex CLI",
        "Why does `weather --units metric` still print Fahrenheit?",
        "weather-cli",
        "2",
    )
