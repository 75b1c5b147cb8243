"""End to end: the api-server through the official ``openai`` SDK against a real ``hermes
gateway run`` subprocess and the stand-in model; an adapter that fails to start is one line
and the others run."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest
from gateway_helpers import title_reply, user_texts
from gateway_process import API_KEY, GatewayProcess, write_config
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow


def test_any_openai_client_talks_to_one_session_per_conversation(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with OpenAIStandIn() as standin:
        standin.add(title_reply())
        standin.add(Reply(text="first answer"), Reply(text="a streamed answer"))
        standin.add(Reply(text="other conversation"), Reply.failure(503, message="overloaded"))
        write_config(
            home,
            standin.base_url,
            {
                "api-server": {"api_key": API_KEY, "port": 0, "model_name": "hermes-agent"},
                "webhook": {"port": 0},  # no secret: fails to start, the api-server runs
            },
        )
        with GatewayProcess(home) as gateway:
            base_url = gateway.addresses["api-server"]
            client = openai.OpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)
            laptop = {"X-Hermes-Conversation": "laptop"}
            assert [m.id for m in client.models.list()] == ["hermes-agent"]
            raw = client.chat.completions.with_raw_response.create(
                model="hermes-agent",
                messages=[{"role": "user", "content": "hello"}],
                extra_headers=laptop,
            )
            first = raw.parse()
            assert first.choices[0].message.content == "first answer"
            session_id = raw.headers["x-hermes-session"]
            pieces = [
                chunk.choices[0].delta.content or ""
                for chunk in client.chat.completions.create(
                    model="hermes-agent",
                    messages=[
                        {"role": "user", "content": "hello"},
                        {"role": "assistant", "content": "first answer"},
                        {"role": "user", "content": "stream this"},
                    ],
                    stream=True,
                    extra_headers=laptop,
                )
                if chunk.choices
            ]
            assert "".join(pieces) == "a streamed answer" and len(pieces) > 2
            other = client.chat.completions.with_raw_response.create(
                model="hermes-agent",
                messages=[{"role": "user", "content": "different chat"}],
                extra_headers={"X-Hermes-Conversation": "phone"},
            )
            assert other.headers["x-hermes-session"] != session_id
            with pytest.raises(openai.APIStatusError) as down:
                client.chat.completions.create(
                    model="hermes-agent",
                    messages=[{"role": "user", "content": "model down now"}],
                    extra_headers=laptop,
                )
            assert down.value.status_code == 502
            titled = client.chat.completions.create(
                model="hermes-agent",
                messages=[{"role": "user", "content": "/title laptop chat"}],
                extra_headers=laptop,
            )
            assert titled.choices[0].message.content == "✓ Title set: laptop chat"
            with pytest.raises(openai.AuthenticationError):
                openai.OpenAI(base_url=base_url, api_key="wrong", max_retries=0).models.list()
            assert gateway.terminate() == 0
    log = gateway.log_text()
    assert sum("platform webhook: failed to start" in line for line in log.splitlines()) == 1
    assert "secret is not set" in log and "Traceback" not in log
    with SessionStore.open(home) as store:
        session = store.get_session(session_id)
        assert session.source == "api-server" and session.chat_id == "laptop"
        assert session.title == "laptop chat"
        # Only each request's last user message is a new turn; the model-down one is kept.
        assert user_texts(store.messages(session_id)) == ["hello", "stream this", "model down now"]
        assert len(session_id.rsplit("_", 1)[1]) == 8


def test_the_gateway_refuses_to_run_without_a_platform_or_a_model(tmp_path: Path) -> None:
    import subprocess

    from gateway_process import environment
    from installed_hermes import hermes_command

    home = tmp_path / "home"
    home.mkdir()
    empty = subprocess.run(
        [hermes_command(), "gateway", "run"],
        env=environment(home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert empty.returncode == 1
    assert empty.stderr.strip().count("\n") == 0 and "no platform is enabled" in empty.stderr
    (home / "config.yaml").write_text(
        "gateway:\n  platforms:\n    api-server:\n      api_key: k\n", encoding="utf-8"
    )
    no_model = subprocess.run(
        [hermes_command(), "gateway", "run"],
        env={k: v for k, v in environment(home).items() if not k.startswith("HERMES_MODEL")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert no_model.returncode == 1
    assert no_model.stderr.strip().count("\n") == 0 and "model.provider" in no_model.stderr
