"""``hermes batch FILE``: the installed command against the stand-in model, its sessions read
back through ``hermes sessions list --source batch`` / ``show``."""

from __future__ import annotations

import json
from pathlib import Path

from batch_helpers import TITLE_MARK, batch_env, batch_sessions, hermes, write_jsonl
from standins.openai_server import OpenAIStandIn, Reply


def test_a_jsonl_file_runs_each_prompt_in_a_batch_session(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    server.add(
        Reply(text="Four.", usage=(10, 2), match="What is 2+2?"),
        Reply(text="Paris.", usage=(11, 3), match="Capital of France?"),
    )
    file = write_jsonl(
        tmp_path / "prompts.jsonl",
        {"prompt": "What is 2+2?", "id": "sum", "title": "Arithmetic"},
        {"prompt": "Capital of France?", "id": "geo", "model": "other-model"},
    )
    env = batch_env(tmp_path, server)

    ran = hermes(env, "batch", str(file))

    assert ran.returncode == 0, ran.stderr
    assert "2 done, 0 failed" in ran.stdout
    assert "Tokens: 21 in, 5 out." in ran.stdout
    sessions = {s["preview"]: s for s in batch_sessions(env)}
    assert set(sessions) == {"What is 2+2?", "Capital of France?"}
    assert sessions["What is 2+2?"]["title"] == "Arithmetic"
    assert sessions["Capital of France?"]["model"] == "other-model"
    assert all(
        s["source"] == "batch" and s["end_reason"] == "batch_done" for s in sessions.values()
    )
    shown = hermes(env, "sessions", "show", sessions["What is 2+2?"]["id"], "--json")
    assert shown.returncode == 0, shown.stderr
    messages = json.loads(shown.stdout)["messages"]
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "What is 2+2?"),
        ("assistant", "Four."),
    ]
    turns = [r for r in server.requests if TITLE_MARK not in json.dumps(r)]
    models = [r["model"] for r in turns if "Capital of France?" in json.dumps(r)]
    assert models and set(models) == {"other-model"}


def test_a_failing_prompt_exits_non_zero_and_the_others_are_stored(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    server.add(
        Reply.failure(500, times=None, message="the stand-in broke", match="break here"),
        Reply(text="One.", match="first"),
        Reply(text="Three.", match="third"),
    )
    file = write_jsonl(
        tmp_path / "prompts.jsonl",
        {"prompt": "first"},
        "{not json",
        {"prompt": "break here"},
        {"title": "no prompt"},
        "",
        {"prompt": "third"},
    )
    env = batch_env(tmp_path, server)

    ran = hermes(env, "batch", str(file), "--json")

    assert ran.returncode == 1, ran.stderr
    summary = json.loads(ran.stdout)
    assert (summary["done"], summary["failed"]) == (2, 1)
    assert summary["malformed"] == [
        {"line": 2, "reason": "not a JSON object"},
        {"line": 4, "reason": 'no "prompt" text'},
    ]
    failed = [p for p in summary["prompts"] if p["status"] == "failed"]
    assert [p["line"] for p in failed] == [3]
    assert "500" in failed[0]["error"] or "broke" in failed[0]["error"]
    assert "Traceback" not in ran.stderr
    sessions = {s["preview"]: s for s in batch_sessions(env)}
    assert {k: s["end_reason"] for k, s in sessions.items()} == {
        "first": "batch_done",
        "break here": "batch_failed",
        "third": "batch_done",
    }
    assert {p["session_id"] for p in summary["prompts"]} == {s["id"] for s in sessions.values()}


def test_a_text_file_is_one_prompt_per_line_with_a_plain_summary(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    server.add(Reply(text="Answer A.", match="alpha"), Reply(text="Answer B.", match="beta"))
    file = tmp_path / "prompts.txt"
    file.write_text("alpha question\n\n   \nbeta question\n", encoding="utf-8")
    env = batch_env(tmp_path, server)

    ran = hermes(env, "batch", str(file), "--concurrency", "2")

    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert sum(line.startswith(("[1/2] ", "[2/2] ")) for line in lines) == 2
    assert "\x1b[" not in ran.stdout  # not a terminal: no progress bar
    assert sorted(s["preview"] for s in batch_sessions(env)) == ["alpha question", "beta question"]


def test_stop_on_error_starts_nothing_after_a_failure(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    server.add(Reply.failure(500, times=None, match="first"), Reply(text="never", times=None))
    file = write_jsonl(tmp_path / "p.jsonl", {"prompt": "first"}, {"prompt": "second"})
    env = batch_env(tmp_path, server)

    ran = hermes(env, "batch", str(file), "--stop-on-error", "--json")

    assert ran.returncode == 1
    summary = json.loads(ran.stdout)
    assert (summary["done"], summary["failed"], summary["stopped_by"]) == (0, 1, "--stop-on-error")
    assert summary["not_run"] == [{"line": 2, "id": None}]
    assert [s["preview"] for s in batch_sessions(env)] == ["first"]
