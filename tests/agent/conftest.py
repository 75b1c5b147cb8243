"""A real store and the stand-in OpenAI endpoint, wired to the real provider plugin."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_hookspecs import ModelSettings
from hermes_model_openai.provider import OpenAIProvider
from standins.openai_server import OpenAIStandIn

from hermes_core.agent import Toolbox, TurnEngine
from hermes_core.store import SessionStore

API_KEY = "sk-standin-test"


@pytest.fixture
def standin() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn(api_key=API_KEY) as server:
        yield server


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def store(home: Path) -> Iterator[SessionStore]:
    with SessionStore.open(home) as opened:
        yield opened


def settings_for(server: OpenAIStandIn, **changes: object) -> ModelSettings:
    """Settings pointing at the stand-in, with quick retries and timeouts."""
    values: dict[str, object] = {
        "provider": "openai",
        "model": "standin-model",
        "base_url": server.base_url,
        "api_key": API_KEY,
        "timeout_seconds": 5.0,
        "max_retries": 2,
        "extra": {"api_key_env": "OPENAI_API_KEY"},
    }
    values.update(changes)
    return ModelSettings(**values)  # type: ignore[arg-type]


@pytest.fixture
def engine(store: SessionStore, standin: OpenAIStandIn) -> TurnEngine:
    return TurnEngine(
        store, OpenAIProvider(), settings_for(standin), system_prompt="You are a test agent."
    )


def engine_with(store: SessionStore, server: OpenAIStandIn, **changes: object) -> TurnEngine:
    """An engine whose settings differ from the default fixture's."""
    return TurnEngine(
        store, OpenAIProvider(), settings_for(server, **changes), tools=Toolbox.default(store)
    )
