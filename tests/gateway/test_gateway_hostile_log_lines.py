"""A real ``hermes gateway run``'s log lines on stderr (often a terminal, or a journal read on
one) quote what came from outside — here the model endpoint's error about a user's message —
with every control character shown visibly (DESIGN §9, issue 23), while the stored message
keeps its exact text."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest
from gateway_helpers import title_reply
from gateway_process import API_KEY, GatewayProcess, write_config
from hostile_text import PAYLOAD, PAYLOAD_SHOWN, USER_TEXT, received
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow


def test_a_log_line_quoting_foreign_text_shows_its_control_characters(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with OpenAIStandIn() as standin:
        standin.add(title_reply())
        standin.add(Reply.failure(400, message=f"cannot answer {PAYLOAD} \x9b31m"))
        write_config(home, standin.base_url, {"api-server": {"api_key": API_KEY, "port": 0}})
        with GatewayProcess(home) as gateway:
            client = openai.OpenAI(
                base_url=gateway.addresses["api-server"], api_key=API_KEY, max_retries=0
            )
            with pytest.raises(openai.APIStatusError):
                client.chat.completions.create(
                    model="hermes-agent",
                    messages=[{"role": "user", "content": USER_TEXT}],
                    extra_headers={"X-Hermes-Conversation": "laptop"},
                )
            assert gateway.terminate() == 0
        log = received(gateway.log.read_bytes()).raw
    assert "the model could not answer: " in log
    assert f"cannot answer {PAYLOAD_SHOWN} <U+009B>31m" in log
    with SessionStore.open(home) as store:
        [session] = store.list_sessions()
        assert [m.content for m in store.messages(session.id)] == [USER_TEXT]
