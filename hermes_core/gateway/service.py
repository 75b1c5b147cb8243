"""Putting the gateway together for ``hermes gateway run`` / ``status``.

``run`` loads the model settings and provider, the enabled adapters of
``gateway.platforms.<name>`` and the routing rules and reset policy, arms the automatic
clean-up (SPEC L3, done by the caller through the CLI context), then serves until SIGINT or
SIGTERM. While it runs, ``$HERMES_HOME/gateway/status.json`` says which process it is and how
each platform fared (with the address it listens on, when the adapter tells); a clean stop
removes it, so a file whose process is gone means the gateway died.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import UserFacingError

from hermes_core.files import AtomicFile
from hermes_core.files.errors import reason

if TYPE_CHECKING:
    from hermes_core.config import Config
    from hermes_core.plugins import PluginHost

    from .runner import Gateway

log = logging.getLogger("hermes.gateway")


class GatewayError(UserFacingError):
    """The gateway cannot run (no platform configured or none could start)."""


def status_path(home: Path) -> Path:
    """Where a running gateway describes itself."""
    return home / "gateway" / "status.json"


@dataclass
class GatewayStatus:
    """What ``status.json`` says, and whether its process is alive."""

    pid: int
    started_at: float
    platforms: list[dict[str, Any]] = field(default_factory=list)
    alive: bool = False


def read_status(home: Path) -> GatewayStatus | None:
    """The gateway's status file, or None when there is none (never ran, or stopped)."""
    path = status_path(home)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None
    status = GatewayStatus(
        pid=int(data.get("pid", 0)),
        started_at=float(data.get("started_at", 0.0)),
        platforms=list(data.get("platforms", [])),
    )
    status.alive = _process_alive(status.pid)
    return status


def _process_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_status(home: Path, gateway: Gateway, adapters: Mapping[str, object]) -> None:
    platforms = []
    for state in gateway.platforms:
        entry: dict[str, Any] = {"name": state.name, "running": state.running}
        if state.problem:
            entry["problem"] = state.problem
        address = getattr(adapters.get(state.name), "address", None)
        if state.running and isinstance(address, str):
            entry["address"] = address
        platforms.append(entry)
    document = {"pid": os.getpid(), "started_at": time.time(), "platforms": platforms}
    path = status_path(home)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with AtomicFile(path) as out:
            out.write((json.dumps(document, indent=2) + "\n").encode("utf-8"))
    except OSError as error:  # a full disk: the gateway serves anyway
        log.warning(
            "%s was not written (%s): 'hermes gateway status' will not see this gateway",
            path,
            reason(error),
        )


def enabled_platforms(config: Config) -> dict[str, dict[str, Any]]:
    """``gateway.platforms``: each platform whose settings do not say ``enabled: false``."""
    found: dict[str, dict[str, Any]] = {}
    for name, options in (config["gateway.platforms"] or {}).items():
        settings = dict(options or {})
        if settings.get("enabled", True) is False:
            continue
        found[str(name)] = settings
    return found


LOG_LEVEL_ENV = "HERMES_GATEWAY_LOG_LEVEL"


DEBUG_ENV = "HERMES_DEBUG"


class _OneLineFormatter(logging.Formatter):
    """Every record is one line: an exception attached to it (aiohttp's "Error handling
    request" on a malformed HTTP request, a client that reset its connection) is summed up as
    ``: Kind: what it says`` on the same line, its traceback only with ``HERMES_DEBUG=1``. Log
    lines may quote what platform users sent (a title, a name, an error about their message):
    their control characters are shown as ``^[``… (see ``hermes_core.terminal_text``)."""

    def __init__(self, *, tracebacks: bool) -> None:
        super().__init__("hermes gateway: %(message)s")
        self._tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        from hermes_core.terminal_text import terminal_safe

        if self._tracebacks:
            return terminal_safe(super().format(record))
        message = " ".join(record.getMessage().split())
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            said = " ".join(str(error).split())
            message += f": {type(error).__name__}" + (f": {said}" if said else "")
        if not record.name.startswith("hermes"):
            message = f"{record.name}: {message}"
        return terminal_safe(self._fmt % {"message": message} if self._fmt else message)


def configure_logging(env: Mapping[str, str] | None = None) -> None:
    """One line per event worth telling, on stderr, ours and the libraries' alike (aiohttp,
    asyncio: warnings and errors only). ``HERMES_GATEWAY_LOG_LEVEL=debug`` adds a timing line
    per turn (routing, store writes, whole turn); ``HERMES_DEBUG=1`` adds tracebacks."""
    values = os.environ if env is None else env
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLineFormatter(tracebacks=bool(values.get(DEBUG_ENV))))
    logger = logging.getLogger("hermes")
    logger.handlers[:] = [handler]
    wanted = values.get(LOG_LEVEL_ENV, "info").upper()
    logger.setLevel(logging.DEBUG if wanted == "DEBUG" else logging.INFO)
    logger.propagate = False
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)


async def serve(
    home: Path,
    config: Config,
    host: PluginHost,
    *,
    env: Mapping[str, str] | None = None,
    clock: Callable[[], float] = time.time,
    stop: asyncio.Event | None = None,
    store_url: str | None = None,
) -> None:
    """Run the gateway until ``stop`` is set (by SIGINT/SIGTERM when not given), on the store
    at ``store_url`` (None: the home's ``state.db``)."""
    from hermes_core.agent import load_model_settings, open_provider

    from .mirror import SessionsMirror, mirror_path
    from .policy import ResetPolicy
    from .routing import RoutingRules
    from .runner import Gateway
    from .worker import EventWorker

    platforms = enabled_platforms(config)
    if not platforms:
        raise GatewayError(
            "no platform is enabled: add one under gateway.platforms in config.yaml "
            "(for example gateway.platforms.webhook.secret)"
        )
    settings = load_model_settings(config, os.environ if env is None else env)
    provider = open_provider(host, settings)
    mirror = SessionsMirror(mirror_path(home)) if config["gateway.write_sessions_json"] else None
    worker = EventWorker(
        home,
        host,
        provider,
        settings,
        rules=RoutingRules.from_config(config),
        policy=ResetPolicy.from_config(config),
        mirror=mirror,
        clock=clock,
        store_url=store_url,
    )
    gateway = Gateway(worker, workers=int(config["gateway.workers"]))
    adapters: dict[str, object] = dict(host.platforms())
    loop = asyncio.get_running_loop()
    if stop is None:
        stop = asyncio.Event()
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(number, stop.set)
    await gateway.start(adapters, platforms)
    if not gateway.running_platforms:
        await gateway.stop()
        raise GatewayError("no platform could start (see the lines above)")
    _write_status(home, gateway, adapters)
    from .handoff import HandoffWatcher

    watcher = HandoffWatcher(worker, adapters, gateway.running_platforms)
    watching = asyncio.create_task(watcher.run(stop))
    from hermes_core.store.backends import default_url
    from hermes_core.store.backups import rolling_backups_for

    backups = rolling_backups_for(store_url or default_url(home), config)
    log.info(
        "running %s (pid %d); Ctrl-C or SIGTERM stops it",
        ", ".join(gateway.running_platforms),
        os.getpid(),
    )
    try:
        await stop.wait()
        gateway.refuse_new()  # from this moment, before anything else is awaited
        log.info("stopping: finishing %d turn(s) in flight", gateway.turns_in_flight)
    finally:
        gateway.refuse_new()
        stop.set()
        await asyncio.gather(watching, return_exceptions=True)
        await gateway.stop()
        if backups is not None:
            backups.stop()  # a backup process already started finishes by itself
        status_path(home).unlink(missing_ok=True)
    log.info("stopped")
