"""Choosing and opening the store's backend from ``store.url`` (DESIGN §8).

The URL comes from ``HERMES_STORE_URL``, else ``store.url`` in ``config.yaml``, else
``sqlite:///$HERMES_HOME/state.db``. Its scheme picks the backend: ``sqlite`` is built in (and
also registered as a default plugin, so ``hermes plugins`` and the registry show it); every
other scheme comes from a plugin's ``hermes_register_store_backends``. The plugins are loaded
only for such a scheme — and, without a plugin host at hand, only the plugin of that backend
(:func:`hermes_core.plugins.store_backend`) —, so the SQLite path costs nothing at start-up
and the core never imports a database driver it does not need.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from .errors import InvalidStoreUrl
from .store import STATE_DB_NAME, SessionEvents, SessionStore

if TYPE_CHECKING:
    from hermes_core.plugins import PluginHost

    from .protocol import Store

STORE_URL_ENV = "HERMES_STORE_URL"
SQLITE_SCHEME = "sqlite"
BACKEND_DISTRIBUTIONS = {"postgresql": "hermes-store-postgres", "postgres": "hermes-store-postgres"}
"""Where a backend that is not installed can be had, for the error message."""


def default_url(home: Path) -> str:
    """``sqlite:///<home>/state.db``."""
    return f"sqlite:///{Path(home).absolute() / STATE_DB_NAME}"


def configured_url(home: Path, config_url: str | None = None) -> str:
    """The store URL in force: ``HERMES_STORE_URL``, else ``config_url`` (``store.url``),
    else :func:`default_url`."""
    from_env = os.environ.get(STORE_URL_ENV, "").strip()
    if from_env:
        return from_env
    if config_url:
        return config_url.strip()
    return default_url(home)


def url_scheme(url: str) -> str:
    """The scheme of ``url``, lower-cased (``postgresql+psycopg`` → ``postgresql``); raises
    :class:`InvalidStoreUrl` when there is none."""
    scheme, separator, _rest = url.partition("://")
    scheme = scheme.split("+", 1)[0].strip().lower()
    if not separator or not scheme or not scheme.replace("-", "").isalnum():
        raise InvalidStoreUrl(
            f"store.url {redacted(url)!r} is not a URL: expected sqlite:///path/to/state.db "
            "or postgresql://host/database"
        )
    return scheme


def sqlite_path(url: str) -> Path:
    """The file of a ``sqlite:///…`` URL (``sqlite:////abs/path`` and ``sqlite:///rel`` as
    SQLAlchemy spells them; ``~`` expands)."""
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost") or not parts.path or parts.path == "/":
        raise InvalidStoreUrl(
            f"store.url {url!r}: a SQLite URL names a file, e.g. sqlite:///{Path.home()}"
            f"/.hermes/{STATE_DB_NAME}"
        )
    if parts.query or parts.fragment:
        raise InvalidStoreUrl(f"store.url {url!r}: a SQLite URL takes no ?query or #fragment")
    path = unquote(parts.path)
    # sqlite:///abs → "/abs"; sqlite:////abs → "//abs": both name /abs; "~" expands.
    if path.startswith("/~"):
        return Path(path[1:]).expanduser()
    return Path("/" + path.lstrip("/"))


def redacted(url: str) -> str:
    """``url`` with any password replaced by ``***`` (error messages never show it)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(":" + parts.password + "@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


class SqliteBackend:
    """The built-in backend: a :class:`SessionStore` in one SQLite file."""

    scheme = SQLITE_SCHEME
    description = "SQLite file (built in; the default)"

    def open(self, url: str, events: SessionEvents | None) -> SessionStore:
        """Open the store file the URL names (created, with its folder, when missing)."""
        path = sqlite_path(url)
        path.parent.mkdir(parents=True, exist_ok=True)
        return SessionStore(path, events=events)


SQLITE_BACKEND = SqliteBackend()


def open_url(
    url: str, *, events: SessionEvents | None = None, host: PluginHost | None = None
) -> Store:
    """Open the store at ``url`` with the backend its scheme names (see the module doc)."""
    scheme = url_scheme(url)
    if scheme == SQLITE_SCHEME:
        return SQLITE_BACKEND.open(url, events)
    if host is None:
        from hermes_core.plugins import store_backend

        backend = store_backend(scheme)  # that backend's plugin alone when it can
    else:
        backend = host.store_backends().get(scheme)
    if backend is None:
        hint = BACKEND_DISTRIBUTIONS.get(scheme)
        where = f" (pip install {hint})" if hint else ""
        raise InvalidStoreUrl(
            f"store.url {redacted(url)!r}: no store backend for '{scheme}' is installed{where}"
        )
    opened: Store = backend.open(url, events)
    return opened


def open_store(
    home: Path | str,
    *,
    events: SessionEvents | None = None,
    host: PluginHost | None = None,
    config_url: str | None = None,
) -> Store:
    """Open the store of the Hermes home ``home`` as configured (``HERMES_STORE_URL``,
    ``config_url`` — the ``store.url`` setting —, else ``home/state.db``). Without
    ``config_url`` the home's ``config.yaml`` is read for it."""
    home = Path(home).expanduser()
    if config_url is None and not os.environ.get(STORE_URL_ENV, "").strip():
        from hermes_core.config import load_config

        config_url = load_config(home)["store.url"]
    return open_url(configured_url(home, config_url), events=events, host=host)
