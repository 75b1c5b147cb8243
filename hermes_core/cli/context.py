"""What every command shares: the Hermes home, the plugin host, the store, the config."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import typer
    from hermes_hookspecs import Message, Session

    from hermes_core.config import Config
    from hermes_core.plugins import PluginHost
    from hermes_core.store.protocol import Store


def cli_context(ctx: typer.Context) -> CliContext:
    """The invocation's shared context, set by the root callback."""
    obj = ctx.find_root().obj
    assert isinstance(obj, CliContext)
    return obj


def default_home() -> Path:
    """``$HERMES_HOME``, else ``~/.hermes``."""
    configured = os.environ.get("HERMES_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".hermes"


@dataclass
class CliContext:
    """Created once per invocation; the store and plugins load only when a command asks."""

    home: Path
    host_override: PluginHost | None = None
    _host: PluginHost | None = field(default=None, repr=False)
    _store: Store | None = field(default=None, repr=False)
    _config: Config | None = field(default=None, repr=False)
    on_store_open: list[Callable[[Store], None]] = field(default_factory=list, repr=False)
    """Called once with the store when a command first opens it (the automatic clean-up)."""

    @property
    def host(self) -> PluginHost:
        if self._host is None:
            if self.host_override is not None:
                self._host = self.host_override
            else:
                from hermes_core.plugins import PluginHost

                self._host = PluginHost()
        return self._host

    @property
    def config(self) -> Config:
        if self._config is None:
            from hermes_core.config import load_config

            self._config = load_config(self.home)
        return self._config

    def start_sessions_command(self) -> None:
        """What every ``hermes sessions`` command does first: a broken ``config.yaml`` is
        reported before it runs, and the automatic clean-up is armed for when it opens the
        store."""
        _ = self.config
        from hermes_core.lifecycle.startup import arm_auto_clean

        arm_auto_clean(self)

    @property
    def store_url(self) -> str:
        """``HERMES_STORE_URL``, else ``store.url`` of ``config.yaml``, else the home's
        ``state.db``."""
        from hermes_core.store.backends import configured_url

        return configured_url(self.home, self.config["store.url"])

    @property
    def store(self) -> Store:
        if self._store is None:
            from hermes_core.store.backends import SQLITE_SCHEME, open_url, url_scheme

            url = self.store_url
            sqlite = url_scheme(url) == SQLITE_SCHEME
            # Start-up time is a budget: SQLite needs no plugin, another backend only its own
            # (open_url finds it alone) unless this command already has or was given a host.
            loaded = self._host or self.host_override
            host = None if sqlite or loaded is None else self.host
            self._store = open_url(url, events=_LazyHostEvents(self), host=host)
            if sqlite:
                self._start_backups(self._store)
            for hook in self.on_store_open:
                hook(self._store)
        return self._store

    def _start_backups(self, store: Store) -> None:
        """Rolling backups of a SQLite store opened for writing (``store.backups.*``)."""
        from hermes_core.store import SessionStore
        from hermes_core.store.backups import BackupSettings

        if isinstance(store, SessionStore):
            store.start_backups(BackupSettings.from_config(self.config))

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


class _LazyHostEvents:
    """Forwards store events to the plugin host, loading plugins only when an event fires
    (a plain listing never needs them, and start-up time is a budget)."""

    def __init__(self, context: CliContext) -> None:
        self._context = context

    def session_started(self, session: Session) -> None:
        self._context.host.session_started(session)

    def session_ended(self, session: Session, reason: str) -> None:
        self._context.host.session_ended(session, reason)

    def generate_title(self, session: Session, messages: Sequence[Message]) -> str | None:
        return self._context.host.generate_title(session, messages)
