"""A batch beside other ``hermes`` commands, and stopped by SIGTERM: the turns in flight
finish and are stored, the rest are not started, the summary says so."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path

from batch_helpers import TITLE_MARK, batch_env, batch_sessions, hermes, spawn_batch, write_jsonl
from standins.openai_server import OpenAIStandIn, Reply


def _wait_for_prompt(server: OpenAIStandIn, text: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(text in json.dumps(r) and TITLE_MARK not in json.dumps(r) for r in server.requests):
            return
        time.sleep(0.05)
    raise AssertionError(f"the model never got the prompt {text!r}")


def test_sigterm_stops_after_the_turn_in_flight(tmp_path: Path, server: OpenAIStandIn) -> None:
    hold = threading.Event()
    server.add(
        Reply(text="first answer", match="prompt one"),
        Reply(text="second answer, held", match="prompt two", hold=hold, hold_after_chunks=1),
        Reply(text="never asked", times=None),
    )
    file = write_jsonl(
        tmp_path / "p.jsonl",
        *({"prompt": f"prompt {word}", "id": word} for word in ("one", "two", "three", "four")),
    )
    env = batch_env(tmp_path, server)
    batch = spawn_batch(env, str(file), "--json")
    try:
        _wait_for_prompt(server, "prompt two")
        batch.send_signal(signal.SIGTERM)
        assert batch.stderr is not None
        assert "stopping after the turns in flight" in batch.stderr.readline()
        hold.set()
        out, err = batch.communicate(timeout=60)
    finally:
        hold.set()
        if batch.poll() is None:
            batch.kill()
            batch.wait()
    assert batch.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err
    summary = json.loads(out)
    assert (summary["done"], summary["failed"], summary["stopped_by"]) == (2, 0, "SIGTERM")
    assert summary["not_run"] == [{"line": 3, "id": "three"}, {"line": 4, "id": "four"}]
    sessions = {s["preview"]: s for s in batch_sessions(env)}
    assert set(sessions) == {"prompt one", "prompt two"}
    shown = hermes(env, "sessions", "show", sessions["prompt two"]["id"], "--json")
    assert json.loads(shown.stdout)["messages"][-1]["content"] == "second answer, held"
    assert not any("prompt three" in json.dumps(r) for r in server.requests)


def test_sessions_list_beside_a_running_batch(tmp_path: Path, server: OpenAIStandIn) -> None:
    hold = threading.Event()
    server.add(
        Reply(text="done quickly", match="quick one"),
        Reply(text="held answer", match="slow one", hold=hold, hold_after_chunks=1),
    )
    file = tmp_path / "p.txt"
    file.write_text("quick one\nslow one\n", encoding="utf-8")
    env = batch_env(tmp_path, server)
    batch = spawn_batch(env, str(file), "--concurrency", "2")
    try:
        _wait_for_prompt(server, "slow one")
        deadline = time.monotonic() + 30
        while True:  # the quick prompt finishes while the slow one is held
            beside = {s["preview"]: s for s in batch_sessions(env)}
            if beside.get("quick one", {}).get("end_reason") == "batch_done":
                break
            assert time.monotonic() < deadline, beside
            time.sleep(0.1)
        assert beside["slow one"]["end_reason"] is None  # in flight, its user turn stored
        assert beside["slow one"]["message_count"] >= 1
        hold.set()
        out, err = batch.communicate(timeout=60)
    finally:
        hold.set()
        if batch.poll() is None:
            batch.kill()
            batch.wait()
    assert batch.returncode == 0, err
    assert "2 done, 0 failed" in out
    after = {s["preview"]: s["end_reason"] for s in batch_sessions(env)}
    assert after == {"quick one": "batch_done", "slow one": "batch_done"}
