"""The chat in a real pseudo-terminal with hostile text everywhere it shows something (DESIGN
§9, issue 23): a resumed session's recap panel (its title, messages and tool names), ``/title``,
an answer streamed by the model in pieces that cut its escape sequences in two, the model's
tool calls (a hostile tool name, a ``session_search`` result quoting stored text) and an error
the endpoint sent. Every control character reaches the terminal visibly (``^[]0;PWNED^G``),
while the chat's own colours still do; the store keeps the exact text. The command line's
side is ``tests/core/test_hostile_text_on_terminal.py``."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pexpect
from chat_helpers import PROMPT, chat_env
from hostile_text import (
    ANSWER,
    ANSWER_SHOWN,
    PAYLOAD,
    PAYLOAD_SHOWN,
    TITLE_SHOWN,
    TOOL,
    TOOL_SHOWN,
    USER_TEXT_SHOWN,
    received,
    store_hostile_session,
)
from installed_hermes import hermes_command
from standins.openai_server import OpenAIStandIn, Reply, ScriptedToolCall

from hermes_core.store import SessionStore

QUERY = "ansiword \x9d0;PWNED-Q\x9c\u202eeval"
QUERY_SHOWN = "ansiword <U+009D>0;PWNED-Q<U+009C><U+202E>eval"


def test_recap_streamed_answer_tool_lines_and_errors_show_control_characters_visibly(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    home = tmp_path / "home"
    session_id = store_hostile_session(home)
    server.add(
        Reply(
            tool_calls=[
                ScriptedToolCall("session_search", json.dumps({"query": QUERY})),
                ScriptedToolCall(TOOL, json.dumps({"x": QUERY})),
            ]
        )
    )
    server.add(Reply(text=ANSWER, chunk_chars=3))  # ESC [ 3 | 1 m …: every sequence cut
    server.add(Reply.failure(400, message=f"bad request {PAYLOAD}"))
    child = pexpect.spawn(
        hermes_command(),
        ["--resume", session_id],
        env=chat_env(tmp_path, server),
        dimensions=(60, 220),
        timeout=30,
    )
    log = io.BytesIO()
    child.logfile_read = log

    def say(text: str) -> None:
        child.expect_exact(PROMPT.encode())
        child.send(text + "\r")

    child.expect_exact(b"Resumed ")
    say("/title")
    child.expect_exact(b"Title: ")
    say("what did we say?")
    child.expect_exact(b"done")  # the streamed answer's end
    say("and again")
    child.expect_exact(b"bad request")
    child.expect_exact(PROMPT.encode())
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, log.getvalue()[-2000:]

    screen = received(log.getvalue())
    shown = screen.visible
    # The recap panel: its title, the user's message (NUL, C1, bidi, [bold red] markup…), the
    # assistant's answer and the name of the tool it called.
    assert f"Resumed {TITLE_SHOWN} ({session_id})" in shown
    assert f"● {USER_TEXT_SHOWN}" in shown
    assert f"◆ {ANSWER_SHOWN} [1 tool call: {TOOL_SHOWN}]" in shown
    assert f"Title: {TITLE_SHOWN}" in shown
    # The tool lines: the calls the model made (a hostile tool name, arguments with C1
    # controls: JSON escapes only C0 ones), then the results, session_search's quoting them.
    assert f'⚙ session_search(query="{QUERY_SHOWN}")' in shown
    assert f'⚙ {TOOL_SHOWN}(x="{QUERY_SHOWN}")' in shown
    assert f'↳ {{"form": "discovery", "query": "{QUERY_SHOWN}"' in shown
    assert ANSWER_SHOWN in shown.split("↳", 1)[1]  # streamed in pieces, cut anywhere
    assert f"bad request {PAYLOAD_SHOWN}" in shown
    # The chat's own styling still reaches the terminal: the recap's gold ● and rich's cyan
    # tool line.
    assert re.search(r"\x1b\[[0-9;]*38;5;220[0-9;]*m●", screen.raw)
    assert re.search(r"\x1b\[36m⚙ session_search", screen.raw)

    with SessionStore.open(home) as store:  # shown harmlessly, stored exactly
        messages = store.messages(session_id)
    assert [m.content for m in messages].count(ANSWER) == 2  # the stored one, and the new one
    assert TOOL in [call.name for m in messages for call in m.tool_calls][1:]
