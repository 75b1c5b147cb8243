"""The ``gateway.platforms.matrix`` settings and the adapter's Matrix content rules."""

from __future__ import annotations

import pytest
from hermes_hookspecs import UserFacingError
from hermes_platform_matrix.adapter import (
    MatrixAdapter,
    edit_content,
    is_edit,
    reply_content,
    thread_root,
)
from hermes_platform_matrix.settings import parse_settings

GOOD = {"homeserver": "http://127.0.0.1:8008/", "user_id": "@bot:localhost", "password": "pw"}


@pytest.mark.parametrize(
    ("settings", "line"),
    [
        ({}, "gateway.platforms.matrix.homeserver is not set"),
        ({"homeserver": "h"}, "gateway.platforms.matrix.homeserver must be an http"),
        ({"homeserver": "http://x"}, "gateway.platforms.matrix.user_id is not set"),
        ({"homeserver": "http://x", "user_id": "bot"}, "must look like @name:server"),
        (
            {"homeserver": "http://x", "user_id": "@b:x"},
            "gateway.platforms.matrix.access_token is not set (nor gateway.platforms.matrix.password)",
        ),
        ({**GOOD, "allowed_rooms": [1]}, "gateway.platforms.matrix.allowed_rooms must be a list"),
        ({**GOOD, "auto_join": "yes"}, "gateway.platforms.matrix.auto_join must be true or false"),
        ({**GOOD, "stream_edit_seconds": -1}, "stream_edit_seconds must be a number"),
    ],
)
def test_each_bad_setting_is_one_line_naming_the_key(
    settings: dict[str, object], line: str
) -> None:
    with pytest.raises(UserFacingError) as raised:
        parse_settings(settings)
    assert line in str(raised.value) and "\n" not in str(raised.value)


def test_good_settings_and_a_token_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MX_TOKEN", "syt_secret")
    settings = parse_settings(
        {"homeserver": "https://matrix.example/", "user_id": "@bot:example",
         "access_token_env": "MX_TOKEN", "allowed_users": "@alice:example"}
    )  # fmt: skip
    assert settings.homeserver == "https://matrix.example"
    assert settings.access_token == "syt_secret" and settings.password is None
    assert settings.allowed_users == frozenset({"@alice:example"})
    assert settings.device_id == "HERMES" and settings.auto_join is True


def test_threads_replies_and_edits_are_spelled_as_the_matrix_spec_says() -> None:
    in_thread = reply_content("hi", reply_to="$msg", thread="$root")
    assert in_thread["m.relates_to"] == {
        "rel_type": "m.thread",
        "event_id": "$root",
        "is_falling_back": True,
        "m.in_reply_to": {"event_id": "$msg"},
    }
    assert thread_root(in_thread) == "$root"
    plain = reply_content("hi", reply_to="$msg", thread=None)
    assert thread_root(plain) is None and not is_edit(plain)
    edit = edit_content("$first", "whole answer")
    assert is_edit(edit) and edit["m.new_content"]["body"] == "whole answer"


def test_session_keys_follow_g1() -> None:
    adapter = MatrixAdapter()
    assert adapter.session_key("dm", "!r:x", "@a:x", None) == "agent:main:matrix:dm:!r:x"
    assert adapter.session_key("group", "!r:x", "@a:x", None) == "agent:main:matrix:group:!r:x:@a:x"
    assert adapter.session_key("thread", "!r:x", "@a:x", "$t") == "agent:main:matrix:group:!r:x:$t"


def test_sending_while_not_running_is_one_line() -> None:
    with pytest.raises(UserFacingError, match="the matrix platform is not running"):
        MatrixAdapter().send("!r:x", "hello")
