"""``hermes serve`` reads through the store protocol only: the same pages from ``state.db``
and from a PostgreSQL database (a throwaway cluster), over real HTTP to the installed server."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from postgres_cluster import backend_home  # noqa: F401 - the fixture, once per backend
from web_archive import Archive, Served, append_from_another_process, build_archive


@pytest.fixture
def served(backend_home: Path) -> Iterator[tuple[Archive, httpx.Client]]:  # noqa: F811
    archive = build_archive(backend_home, long_messages=230)
    server = Served(archive.home)
    try:
        with httpx.Client(base_url=server.base, timeout=30) as client:
            assert client.get(server.url).status_code == 303
            yield archive, client
    finally:
        server.stop()


def test_list_search_session_paging_and_live_on_every_backend(
    served: tuple[Archive, httpx.Client],
) -> None:
    archive, client = served
    listed = client.get("/").text
    assert "Quokka migration plan" in listed and "Archived albatross" not in listed
    assert listed.index("Pinned penguin notes") < listed.index("Quokka migration plan")
    found = client.get("/api/search", params={"q": "quokka encl"}).json()
    assert archive.ids["planted"] in found["html"] and "<mark>" in found["html"]
    page = client.get(f"/session/{archive.ids['parent']}").text
    assert archive.ids["continuation"] in page and archive.ids["branch"] in page
    assert "build the heron pipeline" in page
    first = client.get(f"/session/{archive.ids['long']}").text
    assert len(re.findall(r'<article class="bubble', first)) == 200
    rest = client.get(f"/api/session/{archive.ids['long']}/page", params={"offset": 200}).json()
    assert (rest["offset"], rest["total"]) == (230, 230)
    assert "llama line 00229" in rest["html"]
    append_from_another_process(archive.home, archive.ids["long"], "a new llama line")
    after = client.get(
        f"/api/session/{archive.ids['long']}/after", params={"last": rest["last"]}
    ).json()
    assert (after["count"], after["total"]) == (1, 231)
    assert "a new llama line" in after["html"]
    assert "Hermes insights" in client.get("/insights").text
