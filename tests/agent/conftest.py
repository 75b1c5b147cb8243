"""A real store and the stand-in OpenAI endpoint, wired to the real provider plugin."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_helpers import API_KEY, settings_for
from hermes_model_openai.provider import OpenAIProvider
from standins.openai_server import OpenAIStandIn

from hermes_core.agent import TurnEngine
from hermes_core.store import SessionStore


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


@pytest.fixture
def engine(store: SessionStore, standin: OpenAIStandIn) -> TurnEngine:
    return TurnEngine(
        store, OpenAIProvider(), settings_for(standin), system_prompt="You are a test agent."
    )
