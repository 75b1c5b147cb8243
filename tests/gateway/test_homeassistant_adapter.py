"""The homeassistant adapter over real HTTP on 127.0.0.1, in front of the gateway core (real
store, stand-in model): Home Assistant's conversation calls in, its conversation-result shape
out, sessions by ``conversation_id``, refusals, and notifications to the Home Assistant
stand-in."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from gateway_helpers import model_config, running_gateway, title_reply, user_texts
from hermes_hookspecs import UserFacingError
from hermes_platform_homeassistant.adapter import HomeAssistantAdapter
from hostile_text import USER_TEXT
from standins.homeassistant_api import ACCESS_TOKEN, HomeAssistantStandIn, converse, speech
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.store import SessionStore

TOKEN = "ha-bearer-token"
T = TypeVar("T")


@pytest.fixture
def standin() -> Any:
    with OpenAIStandIn() as server:
        server.add(title_reply())
        yield server


def with_adapter(home: Path, standin: OpenAIStandIn, talk: Callable[[str], T]) -> T:
    """Run the adapter on the gateway core and ``talk(url)`` from another thread."""

    async def run() -> T:
        async with running_gateway(home, model_config(standin), clock=time.time) as gateway:
            adapter = HomeAssistantAdapter()
            await adapter.start({"token": TOKEN, "port": 0}, gateway.deliver)
            try:
                assert adapter.address is not None
                return await asyncio.to_thread(talk, adapter.address)
            finally:
                await adapter.stop()

    return asyncio.run(run())


def test_a_missing_token_or_a_bad_setting_is_one_line_naming_the_key() -> None:
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.homeassistant\.token is not"):
        HomeAssistantAdapter().connect({})
    with pytest.raises(UserFacingError, match=r"homeassistant\.port must be a port number"):
        HomeAssistantAdapter().connect({"token": "x", "port": "http"})


def test_a_conversation_id_is_one_session_and_the_answer_is_a_conversation_result(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    standin.add(Reply(text="The lights are on.", times=None))

    def talk(url: str) -> list[tuple[int, dict[str, Any]]]:
        first = converse(url, TOKEN, "turn on the lights", user_id="u-anna", context_id="c1")
        again = converse(
            url, TOKEN, "and the fan", conversation_id=first[1]["conversation_id"], context_id="c2"
        )
        other = converse(url, TOKEN, USER_TEXT, user_id="u-ben", context_id="c3", language="de")
        return [first, again, other]

    home = tmp_path / "home"
    first, again, other = with_adapter(home, standin, talk)
    assert first[0] == again[0] == other[0] == 200
    assert speech(first[1]) == "The lights are on."
    assert first[1]["response"]["response_type"] == "action_done"
    assert first[1]["response"]["language"] == "en" and other[1]["response"]["language"] == "de"
    conversation = first[1]["conversation_id"]
    assert again[1]["conversation_id"] == conversation != other[1]["conversation_id"]
    with SessionStore.open(home) as store:
        sessions = {
            s.session_key: (s.user_id, user_texts(store.messages(s.id)))
            for s in store.select_sessions()
        }
    assert sessions[f"agent:main:homeassistant:dm:{conversation}"] == (
        "u-anna",
        ["turn on the lights", "and the fan"],
    )
    # Hostile text from a stranger is stored as it came, as text.
    other_key = f"agent:main:homeassistant:dm:{other[1]['conversation_id']}"
    assert sessions[other_key] == ("u-ben", [USER_TEXT])


def test_a_call_made_again_is_stored_once_and_bad_calls_are_refused(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    standin.add(Reply(text="Done.", times=None))

    def talk(url: str) -> dict[str, tuple[int, dict[str, Any]]]:
        first = converse(url, TOKEN, "lock the door", conversation_id="kitchen", context_id="c9")
        return {
            "first": first,
            "again": converse(
                url, TOKEN, "lock the door", conversation_id="kitchen", context_id="c9"
            ),
            "wrong token": converse(url, "nope", "hi"),
            "no text": converse(url, TOKEN, ""),
        }

    home = tmp_path / "home"
    answers = with_adapter(home, standin, talk)
    assert answers["first"][0] == answers["again"][0] == 200
    assert speech(answers["again"][1]) == "This message was already received."
    assert answers["wrong token"][0] == 401 and answers["no text"][0] == 400
    with SessionStore.open(home) as store:
        (session,) = store.select_sessions()
        assert user_texts(store.messages(session.id)) == ["lock the door"]


def test_a_model_failure_is_an_error_result_and_the_question_is_kept(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    standin.add(Reply.failure(500, times=None, message="model down"))
    home = tmp_path / "home"
    status, answer = with_adapter(
        home, standin, lambda url: converse(url, TOKEN, "hello?", context_id="x")
    )
    assert status == 200 and answer["response"]["response_type"] == "error"
    assert speech(answer).startswith("The agent could not answer:")
    with SessionStore.open(home) as store:
        (session,) = store.select_sessions()
        assert user_texts(store.messages(session.id)) == ["hello?"]


def test_send_notifies_through_home_assistant_and_needs_its_settings() -> None:
    adapter = HomeAssistantAdapter()
    adapter.connect({"token": TOKEN})
    with pytest.raises(UserFacingError, match="needs ha_url, ha_token and notify_target"):
        adapter.send("kitchen", "hello")
    with HomeAssistantStandIn() as ha:
        settings = {"token": TOKEN, "ha_url": ha.url, "notify_target": "mobile_app_phone"}
        adapter.connect({**settings, "ha_token": ACCESS_TOKEN})
        assert adapter.send("kitchen", "The laundry is done.") is None
        ((target, body),) = ha.wait_for_notified(1)
        assert target == "mobile_app_phone" and body["message"] == "The laundry is done."
        adapter.connect({**settings, "ha_token": "wrong"})
        with pytest.raises(UserFacingError, match=r"^Home Assistant notify failed: .*401"):
            adapter.send("kitchen", "again")
