"""Running the same batch file again: answered prompts are refused unless ``--resume`` (skip
them) or ``--again`` (run them anew) says what to do."""

from __future__ import annotations

import json
from pathlib import Path

from batch_helpers import batch_env, batch_sessions, hermes, write_jsonl
from standins.openai_server import OpenAIStandIn, Reply


def test_a_rerun_is_refused_then_resume_runs_only_what_is_left(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    server.add(
        Reply(text="ok", match="kept"),
        Reply.failure(500, times=1, match="flaky"),
        Reply(text="ok", match="flaky"),
    )
    file = write_jsonl(
        tmp_path / "jobs.jsonl", {"prompt": "kept", "id": "1"}, {"prompt": "flaky", "id": "2"}
    )
    env = batch_env(tmp_path, server)
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.yaml").write_text("model:\n  max_retries: 0\n", encoding="utf-8")
    first = hermes(env, "batch", str(file), "--json")
    assert first.returncode == 1
    assert len(batch_sessions(env)) == 2

    refused = hermes(env, "batch", str(file))
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines() == [
        f"hermes: {file}: 1 of its 2 prompt(s) were answered by an earlier batch run; "
        "--resume skips them, --again runs them anew"
    ]
    assert len(batch_sessions(env)) == 2

    resumed = hermes(env, "batch", str(file), "--resume", "--json")
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert [(p["line"], p["status"]) for p in summary["prompts"]] == [(2, "done")]
    assert [a["id"] for a in summary["answered_before"]] == ["1"]
    assert len(batch_sessions(env)) == 3

    nothing_left = hermes(env, "batch", str(file), "--resume", "--json")
    assert nothing_left.returncode == 0
    assert json.loads(nothing_left.stdout)["done"] == 0
    assert len(batch_sessions(env)) == 3


def test_again_runs_answered_prompts_anew(tmp_path: Path, server: OpenAIStandIn) -> None:
    server.add(Reply(text="ok", times=None))
    file = tmp_path / "p.txt"
    file.write_text("same prompt\n", encoding="utf-8")
    env = batch_env(tmp_path, server)
    assert hermes(env, "batch", str(file)).returncode == 0

    again = hermes(env, "batch", str(file), "--again")

    assert again.returncode == 0, again.stderr
    assert [s["preview"] for s in batch_sessions(env)] == ["same prompt", "same prompt"]
