"""Every session-key form of SPEC G1, and G2 both ways."""

from __future__ import annotations

import pytest
from hermes_hookspecs import PlatformEvent, build_session_key

from hermes_core.config import Config
from hermes_core.gateway.routing import RoutingRules


def key(rules: RoutingRules, **fields: object) -> str:
    values: dict[str, object] = {"platform": "telegram", "chat_id": "c1", "text": "hi"}
    values.update(fields)
    return rules.key_for(PlatformEvent(**values))  # type: ignore[arg-type]


def test_a_dm_is_keyed_by_its_chat() -> None:
    assert key(RoutingRules(), chat_type="dm", user_id="u1") == "agent:main:telegram:dm:c1"
    assert key(RoutingRules(), platform="discord", chat_type="dm") == "agent:main:discord:dm:c1"


def test_a_group_is_per_user_by_default() -> None:
    rules = RoutingRules()
    assert key(rules, chat_type="group", user_id="alice") == "agent:main:telegram:group:c1:alice"
    assert key(rules, chat_type="group", user_id="bob") == "agent:main:telegram:group:c1:bob"


def test_a_channel_is_per_user() -> None:
    assert (
        key(RoutingRules(), platform="slack", chat_type="channel", chat_id="C9", user_id="U1")
        == "agent:main:slack:channel:C9:U1"
    )


def test_a_thread_is_shared_by_its_participants() -> None:
    rules = RoutingRules()
    alice = key(rules, chat_type="thread", thread_id="t7", user_id="alice")
    bob = key(rules, chat_type="group", thread_id="t7", user_id="bob")
    assert alice == bob == "agent:main:telegram:group:c1:t7"


def test_a_thread_is_per_user_with_thread_sessions_per_user() -> None:
    rules = RoutingRules(thread_sessions_per_user=True)
    assert (
        key(rules, chat_type="thread", thread_id="t7", user_id="alice")
        == "agent:main:telegram:group:c1:t7:alice"
    )


def test_a_room_without_participant_id_has_one_shared_session() -> None:
    rules = RoutingRules()
    assert key(rules, chat_type="group") == "agent:main:telegram:group:c1"
    assert key(rules, chat_type="channel", user_id="") == "agent:main:telegram:channel:c1"


@pytest.mark.parametrize("chat_type", ["group", "channel"])
def test_group_sessions_per_user_false_gives_one_room_brain(chat_type: str) -> None:
    rules = RoutingRules(group_sessions_per_user=False)
    alice = key(rules, chat_type=chat_type, user_id="alice")
    bob = key(rules, chat_type=chat_type, user_id="bob")
    assert alice == bob == f"agent:main:telegram:{chat_type}:c1"


def test_group_sessions_per_user_true_isolates_users() -> None:
    rules = RoutingRules(group_sessions_per_user=True)
    assert key(rules, chat_type="group", user_id="alice") != key(
        rules, chat_type="group", user_id="bob"
    )


def test_whatsapp_lid_and_phone_collapse_through_the_mapping() -> None:
    rules = RoutingRules(aliases={"whatsapp": {"123456789@lid": "5511999990000@s.whatsapp.net"}})
    by_lid = key(rules, platform="whatsapp", chat_id="123456789@lid", chat_type="dm")
    by_phone = key(
        rules, platform="whatsapp", chat_id="5511999990000@s.whatsapp.net", chat_type="dm"
    )
    assert by_lid == by_phone == "agent:main:whatsapp:dm:5511999990000@s.whatsapp.net"
    # In a group, the participant's aliases collapse the same way.
    in_group = key(
        rules, platform="whatsapp", chat_id="g1", chat_type="group", user_id="123456789@lid"
    )
    assert in_group == "agent:main:whatsapp:group:g1:5511999990000@s.whatsapp.net"


def test_without_a_mapping_aliases_stay_apart() -> None:
    rules = RoutingRules()
    assert key(rules, platform="whatsapp", chat_id="1@lid") != key(
        rules, platform="whatsapp", chat_id="2@s.whatsapp.net"
    )


def test_alias_chains_are_followed_and_cycles_stop() -> None:
    rules = RoutingRules(aliases={"whatsapp": {"a": "b", "b": "c", "x": "y", "y": "x"}})
    assert rules.canonical("whatsapp", "a") == "c"
    assert rules.canonical("whatsapp", "x") in {"x", "y"}


def test_the_rules_come_from_config() -> None:
    config = Config(
        {
            "group_sessions_per_user": False,
            "thread_sessions_per_user": True,
            "gateway.identity_aliases": {"whatsapp": {"1@lid": "2@s.whatsapp.net"}},
        }
    )
    rules = RoutingRules.from_config(config)
    assert rules.group_sessions_per_user is False
    assert rules.thread_sessions_per_user is True
    assert rules.canonical("whatsapp", "1@lid") == "2@s.whatsapp.net"
    assert RoutingRules.from_config(Config()).group_sessions_per_user is True


def test_the_contract_builder_is_what_routing_uses() -> None:
    assert build_session_key("webhook", "dm", "x") == "agent:main:webhook:dm:x"
