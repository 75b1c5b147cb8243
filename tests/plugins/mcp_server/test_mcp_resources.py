"""``hermes mcp`` resources, through the SDK's stdio client: each session as Markdown
(``hermes://session/{id}``, the Markdown exporter's file), its template, the recent list,
and an unknown session as a protocol error the server survives."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import ClientSession, types
from mcp.shared.exceptions import McpError
from mcp_archive import Archive, build_archive, talk
from pydantic import AnyUrl


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Archive:
    return build_archive(tmp_path_factory.mktemp("mcp") / "home")


def text_of(result: types.ReadResourceResult) -> tuple[str, str | None]:
    (content,) = result.contents
    assert isinstance(content, types.TextResourceContents)
    return content.text, content.mimeType


def test_resources_list_the_recent_sessions_and_a_template(archive: Archive) -> None:
    async def scenario(session: ClientSession) -> Any:
        return (await session.list_resources()).resources, (
            await session.list_resource_templates()
        ).resourceTemplates

    resources, templates = talk(archive.home, scenario)
    uris = [str(resource.uri) for resource in resources]
    assert uris[0] == "hermes://sessions/recent"
    assert uris[1:3] == [
        f"hermes://session/{archive.ids['alpha_new']}",
        f"hermes://session/{archive.ids['beta']}",
    ]
    assert set(uris[1:]) == {f"hermes://session/{i}" for i in archive.ids.values()}
    beta = next(r for r in resources if str(r.uri).endswith(archive.ids["beta"]))
    assert beta.name == "Beta flamingo dashboard" and beta.mimeType == "text/markdown"
    (template,) = templates
    assert template.uriTemplate == "hermes://session/{id}"


def test_a_session_reads_as_the_markdown_export(archive: Archive) -> None:
    beta = archive.ids["beta"]

    async def scenario(session: ClientSession) -> Any:
        by_id = text_of(await session.read_resource(AnyUrl(f"hermes://session/{beta}")))
        by_prefix = text_of(await session.read_resource(AnyUrl(f"hermes://session/{beta[:10]}")))
        recent = text_of(await session.read_resource(AnyUrl("hermes://sessions/recent")))
        return by_id, by_prefix, recent

    (markdown, mime), (by_prefix, _), (recent, recent_mime) = talk(archive.home, scenario)
    assert mime == "text/markdown"
    assert markdown.startswith("---\n") and f'session_id: "{beta}"' in markdown
    assert "Beta flamingo dashboard" in markdown
    assert "flamingo dashboard colours for the beta site" in markdown
    assert f'session_id: "{beta}"' in by_prefix
    assert recent_mime == "application/json"
    rows = json.loads(recent)["sessions"]
    assert [row["session_id"] for row in rows][:2] == [archive.ids["alpha_new"], beta]


def test_an_unknown_session_or_resource_is_an_error_and_the_server_goes_on(
    archive: Archive,
) -> None:
    async def scenario(session: ClientSession) -> Any:
        messages = []
        for uri in ("hermes://session/no-such-session", "hermes://elsewhere/x", "hermes://session/"):
            with pytest.raises(McpError) as caught:
                await session.read_resource(AnyUrl(uri))
            messages.append(caught.value.error.message)
        after = text_of(await session.read_resource(AnyUrl("hermes://sessions/recent")))
        return messages, after

    (missing, elsewhere, empty), (after, _) = talk(archive.home, scenario)
    assert "no-such-session" in missing
    assert "unknown resource" in elsewhere and "hermes://session/{id}" in elsewhere
    assert "unknown resource" in empty
    assert json.loads(after)["sessions"]
