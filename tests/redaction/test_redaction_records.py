"""redact_record: every free-text field of a session and its messages, never ids."""

from __future__ import annotations

from dataclasses import fields

import secret_samples as s
from hermes_hookspecs import Message, Session, SessionRecord, ToolCall

from hermes_core.redaction import Redactor, marker
from hermes_core.redaction.records import (
    MESSAGE_FIELDS_KEPT,
    SESSION_FIELDS_KEPT,
    TOOL_CALL_FIELDS_KEPT,
)

TOKEN = s.GITHUB_CLASSIC["ghp"]
GH = marker("github-token")


def secret_record() -> SessionRecord:
    """A record with the same token in every string field, ids included."""
    session = Session(
        id=TOKEN,
        source="cli",
        started_at=1_700_000_000.0,
        title=f"debugging {TOKEN}",
        title_source="user",
        user_id=TOKEN,
        model=f"model-{TOKEN}",
        model_config={"api_key": "plain-secret", "base_url": f"https://x:{s.PASSWORD}@proxy"},
        system_prompt=f"You hold {TOKEN}",
        parent_session_id=TOKEN,
        parent_kind="delegate",
        ended_at=1_700_000_100.0,
        end_reason=f"error {TOKEN}",
        cwd=f"/home/me/{TOKEN}",
        git_branch=f"fix/{TOKEN}",
        git_repo_root=f"/repo/{TOKEN}",
        chat_id=TOKEN,
        chat_type="dm",
        thread_id=TOKEN,
        session_key=TOKEN,
        billing_provider=f"acct {TOKEN}",
        input_tokens=12,
        metadata={"import": {"path": f"/logs/{TOKEN}.jsonl", "lines": [TOKEN, 3]}},
    )
    messages = [
        Message(role="user", content=f"my token is {TOKEN}", timestamp=1.5, id=7, session_id=TOKEN),
        Message(
            role="assistant",
            content="calling",
            reasoning=f"the user pasted {TOKEN}",
            tool_calls=(
                ToolCall(name=f"tool {TOKEN}", arguments=f'{{"token": "{TOKEN}"}}', id=TOKEN),
            ),
            platform_message_id=TOKEN,
        ),
        Message(
            role="tool",
            content=f"export GH_TOKEN={TOKEN}",
            tool_call_id=TOKEN,
            tool_name=f"name {TOKEN}",
            token_count=5,
        ),
    ]
    return SessionRecord(session=session, messages=messages, children=(TOKEN,), lineage=(TOKEN,))


def test_every_free_text_field_is_redacted() -> None:
    record = secret_record()
    out = Redactor().redact_record(record)
    session = out.session
    assert session.title == f"debugging {GH}"
    assert session.model == f"model-{GH}"
    assert session.system_prompt == f"You hold {GH}"
    assert session.end_reason == f"error {GH}"
    assert session.cwd == f"/home/me/{GH}"
    assert session.git_branch == f"fix/{GH}"
    assert session.git_repo_root == f"/repo/{GH}"
    assert session.billing_provider == f"acct {GH}"
    assert session.model_config == {
        "api_key": marker("assignment"),
        "base_url": f"https://x:{marker('url-credentials')}@proxy",
    }
    assert session.metadata == {"import": {"path": f"/logs/{GH}.jsonl", "lines": [GH, 3]}}
    user, assistant, tool = out.messages
    assert user.content == f"my token is {GH}"
    assert assistant.reasoning == f"the user pasted {GH}"
    (call,) = assistant.tool_calls
    assert call.name == f"tool {GH}"
    assert call.arguments == f'{{"token": "{GH}"}}'
    assert tool.content == f"export GH_TOKEN={GH}"
    assert tool.tool_name == f"name {GH}"


def test_identifiers_timestamps_and_numbers_are_untouched() -> None:
    record = secret_record()
    out = Redactor().redact_record(record)
    for name in SESSION_FIELDS_KEPT:
        assert getattr(out.session, name) == getattr(record.session, name), name
    assert out.session.started_at == record.session.started_at
    assert out.session.ended_at == record.session.ended_at
    assert out.session.input_tokens == 12
    assert out.children == (TOKEN,)
    assert out.lineage == (TOKEN,)
    for before, after in zip(record.messages, out.messages, strict=True):
        for name in MESSAGE_FIELDS_KEPT:
            assert getattr(after, name) == getattr(before, name), name
        assert after.timestamp == before.timestamp
        assert after.token_count == before.token_count
        for call_before, call_after in zip(before.tool_calls, after.tool_calls, strict=True):
            for name in TOOL_CALL_FIELDS_KEPT:
                assert getattr(call_after, name) == getattr(call_before, name)


def test_the_record_given_is_not_modified() -> None:
    record = secret_record()
    Redactor().redact_record(record)
    assert record.session.title == f"debugging {TOKEN}"
    assert record.messages[0].content == f"my token is {TOKEN}"
    assert record.session.model_config is not None
    assert record.session.model_config["api_key"] == "plain-secret"


def test_every_string_field_of_the_contract_is_either_kept_or_redacted() -> None:
    # A field added to Session or Message later is redacted by default; this test shows
    # the split is explicit: every str field not kept comes out redacted here.
    record = secret_record()
    out = Redactor().redact_record(record)
    for name in (f.name for f in fields(Session)):
        value = getattr(record.session, name)
        if isinstance(value, str) and TOKEN in value and name not in SESSION_FIELDS_KEPT:
            assert TOKEN not in getattr(out.session, name), name
    for before, after in zip(record.messages, out.messages, strict=True):
        for name in (f.name for f in fields(Message)):
            value = getattr(before, name)
            if isinstance(value, str) and TOKEN in value and name not in MESSAGE_FIELDS_KEPT:
                assert TOKEN not in getattr(after, name), name


def test_counts_cover_the_whole_record() -> None:
    redactor = Redactor()
    redactor.redact_record(secret_record())
    assert redactor.counts["github-token"] == 16
    assert redactor.counts["assignment"] == 1
    assert redactor.counts["url-credentials"] == 1
