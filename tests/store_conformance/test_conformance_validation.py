"""What every backend lets in (DESIGN §9): a session id of the store's grammar, the roles and
typed fields the model defines — refused otherwise with a ``ValueError`` naming the field and
the value, before anything is written (a batch with one bad message writes none of it)."""

from __future__ import annotations

import math

import pytest
from hermes_hookspecs import Message, ToolCall
from hostile_ids import HOSTILE_IDS

from hermes_core.store.protocol import Store

NOT_IDS = (
    *HOSTILE_IDS,
    "",
    "20260101_000000_ABCDEF",
    "20260101_000000_abcdef\n",
    "٢٠٢٦0101_000000_abcdef",
)

BAD_MESSAGES = [
    pytest.param(Message("wizard", "abracadabra"), "role 'wizard'", id="role"),  # type: ignore[arg-type]
    pytest.param(Message("user", None), "content None", id="content"),  # type: ignore[arg-type]
    pytest.param(Message("user", "x", timestamp=math.nan), "timestamp nan", id="nan-time"),
    pytest.param(Message("user", "x", timestamp=math.inf), "timestamp inf", id="inf-time"),
    pytest.param(Message("user", "x", timestamp="soon"), "timestamp 'soon'", id="text-time"),  # type: ignore[arg-type]
    pytest.param(Message("user", "x", token_count=-1), "token_count -1", id="negative-tokens"),
    pytest.param(Message("user", "x", token_count=1.5), "token_count 1.5", id="float-tokens"),  # type: ignore[arg-type]
    pytest.param(
        Message("assistant", "", tool_calls=("rm -rf",)),  # type: ignore[arg-type]
        "tool_calls holds 'rm -rf'",
        id="tool-call-shape",
    ),
    pytest.param(
        Message("assistant", "", tool_calls=(ToolCall("t", {"a": 1}),)),  # type: ignore[arg-type]
        "tool_calls holds",
        id="tool-call-arguments",
    ),
    pytest.param(Message("tool", "x", tool_call_id=7), "tool_call_id 7", id="tool-call-id"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("session_id", NOT_IDS)
def test_creating_refuses_an_id_outside_the_grammar(store: Store, session_id: str) -> None:
    with pytest.raises(ValueError, match=r"session id .* is not a session id"):
        store.create_session("cli", session_id=session_id)
    with pytest.raises(ValueError, match=r"session id .* is not a session id"):
        store.imports.create_session(source="cli", started_at=1.0, session_id=session_id)
    assert store.list_sessions(limit=10) == []


@pytest.mark.parametrize(("bad", "named"), BAD_MESSAGES)
def test_a_batch_with_one_bad_message_writes_none_of_it(
    store: Store, bad: Message, named: str
) -> None:
    session = store.create_session("cli", started_at=1.0)
    store.append_message(session.id, Message("user", "kept", timestamp=2.0))
    batch = [Message("user", "fine", timestamp=3.0), bad, Message("assistant", "also fine")]
    with pytest.raises(ValueError, match="message 2: " + named.replace("(", r"\(")) as refused:
        store.append_messages(session.id, batch, input_tokens=5)
    assert "\n" not in str(refused.value)
    with pytest.raises(ValueError, match="message 2: "):
        store.imports.append_messages(session.id, batch, default_timestamp=3.0)
    assert [m.content for m in store.messages(session.id)] == ["kept"]
    again = store.get_session(session.id)
    assert (again.message_count, again.input_tokens, again.last_active_at) == (1, 0, 2.0)


@pytest.mark.parametrize(
    ("tokens", "named"), [((-1, 0), "input_tokens -1"), ((0, 2.5), "output_tokens 2.5")]
)
def test_usage_added_with_a_batch_is_a_non_negative_whole_number(
    store: Store, tokens: tuple[int, int], named: str
) -> None:
    session = store.create_session("cli", started_at=1.0)
    with pytest.raises(ValueError, match=named):
        store.append_messages(
            session.id,
            [Message("user", "x")],
            input_tokens=tokens[0],
            output_tokens=tokens[1],
        )
    assert store.messages(session.id) == []


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"started_at": math.nan}, "started_at nan"),
        ({"started_at": "yesterday"}, "started_at 'yesterday'"),
        ({"source": ""}, "source ''"),
        ({"source": "cli\x1b[2J"}, "source 'cli\\\\x1b\\[2J'"),
        ({"input_tokens": -3}, "input_tokens -3"),
        ({"output_tokens": True}, "output_tokens True"),
        ({"ended_at": math.inf}, "ended_at inf"),
        ({"cost_estimated_usd": math.nan}, "cost_estimated_usd nan"),
        ({"pinned": 2}, "pinned 2"),
        ({"model": 42}, "model 42"),
    ],
)
def test_creating_refuses_a_session_field_of_the_wrong_type(
    store: Store, arguments: dict[str, object], named: str
) -> None:
    given = {"source": "cli", "started_at": 1.0, **arguments}
    source = given.pop("source")
    with pytest.raises(ValueError, match=named):
        store.create_session(source, **given)  # type: ignore[arg-type]
    assert store.list_sessions(limit=10) == []


def test_a_parent_kind_outside_the_vocabulary_is_refused(store: Store) -> None:
    parent = store.create_session("cli", started_at=1.0)
    with pytest.raises(ValueError, match="parent_kind 'adopted'"):
        store.create_session("cli", parent_session_id=parent.id, parent_kind="adopted")  # type: ignore[arg-type]
    assert [s.id for s in store.list_sessions(limit=10)] == [parent.id]
