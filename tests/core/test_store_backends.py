"""Choosing the store by ``store.url`` / ``HERMES_STORE_URL``, and backends as plugins."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest
from hermes_hookspecs import Message
from installed_hermes import hermes_command
from plugin_folders import write_dist_info
from typer.testing import CliRunner

from hermes_core.cli.app import build_app
from hermes_core.plugins import PluginHost
from hermes_core.search import session_search
from hermes_core.store import SessionStore
from hermes_core.store.backends import (
    STORE_URL_ENV,
    configured_url,
    default_url,
    open_store,
    open_url,
    redacted,
    sqlite_path,
    url_scheme,
)
from hermes_core.store.errors import InvalidStoreUrl
from hermes_core.store.protocol import Store

runner = CliRunner()


@pytest.fixture(autouse=True)
def no_store_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(STORE_URL_ENV, raising=False)


# ----------------------------------------------------------------------------- URLs


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:////srv/hermes/state.db", "/srv/hermes/state.db"),
        ("sqlite:///srv/hermes/state.db", "/srv/hermes/state.db"),
        ("sqlite://localhost/srv/state.db", "/srv/state.db"),
        ("sqlite:///srv/with%20space/state.db", "/srv/with space/state.db"),
    ],
)
def test_sqlite_urls_name_an_absolute_file(url: str, path: str) -> None:
    assert url_scheme(url) == "sqlite"
    assert sqlite_path(url) == Path(path)


def test_a_sqlite_url_may_start_at_the_users_home() -> None:
    assert sqlite_path("sqlite:///~/.hermes/state.db") == Path.home() / ".hermes" / "state.db"


@pytest.mark.parametrize(
    "url", ["sqlite://", "sqlite:///", "sqlite://otherhost/x.db", "sqlite:///x.db?mode=ro"]
)
def test_a_sqlite_url_without_a_plain_file_is_refused(url: str) -> None:
    with pytest.raises(InvalidStoreUrl, match="SQLite URL"):
        sqlite_path(url)


@pytest.mark.parametrize("url", ["state.db", "/home/me/state.db", "://x", "post gres://h/db"])
def test_text_without_a_scheme_is_not_a_store_url(url: str) -> None:
    with pytest.raises(InvalidStoreUrl, match="is not a URL"):
        url_scheme(url)


def test_a_driver_suffix_does_not_change_the_scheme() -> None:
    assert url_scheme("postgresql+psycopg://h/db") == "postgresql"
    assert url_scheme("PostgreSQL://h/db") == "postgresql"


def test_passwords_never_appear_in_messages() -> None:
    assert redacted("postgresql://ana:s3cret@db.example/hermes") == (
        "postgresql://ana:***@db.example/hermes"
    )
    assert redacted("sqlite:////srv/state.db") == "sqlite:////srv/state.db"
    with pytest.raises(InvalidStoreUrl) as raised:
        open_url(
            "postgresql://ana:s3cret@db.example/hermes", host=PluginHost(load_entry_points=False)
        )
    assert "s3cret" not in str(raised.value)
    assert "pip install hermes-store-postgres" in str(raised.value)


def test_the_environment_wins_over_the_config_which_wins_over_the_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    assert configured_url(home) == default_url(home) == f"sqlite:///{home / 'state.db'}"
    assert configured_url(home, "sqlite:////elsewhere/a.db") == "sqlite:////elsewhere/a.db"
    monkeypatch.setenv(STORE_URL_ENV, "sqlite:////from/env.db")
    assert configured_url(home, "sqlite:////elsewhere/a.db") == "sqlite:////from/env.db"


def test_open_store_reads_store_url_from_the_homes_config(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    target = tmp_path / "shared" / "team.db"
    (home / "config.yaml").write_text(f"store:\n  url: sqlite:///{target}\n", encoding="utf-8")
    with open_store(home) as store:
        assert isinstance(store, Store)
        session = store.create_session("cli")
        assert store.url == f"sqlite:///{target}"
    assert target.exists() and not (home / "state.db").exists()
    with SessionStore(target) as again:
        assert again.get_session(session.id).id == session.id


def test_session_search_without_a_store_opens_the_configured_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "elsewhere.db"
    with SessionStore(target) as store:
        session = store.create_session("cli")
        store.append_messages(session.id, [Message("user", "where is the okapi?")])
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "empty-home"))
    monkeypatch.setenv(STORE_URL_ENV, f"sqlite:///{target}")
    payload = session_search(query="okapi")
    assert [r["session_id"] for r in payload["results"]] == [session.id]


# ----------------------------------------------------------------------------- the CLI


def invoke(home: Path, *args: str) -> object:
    return runner.invoke(
        build_app(PluginHost(load_entry_points=False)), ["--home", str(home), *args]
    )


def test_the_cli_uses_the_store_the_environment_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "team" / "state.db"
    with SessionStore(target) as store:
        store.create_session("cli", title="kept in the team store")
    monkeypatch.setenv(STORE_URL_ENV, f"sqlite:///{target}")
    result = invoke(tmp_path / "home", "sessions", "list")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert "kept in the team store" in result.output  # type: ignore[attr-defined]
    assert not (tmp_path / "home" / "state.db").exists()


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "postgresql://ana:s3cret@db.example/hermes",
            "no store backend for 'postgresql' is installed (pip install hermes-store-postgres)",
        ),
        ("mongodb://db.example/hermes", "no store backend for 'mongodb' is installed"),
        ("just-a-path.db", "is not a URL"),
        ("sqlite://", "a SQLite URL names a file"),
    ],
)
def test_a_store_url_that_cannot_be_used_is_one_line_and_writes_nothing(
    tmp_path: Path, url: str, expected: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(f"store:\n  url: '{url}'\n", encoding="utf-8")
    result = invoke(home, "sessions", "list")
    assert result.exit_code == 1  # type: ignore[attr-defined]
    lines = result.output.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("hermes: store.url"), lines
    assert expected in lines[0]
    assert "s3cret" not in result.output  # type: ignore[attr-defined]
    assert sorted(p.name for p in home.iterdir()) == ["config.yaml"]


def test_store_url_must_be_text(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("store:\n  url: 5\n", encoding="utf-8")
    result = invoke(home, "sessions", "list")
    assert result.exit_code == 1  # type: ignore[attr-defined]
    assert "store.url must be a store URL" in result.output  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- a backend plugin

FILE_BACKEND = """
from pathlib import Path

from hermes_hookspecs import UserFacingError, hookimpl


class FileBackend:
    scheme = "file"
    description = "file:///path/to/state.db"

    def open(self, url, events):
        from hermes_core.store import SessionStore

        path = url.removeprefix("file://")
        if not path.startswith("/"):
            raise UserFacingError(f"store.url {url!r}: expected file:///absolute/path/state.db")
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        store = SessionStore(Path(path), events=events)
        (Path(path).parent / "opened-by-plugin").write_text(url)
        return store


@hookimpl
def hermes_register_store_backends(register):
    register(FileBackend())
"""


def run_installed(tmp_path: Path, *args: str, url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(
        HOME=str(tmp_path / "user-home"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        HERMES_HOME=str(tmp_path / "hermes-home"),
        PYTHONPATH=str(tmp_path / "site"),
        HERMES_STORE_URL=url,
        COLUMNS="200",
    )
    return subprocess.run(
        [hermes_command(), *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_a_backend_plugin_found_through_its_entry_point_serves_its_scheme(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "hermes_filestore.py").write_text(textwrap.dedent(FILE_BACKEND), encoding="utf-8")
    write_dist_info(
        site, "hermes-filestore", "0.2.0", {"hermes": {"filestore": "hermes_filestore"}}
    )
    target = tmp_path / "team" / "state.db"
    url = f"file://{target}"
    listed = run_installed(tmp_path, "sessions", "list", url=url)
    assert listed.returncode == 0, listed.stderr
    assert (target.parent / "opened-by-plugin").read_text() == url
    assert target.exists() and not (tmp_path / "hermes-home" / "state.db").exists()
    plugins = run_installed(tmp_path, "plugins", "--json", url=url)
    assert '"store backend:file"' in plugins.stdout
    refused = run_installed(tmp_path, "sessions", "list", url="file://relative/state.db")
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines() == [
        "hermes: store.url 'file://relative/state.db': expected file:///absolute/path/state.db"
    ]


NOISY_PLUGIN = """
from pathlib import Path

Path(__file__).with_name("noisy-was-imported").write_text("yes")
raise ImportError("the noisy plugin is broken")
"""


def test_a_command_that_opens_the_store_loads_only_its_backends_plugin(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "hermes_filestore.py").write_text(textwrap.dedent(FILE_BACKEND), encoding="utf-8")
    write_dist_info(site, "hermes-filestore", "0.2.0", {"hermes": {"file": "hermes_filestore"}})
    (site / "hermes_noisy.py").write_text(textwrap.dedent(NOISY_PLUGIN), encoding="utf-8")
    write_dist_info(site, "hermes-noisy", "0.1.0", {"hermes": {"noisy": "hermes_noisy"}})
    target = tmp_path / "team" / "state.db"
    url = f"file://{target}"
    listed = run_installed(tmp_path, "sessions", "list", url=url)
    # The backend's entry point is named like its scheme: its plugin alone was loaded.
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr == ""
    assert (target.parent / "opened-by-plugin").read_text() == url
    assert not (site / "noisy-was-imported").exists()
    # A command that loads every plugin still reports the broken one.
    plugins = run_installed(tmp_path, "plugins", "--json", url=url)
    assert '"store backend:file"' in plugins.stdout
    assert "plugin 'noisy' (hermes-noisy) failed to import" in plugins.stderr


def test_a_backend_plugin_that_fails_to_import_is_reported_as_before(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "hermes_filestore.py").write_text("raise ImportError('no driver')\n", encoding="utf-8")
    write_dist_info(site, "hermes-filestore", "0.2.0", {"hermes": {"file": "hermes_filestore"}})
    refused = run_installed(tmp_path, "sessions", "list", url=f"file://{tmp_path}/state.db")
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines() == [
        "hermes: plugin 'file' (hermes-filestore) failed to import: ImportError: no driver — "
        "see 'hermes plugins'",
        f"hermes: store.url 'file://{tmp_path}/state.db': no store backend for 'file' is installed",
    ]
