"""End to end: the installed ``hermes gateway run`` with the homeassistant plugin, conversation
calls made as Home Assistant makes them over real HTTP on 127.0.0.1, the stand-in model:
sessions by ``conversation_id``, a call made again, kill -9 after an answer and restart, the
missing token (SPEC G1, G4, O1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gateway_process import GatewayProcess, write_config
from platform_process import (
    assert_installed_alone,
    model_standin,
    refused_to_start,
    sessions_by_key,
)
from standins.homeassistant_api import converse, speech
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow

TOKEN = "ha-process-token"


@pytest.fixture
def standin() -> Any:
    with model_standin() as server:
        yield server


def platform() -> dict[str, Any]:
    return {"homeassistant": {"token_env": "HERMES_TEST_HA_TOKEN", "port": 0}}


def test_conversations_survive_kill_9_and_a_call_made_again_is_stored_once(
    tmp_path: Path, standin: OpenAIStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_TEST_HA_TOKEN", TOKEN)
    standin.add(Reply(text="Closing them.", match="blinds", times=None))
    standin.add(Reply(text="It is 21 degrees.", match="temperature", times=None))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform())
    with GatewayProcess(home) as gateway:
        url = gateway.addresses["homeassistant"]
        status, answer = converse(url, TOKEN, "temperature?", user_id="u1", context_id="c1")
        assert status == 200 and speech(answer) == "It is 21 degrees."
        conversation = answer["conversation_id"]
        # Answered means stored: kill -9 right after it.
        gateway.kill()
    with GatewayProcess(home) as gateway:
        url = gateway.addresses["homeassistant"]
        again = converse(
            url, TOKEN, "temperature?", conversation_id=conversation, user_id="u1", context_id="c1"
        )
        assert again[0] == 200 and speech(again[1]) == "This message was already received."
        status, answer = converse(
            url, TOKEN, "close the blinds", conversation_id=conversation, context_id="c2"
        )
        assert status == 200 and speech(answer) == "Closing them."
        assert answer["conversation_id"] == conversation
        fresh = converse(url, TOKEN, "temperature?", context_id="c3")
        assert fresh[1]["conversation_id"] != conversation
        assert gateway.terminate() == 0
    keys = sessions_by_key(home, "homeassistant")
    assert keys[f"agent:main:homeassistant:dm:{conversation}"] == [
        "temperature?",
        "close the blinds",
    ]
    assert keys[f"agent:main:homeassistant:dm:{fresh[1]['conversation_id']}"] == ["temperature?"]
    with SessionStore.open(home) as store:
        first = next(s for s in store.select_sessions() if s.session_key.endswith(conversation))
        answers = [m.content for m in store.messages(first.id) if m.role == "assistant"]
    assert answers == ["It is 21 degrees.", "Closing them."]


def test_a_missing_token_is_one_line_and_the_gateway_does_not_run(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"homeassistant": {"port": 0}})
    assert "gateway.platforms.homeassistant.token is not set" in refused_to_start(
        home, "homeassistant"
    )


def test_the_homeassistant_plugin_installed_alone_is_listed(tmp_path: Path) -> None:
    assert_installed_alone(tmp_path, "hermes-platform-homeassistant", "platform:homeassistant")
