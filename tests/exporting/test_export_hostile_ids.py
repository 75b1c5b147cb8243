"""Sessions whose ids would leave a folder (held by a store made before ids were checked) still
export through the installed ``hermes``: every file lands in the export folder under a safe
name, and the id inside the file is kept exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_ids import HOSTILE_IDS, legacy_session_with_id
from installed_hermes import run_hermes_in

ON_A_COMMAND_LINE = [i for i in HOSTILE_IDS if "\x00" not in i]


def files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("hostile", ON_A_COMMAND_LINE)
def test_one_legacy_session_with_a_hostile_id_exports_as_jsonl_into_the_folder(
    tmp_path: Path, hostile: str
) -> None:
    home, out = tmp_path / "home", tmp_path / "deep" / "er" / "out"
    legacy_session_with_id(home, hostile)
    done = run_hermes_in(
        home, "sessions", "export", "--format", "jsonl", "--session-id", hostile, f"{out}/"
    )
    assert done.returncode == 0, done.stderr
    written = files_under(out)
    assert len(written) == 1 and written[0].parent == out
    assert written[0].name.endswith(".jsonl") and not written[0].name.startswith(".")
    record = json.loads(written[0].read_text(encoding="utf-8"))
    assert record["session"]["id"] == hostile
    assert [m["content"] for m in record["messages"]] == ["old question", "old answer"]
    assert {p.name for p in tmp_path.iterdir()} == {"home", "deep"}
    assert files_under(tmp_path / "deep") == written


@pytest.mark.parametrize("format_name", ["jsonl", "md", "html", "trace"])
def test_every_hostile_legacy_id_exports_with_each_per_session_format(
    tmp_path: Path, format_name: str
) -> None:
    home, out = tmp_path / "home", tmp_path / "out"
    for number, hostile in enumerate(HOSTILE_IDS):
        legacy_session_with_id(home, hostile, title=f"legacy {number}")
    done = run_hermes_in(
        home, "sessions", "export", "--format", format_name, "--source", "cli", f"{out}/"
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    written = files_under(out)
    assert written and all(p.parent == out for p in written)
    assert {p.name for p in tmp_path.iterdir()} == {"home", "out"}
    text = "".join(p.read_text(encoding="utf-8", errors="replace") for p in written)
    if format_name == "jsonl":
        ids = {json.loads(line)["session"]["id"] for line in text.splitlines()}
        assert ids == set(HOSTILE_IDS)
