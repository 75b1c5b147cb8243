"""``hermes serve``'s gate, over real HTTP against the installed server: the token, the Host
header, read-only by default, CSRF and Origin on writes, ``--redact``, one-line refusals."""

from __future__ import annotations

import contextlib
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from installed_hermes import hermes_command
from postgres_cluster import open_home_store
from web_archive import SECRET, Archive, Served, build_archive, server_environment


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Archive:
    return build_archive(tmp_path_factory.mktemp("web") / "home", long_messages=20)


@pytest.fixture(scope="module")
def served(archive: Archive) -> Iterator[Served]:
    server = Served(archive.home)
    yield server
    server.stop()


@contextlib.contextmanager
def signed_in(server: Served) -> Iterator[httpx.Client]:
    """A client that opened the printed address (and so holds the cookie)."""
    with httpx.Client(base_url=server.base, timeout=30) as client:
        first = client.get(server.url)
        assert first.status_code == 303
        assert first.headers["location"] == "/"
        cookie = first.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        yield client


def test_the_first_line_is_the_address_with_a_long_random_token(served: Served) -> None:
    assert served.first_line.startswith("http://127.0.0.1:")
    assert len(served.token) >= 24


def test_without_the_token_every_path_is_refused(served: Served) -> None:
    for path in ("/", "/api/list", "/api/search?q=quokka", "/insights", "/session/x"):
        response = httpx.get(served.base + path, timeout=30)
        assert response.status_code == 403, path
        assert "quokka" not in response.text.lower()
    wrong = httpx.get(served.base + "/?token=" + "A" * len(served.token), timeout=30)
    assert wrong.status_code == 403
    forged = httpx.get(
        served.base + "/", cookies={f"hermes_serve_{served.port}": "guess"}, timeout=30
    )
    assert forged.status_code == 403


def test_the_token_becomes_a_cookie_and_pages_open(served: Served, archive: Archive) -> None:
    with signed_in(served) as client:
        page = client.get("/")
        assert page.status_code == 200
        assert "Quokka migration plan" in page.text
        policy = page.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src 'nonce-" in policy
        assert "connect-src 'self'" in policy and "frame-ancestors 'none'" in policy
        assert page.headers["x-frame-options"] == "DENY"
        found = client.get("/api/search", params={"q": "quokka"}).json()
        assert archive.ids["planted"] in found["html"]
        assert "<mark>quokka</mark>" in found["html"].lower()


def test_a_foreign_host_header_is_refused_even_with_the_cookie(served: Served) -> None:
    with signed_in(served) as client:
        for host in ("attacker.invalid", f"attacker.invalid:{served.port}", "127.0.0.1", "[::1]"):
            response = client.get("/", headers={"Host": host})
            assert response.status_code == 403, host
            assert "Quokka" not in response.text
        assert client.get("/", headers={"Host": f"localhost:{served.port}"}).status_code == 200


def test_writes_are_refused_without_allow_writes(served: Served, archive: Archive) -> None:
    session_id = archive.ids["planted"]
    with signed_in(served) as client:
        csrf = _csrf(client)
        for action, payload in (
            ("rename", {"title": "Hijacked"}),
            ("pin", {"value": True}),
            ("archive", {"value": True}),
        ):
            response = client.post(
                f"/api/session/{session_id}/{action}",
                json=payload,
                headers={"X-Hermes-CSRF": csrf},
            )
            assert response.status_code == 403
            assert "--allow-writes" in response.text
    with open_home_store(archive.home) as store:
        session = store.get_session(session_id)
    assert (session.title, session.pinned, session.archived) == (
        "Quokka migration plan",
        False,
        False,
    )


def test_with_allow_writes_a_write_needs_the_csrf_value_and_our_origin(
    tmp_path: Path,
) -> None:
    archive = build_archive(tmp_path / "home", long_messages=4)
    session_id = archive.ids["planted"]
    server = Served(archive.home, "--allow-writes")
    try:
        with signed_in(server) as client:
            csrf = _csrf(client)
            url = f"/api/session/{session_id}/pin"
            assert client.post(url, json={"value": True}).status_code == 403
            wrong = client.post(url, json={"value": True}, headers={"X-Hermes-CSRF": "x" * 32})
            assert wrong.status_code == 403
            foreign = client.post(
                url,
                json={"value": True},
                headers={"X-Hermes-CSRF": csrf, "Origin": "http://attacker.invalid"},
            )
            assert foreign.status_code == 403
            with open_home_store(archive.home) as store:
                assert store.get_session(session_id).pinned is False
            good = client.post(
                url, json={"value": True}, headers={"X-Hermes-CSRF": csrf, "Origin": server.base}
            )
            assert good.status_code == 200, good.text
            renamed = client.post(
                f"/api/session/{session_id}/rename",
                json={"title": "Quokka plan, renamed"},
                headers={"X-Hermes-CSRF": csrf},
            )
            assert renamed.status_code == 200, renamed.text
            archived = client.post(
                f"/api/session/{session_id}/archive",
                json={"value": True},
                headers={"X-Hermes-CSRF": csrf},
            )
            assert archived.status_code == 200
            bad = client.post(
                f"/api/session/{session_id}/pin",
                json={"value": "yes"},
                headers={"X-Hermes-CSRF": csrf},
            )
            assert bad.status_code == 400
    finally:
        server.stop()
    with open_home_store(archive.home) as store:
        session = store.get_session(session_id)
    assert (session.title, session.pinned, session.archived) == ("Quokka plan, renamed", True, True)


def test_redact_hides_the_secret_on_every_page(tmp_path: Path) -> None:
    archive = build_archive(tmp_path / "home", long_messages=4)
    plain = Served(archive.home)
    try:
        with signed_in(plain) as client:
            assert SECRET in client.get(f"/session/{archive.ids['secret']}").text
    finally:
        plain.stop()
    server = Served(archive.home, "--redact")
    try:
        with signed_in(server) as client:
            pages = [
                client.get("/").text,
                client.get("/api/list").text,
                client.get("/api/search", params={"q": "walrus"}).text,
                client.get(f"/session/{archive.ids['secret']}").text,
                client.get(f"/api/session/{archive.ids['secret']}/page?offset=0").text,
                client.get(f"/api/session/{archive.ids['secret']}/after?last=0").text,
                client.get("/insights").text,
            ]
            assert "walrus" in pages[2] and "walrus" in pages[3]
            for text in pages:
                assert SECRET not in text
                assert SECRET[4:20] not in text
            assert "REDACTED" in pages[3]
    finally:
        server.stop()


def test_bad_parameters_and_unknown_sessions_are_one_line(served: Served) -> None:
    with signed_in(served) as client:
        assert client.get("/api/list", params={"active": "forever"}).status_code == 400
        assert client.get("/api/search", params={"q": "x", "role": "root"}).status_code == 400
        assert client.get("/api/session/20990101_000000_abcdef/page").status_code == 404
        missing = client.get("/session/20990101_000000_abcdef")
        assert missing.status_code == 404 and "no session" in missing.text
        assert client.get("/api/session/x/page?offset=-1").status_code in (400, 404)


def test_a_port_in_use_is_one_line_and_exit_1(archive: Archive) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        finished = subprocess.run(
            [hermes_command(), "--home", str(archive.home), "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env=server_environment(),
            timeout=120,
        )
    assert finished.returncode == 1
    assert finished.stderr.count("\n") == 1 and "Traceback" not in finished.stderr
    assert f"127.0.0.1:{port}" in finished.stderr


def _csrf(client: httpx.Client) -> str:
    page = client.get("/").text
    marker = '<meta name="hermes-csrf" content="'
    return page.split(marker, 1)[1].split('"', 1)[0]
