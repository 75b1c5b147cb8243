"""``hermes mcp`` over stdio, driven by the MCP SDK's own client in a separate process:
initialise, list the tools, each form of ``session_search``, the filters, ``session_info``
(the id to resume), and every kind of bad call coming back as a one-line tool error."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import ClientSession
from mcp_archive import Archive, build_archive, error_text, payload, talk

from hermes_core.search.tool import SESSION_SEARCH_TOOL, TOOL_DESCRIPTION


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Archive:
    return build_archive(tmp_path_factory.mktemp("mcp") / "home")


def result_ids(data: dict[str, Any]) -> list[str]:
    return [result["session_id"] for result in data["results"]]


def test_the_search_tool_is_the_agent_tool_with_the_selection_filters(archive: Archive) -> None:
    async def scenario(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in talk(archive.home, scenario)}
    assert set(tools) == {"session_search", "session_info"}  # read-only: no writing tools
    search = tools["session_search"]
    assert search.description is not None and search.description.startswith(TOOL_DESCRIPTION)
    own = SESSION_SEARCH_TOOL["parameters"]
    for name, schema in own["properties"].items():
        assert search.inputSchema["properties"][name] == schema
    extra = set(search.inputSchema["properties"]) - set(own["properties"])
    assert extra == {"cwd", "newer_than", "older_than", "after", "before"}
    assert search.inputSchema["additionalProperties"] is False


def test_all_four_forms_answer_with_the_tools_own_payload(archive: Archive) -> None:
    alpha_new = archive.ids["alpha_new"]
    anchor = archive.messages["alpha_new"][20]

    async def scenario(session: ClientSession) -> list[dict[str, Any]]:
        calls = [
            {"query": "flamingo", "limit": 5},
            {"session_id": alpha_new, "around_message_id": anchor, "window": 2},
            {"session_id": alpha_new},
            {},
        ]
        return [payload(await session.call_tool("session_search", call)) for call in calls]

    discovery, scroll, read, browse = talk(archive.home, scenario)
    assert discovery["form"] == "discovery"
    assert set(result_ids(discovery)) == {
        archive.ids[name] for name in ("alpha_old", "beta", "telegram")
    }
    assert discovery["results"][0]["detail"] == "full"
    assert scroll["form"] == "scroll"
    assert [m["id"] for m in scroll["messages"]] == archive.messages["alpha_new"][18:23]
    assert read["form"] == "read" and read["session_id"] == alpha_new
    assert browse["form"] == "browse"
    assert [row["session_id"] for row in browse["sessions"]][:2] == [
        alpha_new,
        archive.ids["beta"],
    ]


def test_filters_narrow_discovery_and_browse_by_workspace_time_and_origin(
    archive: Archive,
) -> None:
    async def scenario(session: ClientSession) -> list[dict[str, Any]]:
        calls = [
            {"query": "flamingo", "cwd": "/work/alpha"},
            {"query": "flamingo", "newer_than": "10d"},
            {"query": "flamingo", "before": "10d"},
            {"query": "flamingo", "source": "telegram"},
            {"query": "flamingo", "cwd": "/work/alpha", "newer_than": "10d"},
            {"cwd": "/work/alpha"},
            {"newer_than": "36h"},
        ]
        return [payload(await session.call_tool("session_search", call)) for call in calls]

    in_alpha, recent, old, telegram, nothing, browse_alpha, browse_recent = talk(
        archive.home, scenario
    )
    assert result_ids(in_alpha) == [archive.ids["alpha_old"]]
    assert set(result_ids(recent)) == {archive.ids["beta"], archive.ids["telegram"]}
    assert result_ids(old) == [archive.ids["alpha_old"]]
    assert result_ids(telegram) == [archive.ids["telegram"]]
    assert nothing["results"] == []
    assert [row["session_id"] for row in browse_alpha["sessions"]] == [
        archive.ids["alpha_new"],
        archive.ids["alpha_old"],
    ]
    assert [row["session_id"] for row in browse_recent["sessions"]] == [archive.ids["alpha_new"]]


def test_session_info_gives_the_id_to_resume_from_a_prefix_or_title(archive: Archive) -> None:
    beta = archive.ids["beta"]

    async def scenario(session: ClientSession) -> list[dict[str, Any]]:
        return [
            payload(await session.call_tool("session_info", {"session_id": reference}))
            for reference in (beta, beta[:10], "Beta flamingo dashboard")
        ]

    for info in talk(archive.home, scenario):
        assert info["session_id"] == beta
        assert info["resume"] == f"hermes --resume {beta}"
        assert info["cwd"] == "/work/beta" and info["source"] == "cli"
        assert info["message_count"] == 2


def test_bad_calls_are_one_line_tool_errors_and_the_server_keeps_answering(
    archive: Archive,
) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("session_search", {"query": "flamingo", "limit": "many"}),
        ("session_search", {"sort": "sideways", "query": "x"}),
        ("session_search", {"colour": "blue"}),
        ("session_search", {"around_message_id": 3}),
        ("session_search", {"session_id": "no-such-session"}),
        ("session_search", {"query": "x", "newer_than": "yesterday"}),
        ("session_search", {"query": "x", "cwd": 7}),
        ("session_search", {"query": "x", "after": "1d", "before": "2d"}),
        ("session_info", {"session_id": "no-such-session"}),
        ("session_info", {}),
        ("session_rename", {"session_id": "x", "title": "y"}),
        ("no_such_tool", {}),
    ]

    async def scenario(session: ClientSession) -> tuple[list[str], dict[str, Any]]:
        errors = [error_text(await session.call_tool(name, args)) for name, args in calls]
        still = payload(await session.call_tool("session_search", {"query": "pelican"}))
        return errors, still

    errors, still = talk(archive.home, scenario)
    limit, sort, unknown, orphan, missing, when, cwd, window, info, no_id, write, tool = errors
    assert "limit must be an integer" in limit
    assert "sort must be one of newest, oldest" in sort
    assert "unknown argument(s) colour" in unknown and "newer_than" in unknown
    assert "around_message_id needs session_id" in orphan
    assert "no-such-session" in missing
    assert when.startswith("newer_than: 'yesterday' is not")
    assert "cwd must be a string" in cwd
    assert "after 1d and before 2d leave an empty window" in window
    assert "no-such-session" in info
    assert "session_id is required" in no_id
    assert "read-only" in write and "--allow-writes" in write
    assert "no tool 'no_such_tool'" in tool
    assert result_ids(still) == [archive.ids["alpha_new"]]
