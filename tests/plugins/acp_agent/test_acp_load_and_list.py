"""``session/load`` and ``session/list`` over sessions of every origin: a Claude Code log
imported with ``hermes sessions import`` is listed, replayed to the editor turn by turn, and
then continued there (the new turns land in the same stored session). A session the editor
created and said nothing in is removed when the connection closes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from acp import text_block
from acp.schema import AgentMessageChunk, UserMessageChunk
from acp_harness import STEP_TIMEOUT, agent_env, hermes, hermes_acp, run, server, shown_messages
from hermes_hookspecs import Message
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.store import SessionStore

__all__ = ["server"]

CLAUDE_LOG = [
    {"type": "user", "uuid": "u1", "parentUuid": None, "text": "Why is the parser slow?"},
    {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "text": "It re-reads the file."},
    {"type": "user", "uuid": "u2", "parentUuid": "a1", "text": "Cache it then."},
    {"type": "assistant", "uuid": "a2", "parentUuid": "u2", "text": "Cached; twice as fast."},
]


def write_claude_log(folder: Path, cwd: str) -> Path:
    """A small Claude Code conversation log, as Claude Code writes one."""
    lines = []
    for index, entry in enumerate(CLAUDE_LOG):
        message: dict[str, object] = {"role": entry["type"], "content": entry["text"]}
        if entry["type"] == "assistant":
            message = {
                "id": f"msg_{index}",
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-4-7",
                "content": [{"type": "text", "text": entry["text"]}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
        lines.append(
            {
                "parentUuid": entry["parentUuid"],
                "isSidechain": False,
                "userType": "external",
                "cwd": cwd,
                "sessionId": "33333333-aaaa-4bbb-8ccc-000000000003",
                "version": "2.0.37",
                "gitBranch": "main",
                "type": entry["type"],
                "uuid": entry["uuid"],
                "timestamp": f"2026-03-01T10:00:0{index}.000Z",
                "message": message,
            }
        )
    log = folder / "33333333-aaaa-4bbb-8ccc-000000000003.jsonl"
    folder.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return log


def test_an_imported_session_is_listed_replayed_and_continued(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    home = tmp_path / "home"
    env = agent_env(home, server)
    log = write_claude_log(tmp_path / "claude" / "-work-parser", "/work/parser")
    imported = hermes(home, env, "sessions", "import", str(log), "--from", "claude")
    assert imported.returncode == 0, imported.stderr
    listed = hermes(home, env, "sessions", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    claude_id = row["id"]
    server.add(Reply(text="Yes, the cache holds."))

    async def scenario() -> dict[str, object]:
        async with hermes_acp(home, server) as agent:
            fresh = await agent.conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            listing = await agent.conn.list_sessions()
            in_parser = await agent.conn.list_sessions(cwd="/work/parser")
            await asyncio.wait_for(
                agent.conn.load_session(cwd="/work/parser", session_id=claude_id, mcp_servers=[]),
                STEP_TIMEOUT,
            )
            replayed = [
                (type(update).__name__, update.content.text)
                for sid, update in agent.editor.updates
                if sid == claude_id and isinstance(update, (UserMessageChunk, AgentMessageChunk))
            ]
            answer = await asyncio.wait_for(
                agent.conn.prompt(session_id=claude_id, prompt=[text_block("Does it hold?")]),
                STEP_TIMEOUT,
            )
            return {
                "fresh": fresh.session_id,
                "listing": listing,
                "in_parser": in_parser,
                "replayed": replayed,
                "stop": answer.stop_reason,
                "after": agent.editor.agent_text(claude_id)[len(CLAUDE_LOG) // 2 :],
            }

    seen = run(scenario())
    listing = seen["listing"]
    ids = [info.session_id for info in listing.sessions]  # type: ignore[attr-defined]
    assert ids == [seen["fresh"], claude_id]  # newest activity first
    claude_info = listing.sessions[1]  # type: ignore[attr-defined]
    assert claude_info.cwd == "/work/parser"
    assert claude_info.title  # a title, or the first message
    assert claude_info.updated_at.startswith("2026-03-01T10:00:03")
    assert claude_info.field_meta["hermes"]["source"] == "claude-code"
    assert [i.session_id for i in seen["in_parser"].sessions] == [claude_id]  # type: ignore[attr-defined]

    assert seen["replayed"] == [
        ("UserMessageChunk", "Why is the parser slow?"),
        ("AgentMessageChunk", "It re-reads the file."),
        ("UserMessageChunk", "Cache it then."),
        ("AgentMessageChunk", "Cached; twice as fast."),
    ]
    assert seen["stop"] == "end_turn"
    assert "".join(seen["after"]) == "Yes, the cache holds."  # type: ignore[arg-type]
    # The model was given the imported history with the new question.
    (request,) = [r for r in server.requests if "Does it hold?" in json.dumps(r)]
    contents = [m.get("content") for m in request["messages"]]
    assert "Why is the parser slow?" in contents and "Cached; twice as fast." in contents
    messages = shown_messages(home, env, claude_id)
    assert [(m["role"], m["content"]) for m in messages][-2:] == [
        ("user", "Does it hold?"),
        ("assistant", "Yes, the cache holds."),
    ]
    assert len(messages) == len(CLAUDE_LOG) + 2
    # The editor's new session in which nothing was said is gone with the connection.
    after = json.loads(hermes(home, env, "sessions", "list", "--json").stdout)
    assert [row["id"] for row in after] == [claude_id]


def test_the_list_comes_in_pages_and_untitled_sessions_show_their_first_words(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    with SessionStore.open(home) as store:
        for number in range(55):
            session = store.create_session(
                "telegram", gateway=True, started_at=1_700_000_000 + number
            )
            store.append_messages(
                session.id, [Message("user", f"question number {number}   about  paging")]
            )

    async def scenario() -> tuple[Any, Any]:
        async with hermes_acp(home, None) as agent:
            first = await agent.conn.list_sessions()
            second = await agent.conn.list_sessions(cursor=first.next_cursor)
            return first, second

    first, second = run(scenario())
    assert len(first.sessions) == 50 and first.next_cursor
    assert len(second.sessions) == 5 and second.next_cursor is None
    listed = [info.title for info in first.sessions + second.sessions]
    assert listed[0] == "question number 54 about paging"  # newest first, spaces folded
    assert listed[-1] == "question number 0 about paging"
    assert len(set(listed)) == 55
    assert {info.cwd for info in first.sessions} == {str(home)}  # no folder of their own
    assert first.sessions[0].field_meta["hermes"] == {
        "source": "telegram",
        "cwdRecorded": False,
        "endedAt": None,
    }
