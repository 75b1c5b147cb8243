"""User mistakes with ``hermes batch``: one line on stderr, a non-zero exit, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from batch_helpers import batch_env, hermes, write_jsonl
from standins.openai_server import OpenAIStandIn


def _one_line(tmp_path: Path, server: OpenAIStandIn, *args: str) -> str:
    ran = hermes(batch_env(tmp_path, server), "batch", *args)
    assert ran.returncode != 0
    assert "Traceback" not in ran.stderr
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1, ran.stderr
    return lines[0]


def test_a_missing_file(tmp_path: Path, server: OpenAIStandIn) -> None:
    missing = tmp_path / "nowhere.jsonl"
    assert _one_line(tmp_path, server, str(missing)) == (
        f"hermes: {missing}: cannot be read (No such file or directory)"
    )


def test_an_unreadable_file(tmp_path: Path, server: OpenAIStandIn) -> None:
    folder = tmp_path / "folder.txt"
    folder.mkdir()
    assert _one_line(tmp_path, server, str(folder)).startswith(f"hermes: {folder}: cannot be read")


def test_an_unknown_extension(tmp_path: Path, server: OpenAIStandIn) -> None:
    file = tmp_path / "prompts.csv"
    file.write_text("prompt\nhello\n", encoding="utf-8")
    assert "not a batch file" in _one_line(tmp_path, server, str(file))


def test_a_file_without_a_prompt(tmp_path: Path, server: OpenAIStandIn) -> None:
    file = write_jsonl(tmp_path / "p.jsonl", "[1, 2]", {"id": "x"})
    assert _one_line(tmp_path, server, str(file)) == (
        f"hermes: {file}: no prompt to run (2 malformed line(s) skipped)"
    )


@pytest.mark.parametrize("value", ["0", "17"])
def test_a_concurrency_out_of_bounds(tmp_path: Path, server: OpenAIStandIn, value: str) -> None:
    file = write_jsonl(tmp_path / "p.jsonl", {"prompt": "hi"})
    line = _one_line(tmp_path, server, str(file), "--concurrency", value)
    assert line == f"hermes: --concurrency {value}: give 1 to 16"
    assert server.requests == []


def test_no_model_configured(tmp_path: Path, server: OpenAIStandIn) -> None:
    file = write_jsonl(tmp_path / "p.jsonl", {"prompt": "hi"})
    env = batch_env(tmp_path, server)
    del env["HERMES_MODEL_BASE_URL"]
    ran = hermes(env, "batch", str(file))
    assert ran.returncode == 1
    assert ran.stderr.startswith("hermes: no model is configured")
    assert len(ran.stderr.strip().splitlines()) == 1
