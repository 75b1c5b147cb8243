"""``hermes mcp`` is read-only unless started with ``--allow-writes``, and ``--redact``
applies the redaction rules to every tool answer and every resource."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, types
from mcp_archive import SECRET, Archive, build_archive, error_text, payload, talk
from pydantic import AnyUrl

from hermes_core.store import SessionStore


@pytest.fixture
def archive(tmp_path: Path) -> Archive:
    return build_archive(tmp_path / "home")


def test_allow_writes_offers_rename_and_pin_and_they_land_in_the_store(
    archive: Archive,
) -> None:
    beta = archive.ids["beta"]

    async def scenario(session: ClientSession) -> Any:
        names = {tool.name for tool in (await session.list_tools()).tools}
        renamed = payload(
            await session.call_tool("session_rename", {"session_id": beta, "title": "Dashboards"})
        )
        pinned = payload(await session.call_tool("session_pin", {"session_id": beta[:10]}))
        taken = error_text(
            await session.call_tool(
                "session_rename",
                {"session_id": archive.ids["alpha_old"], "title": "Dashboards"},
            )
        )
        not_bool = error_text(
            await session.call_tool("session_pin", {"session_id": beta, "pinned": "yes"})
        )
        return names, renamed, pinned, taken, not_bool

    names, renamed, pinned, taken, not_bool = talk(archive.home, scenario, "--allow-writes")
    assert {"session_rename", "session_pin"} <= names
    assert renamed == {"session_id": beta, "title": "Dashboards"}
    assert pinned == {"session_id": beta, "pinned": True}
    assert "Dashboards" in taken
    assert "pinned must be true or false" in not_bool
    with SessionStore.open(archive.home) as store:
        stored = store.get_session(beta)
        assert stored.title == "Dashboards" and stored.pinned
        assert store.get_session(archive.ids["alpha_old"]).title == "Flamingo certificates"


def test_read_only_by_default_changes_nothing(archive: Archive) -> None:
    beta = archive.ids["beta"]

    async def scenario(session: ClientSession) -> Any:
        names = {tool.name for tool in (await session.list_tools()).tools}
        refused = error_text(await session.call_tool("session_pin", {"session_id": beta}))
        return names, refused

    names, refused = talk(archive.home, scenario)
    assert names == {"session_search", "session_info"}
    assert "read-only" in refused
    with SessionStore.open(archive.home) as store:
        assert not store.get_session(beta).pinned


def _everything_about_beta(archive: Archive) -> Any:
    beta = archive.ids["beta"]

    async def scenario(session: ClientSession) -> list[str]:
        texts = []
        for args in ({"query": "flamingo deploy settings", "detail": "full"}, {"session_id": beta}):
            result = await session.call_tool("session_search", args)
            payload(result)
            assert isinstance(result.content[0], types.TextContent)
            texts.append(result.content[0].text)
        contents = (await session.read_resource(AnyUrl(f"hermes://session/{beta}"))).contents
        assert isinstance(contents[0], types.TextResourceContents)
        texts.append(contents[0].text)
        return texts

    return scenario


def test_redact_removes_secrets_from_every_answer(archive: Archive) -> None:
    plain = talk(archive.home, _everything_about_beta(archive))
    assert all(SECRET in text for text in plain)  # the secret is there to be found

    redacted = talk(archive.home, _everything_about_beta(archive), "--redact")
    for text in redacted:
        assert SECRET not in text and SECRET[:12] not in text
        assert "[REDACTED" in text
        assert "flamingo deploy settings" in text
