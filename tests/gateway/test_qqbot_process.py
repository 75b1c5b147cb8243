"""End to end: the installed ``hermes gateway run`` with the qqbot plugin, QQ's webhook calls
and HTTP API played by the QQ Bot stand-in over real HTTP on 127.0.0.1, the stand-in model:
an acknowledged event survives kill -9 and is not stored or answered again when QQ sends it
again after the restart; a missing secret is one line (SPEC G1, G4, O1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gateway_helpers import user_texts
from gateway_process import GatewayProcess, write_config
from platform_process import assert_installed_alone, model_standin, refused_to_start
from standins.openai_server import OpenAIStandIn, Reply
from standins.qqbot_api import APP_ID, SECRET, QQBotStandIn

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow


@pytest.fixture
def standin() -> Any:
    with model_standin() as server:
        yield server


@pytest.fixture
def qq() -> Any:
    with QQBotStandIn() as server:
        yield server


def platform(qq: QQBotStandIn, **extra: Any) -> dict[str, Any]:
    return {
        "qqbot": {
            "app_id": APP_ID,
            "secret": SECRET,
            "port": 0,
            "api_base": qq.url,
            "token_url": qq.token_url,
            **extra,
        }
    }


def test_an_acknowledged_event_survives_kill_9_and_is_taken_once_after_the_restart(
    tmp_path: Path, standin: OpenAIStandIn, qq: QQBotStandIn
) -> None:
    standin.add(Reply(text="Stored and answered.", match="alpha-one", times=None))
    standin.add(Reply(text="Second answer.", match="bravo-two", times=None))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(qq))
    with GatewayProcess(home) as gateway:
        qq.callback_url = gateway.addresses["qqbot"]
        event_id, status = qq.user_says("USER_K", "alpha-one message")
        assert status == 200  # acknowledged: stored
        gateway.kill()
    with GatewayProcess(home) as gateway:
        qq.callback_url = gateway.addresses["qqbot"]
        # QQ never heard the acknowledgement's fate: it sends the event again.
        assert qq.deliver_again(event_id) == 200
        before = len(qq.sent)
        assert qq.group_says("GROUP_K", "USER_K", "bravo-two message")[1] == 200
        qq.wait_for_sent(before + 1)
        assert gateway.terminate() == 0
    answers = [(m["to"], m["content"]) for m in qq.sent]
    assert (("group", "GROUP_K"), "Second answer.") in answers
    # The re-sent event was not answered again (at most the answer from before the kill).
    assert [a for a in answers if a[0] == ("user", "USER_K")] in (
        [],
        [(("user", "USER_K"), "Stored and answered.")],
    )
    with SessionStore.open(home) as store:
        keys = {
            str(s.session_key): user_texts(store.messages(s.id)) for s in store.select_sessions()
        }
    assert keys["agent:main:qqbot:dm:USER_K"] == ["alpha-one message"]
    assert keys["agent:main:qqbot:group:GROUP_K:USER_K"] == ["bravo-two message"]


def test_a_missing_secret_is_one_line_and_the_gateway_does_not_run(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"qqbot": {"app_id": APP_ID, "port": 0}})
    assert "gateway.platforms.qqbot.secret is not set" in refused_to_start(home, "qqbot")


def test_the_qqbot_plugin_installed_alone_is_listed(tmp_path: Path) -> None:
    assert_installed_alone(tmp_path, "hermes-platform-qqbot", "platform:qqbot")
