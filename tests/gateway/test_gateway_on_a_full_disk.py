"""A running gateway whose disk fills up: the turns it cannot store are refused (never
acknowledged), one line each in its log — its background threads' writes (the automatic
title) too, never a traceback — and it goes on once there is room again; after a kill -9
every turn it acknowledged is in the store (DESIGN §9)."""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from pathlib import Path

import openai
import pytest
from disks import SmallDisk
from gateway_helpers import TITLE_MATCH
from gateway_process import API_KEY, GatewayProcess, write_config
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.store import STATE_DB_NAME

pytestmark = pytest.mark.slow


def _turn(client: openai.OpenAI, text: str) -> str:
    answer = client.chat.completions.create(
        model="hermes-agent",
        messages=[{"role": "user", "content": text}],
        extra_headers={"X-Hermes-Conversation": "laptop"},
    )
    return answer.choices[0].message.content or ""


def _wait_for_line(gateway: GatewayProcess, text: str, timeout: float = 60.0) -> None:
    """Wait until the gateway's log holds ``text`` (polling; the deadline only stops a hung
    test)."""
    deadline = time.monotonic() + timeout
    while text not in gateway.log_text():
        assert time.monotonic() < deadline, f"never logged {text!r}: {gateway.log_text()}"
        time.sleep(0.05)


def test_a_full_disk_refuses_turns_it_cannot_store_and_loses_none_it_acknowledged(
    small_disk: SmallDisk, tmp_path: Path
) -> None:
    home = small_disk.mount / "home"
    title_gate = threading.Event()  # the automatic title is answered once the disk is full
    with OpenAIStandIn() as standin:
        standin.add(Reply(text="Full disk chat", match=TITLE_MATCH, times=None, hold=title_gate))
        standin.add(Reply(text="answer one"), Reply(text="answer two"))
        write_config(home, standin.base_url, {"api-server": {"api_key": API_KEY, "port": 0}})
        gateway = GatewayProcess(home, log_folder=tmp_path).start()
        try:
            client = openai.OpenAI(
                base_url=gateway.addresses["api-server"], api_key=API_KEY, max_retries=0
            )
            assert _turn(client, "stored before the disk filled") == "answer one"
            standin.wait_for_requests(2)  # the turn's, and the automatic title's (held)
            small_disk.fill()
            with pytest.raises(openai.APIStatusError) as refused:
                _turn(client, "no room for this one")
            assert refused.value.status_code >= 500
            assert "full" in str(refused.value), refused.value
            title_gate.set()  # the title thread's write meets the full disk too
            _wait_for_line(gateway, "automatic title for ")
            small_disk.free()
            assert _turn(client, "stored once there was room") == "answer two"
            gateway.kill()
        finally:
            if gateway.process is not None and gateway.process.poll() is None:
                gateway.process.kill()
                gateway.process.wait(30)
    log = gateway.log_text()
    assert "Traceback" not in log, log
    assert "is full" in log
    assert re.search(r"automatic title for \S+ not stored: the disk holding .* is full", log), log
    connection = sqlite3.connect(home / STATE_DB_NAME)
    try:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = connection.execute("SELECT role, content FROM messages ORDER BY id").fetchall()
    finally:
        connection.close()
    assert stored == [
        ("user", "stored before the disk filled"),
        ("assistant", "answer one"),
        ("user", "stored once there was room"),
        ("assistant", "answer two"),
    ]
