"""Automatic titles written by the model (SPEC S5), in the store's background title thread,
through the stand-in endpoint; the model-free fallback when there is no model or it fails."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_helpers import settings_for
from hermes_hookspecs import Message
from hypothesis import given
from hypothesis import strategies as st
from standins.openai_server import TITLE_REQUEST_MARK, OpenAIStandIn, Reply

from hermes_core.agent import open_provider
from hermes_core.builtins.model_titles import TITLE_PROMPT, clean_title
from hermes_core.plugins import PluginHost
from hermes_core.store import SessionStore

TITLE_REQUEST = TITLE_REQUEST_MARK


@pytest.fixture
def host() -> PluginHost:
    return PluginHost(load_entry_points=True)


@pytest.fixture
def titled_store(home: Path, host: PluginHost) -> Iterator[SessionStore]:
    with SessionStore.open(home, events=host) as store:
        yield store


def first_exchange(store: SessionStore, title: str | None = None) -> str:
    session = store.create_session("cli", title=title)
    store.append_messages(session.id, [
        Message("user", "hello, can you help me tune postgres autovacuum settings?"),
        Message("assistant", "Sure: start with autovacuum_vacuum_scale_factor."),
    ])  # fmt: skip
    store.wait_for_titles(60)  # the first model call imports the SDK: slow on a busy machine
    return session.id


def test_the_model_writes_the_title(
    titled_store: SessionStore, host: PluginHost, standin: OpenAIStandIn
) -> None:
    open_provider(host, settings_for(standin))
    standin.add(Reply(text='Title: "Tuning Postgres Autovacuum Settings."', match=TITLE_REQUEST))
    session_id = first_exchange(titled_store)
    stored = titled_store.get_session(session_id)
    assert (stored.title, stored.title_source) == ("Tuning Postgres Autovacuum Settings", "auto")
    request = standin.requests[0]
    assert request["messages"][0] == {"role": "system", "content": TITLE_PROMPT}
    assert "postgres autovacuum" in request["messages"][1]["content"]
    assert request["max_tokens"] == 32 and "tools" not in request


def test_a_long_model_answer_is_cut_to_seven_words(
    titled_store: SessionStore, host: PluginHost, standin: OpenAIStandIn
) -> None:
    open_provider(host, settings_for(standin))
    standin.add(Reply(text="A very long title about tuning the autovacuum of postgres databases",
                      match=TITLE_REQUEST))  # fmt: skip
    title = titled_store.get_session(first_exchange(titled_store)).title
    assert title == "A very long title about tuning the"
    assert 3 <= len((title or "").split()) <= 7


def test_a_manual_title_is_never_replaced(
    titled_store: SessionStore, host: PluginHost, standin: OpenAIStandIn
) -> None:
    open_provider(host, settings_for(standin))
    standin.add(Reply(text="Model Title Here", match=TITLE_REQUEST))
    session_id = first_exchange(titled_store, title="my own title")
    assert titled_store.get_session(session_id).title == "my own title"
    assert standin.requests == []


def test_a_failing_model_leaves_the_title_to_the_fallback(
    titled_store: SessionStore, host: PluginHost, standin: OpenAIStandIn
) -> None:
    open_provider(host, settings_for(standin, max_retries=0))
    standin.add(Reply.failure(500, times=None, match=TITLE_REQUEST))
    session_id = first_exchange(titled_store)
    assert len(standin.requests) == 1
    title = titled_store.get_session(session_id).title
    assert title == "Can you help me tune postgres autovacuum"


def test_a_title_request_never_takes_the_reply_meant_for_the_next_turn(
    titled_store: SessionStore, host: PluginHost, standin: OpenAIStandIn
) -> None:
    assert TITLE_PROMPT.startswith(TITLE_REQUEST_MARK)
    open_provider(host, settings_for(standin, max_retries=0))
    standin.add(Reply(text="the next turn's answer"))
    session_id = first_exchange(titled_store)
    assert len(standin.requests) == 1 and standin.pending_replies == 1
    assert titled_store.get_session(session_id).title == "Can you help me tune postgres autovacuum"


def test_without_a_model_the_fallback_titles(
    titled_store: SessionStore, standin: OpenAIStandIn
) -> None:
    session_id = first_exchange(titled_store)
    assert titled_store.get_session(session_id).title == (
        "Can you help me tune postgres autovacuum"
    )
    assert standin.requests == []


@pytest.mark.parametrize(
    ("answer", "title"),
    [
        ("Docker networking basics", "Docker networking basics"),
        ("'Quoted title words here'", "Quoted title words here"),
        ("**Bold Markdown Title**\nand an explanation", "Bold Markdown Title"),
        ("título: Viagem a Lisboa em maio!", "Viagem a Lisboa em maio"),
        ("「東京旅行の計画」", "「東京旅行の計画」"),
        ("  \n ...  \n", None),
    ],
)
def test_clean_title(answer: str, title: str | None) -> None:
    assert clean_title(answer) == title


@given(st.text())
def test_a_cleaned_title_is_one_line_of_at_most_seven_words_without_quotes(answer: str) -> None:
    title = clean_title(answer)
    if title is not None:
        assert 1 <= len(title.split()) <= 7
        assert title == title.strip() and len(title.splitlines()) == 1
        assert not set(title) & set("\"'`“”")
