"""(q) Issue 25's table, SQLite beside PostgreSQL in one run: what a team moving to PostgreSQL
feels through the installed ``hermes`` — restoring a backup (``import --from jsonl``),
migrating a store (``sessions migrate``), and the wall time of ``sessions list``, ``show`` and
``search``.

On the SQLite store (p) built from the corpus (a copy of its sessions, fresh files and fresh
databases here, never the cache):

* ``q_restore_*``: ``hermes sessions export --format jsonl`` of the store (untimed), then
  ``hermes sessions import --from jsonl FILE`` into an empty home whose store is a fresh SQLite
  file, then a fresh PostgreSQL database (each its own home with ``store.url``); msgs/s wall.
* ``q_migrate_*``: ``hermes sessions migrate --to URL`` from the store into a fresh SQLite file
  and into a fresh PostgreSQL database (copy, progress bar, verification); msgs/s wall.
* ``q_discovery_after_restore_p95_*``: ``session_search`` per probe class on the restored
  PostgreSQL database right after the restore (the import's own ``ANALYZE`` only).
* ``q_<command>_wall_*``: medians over alternating runs of the installed ``hermes`` on the two
  restored homes (``sessions list``, ``sessions show <id>``, ``sessions search`` for two common
  words of the corpus), from
  cached bytecode; ``q_<command>_ratio`` PostgreSQL ÷ SQLite (target ≤ 1.25).
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from bench.backends import BACKENDS, _discovery, percentile, probes
from hermes_core.plugins import PluginHost
from hermes_core.store.backends import open_url


@dataclass
class TeamScaleFigures:
    """What (q) measured, by backend."""

    messages: int = 0
    restore_seconds: dict[str, float] = field(default_factory=dict)
    migrate_seconds: dict[str, float] = field(default_factory=dict)
    command_seconds: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    """command → backend → wall times."""
    discovery_after_restore_ms: dict[str, list[float]] = field(default_factory=dict)


def _hermes() -> str:
    found = shutil.which("hermes")
    if found is None:
        raise RuntimeError("the installed hermes is not on PATH (uv sync)")
    return found


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)}
    env.pop("HERMES_STORE_URL", None)
    return env


def _run(home: Path, *args: str, timeout: float = 7200) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [_hermes(), "--home", str(home), *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        env=_environment(),
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"hermes {' '.join(args)} failed: {done.stderr.strip()[-400:]}")
    return seconds


def _home(folder: Path, url: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(f"store:\n  url: '{url}'\n", encoding="utf-8")
    return folder


@contextmanager
def _fresh_urls(workdir: Path, label: str, name: str) -> Iterator[dict[str, str]]:
    from hermes_store_postgres.testing import fresh_database, start_cluster

    folder = workdir / f"team-{label}-{name}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    cluster = start_cluster(durable=True)
    try:
        with fresh_database(cluster) as database:
            yield {
                "sqlite": f"sqlite:///{folder / 'state.db'}",
                "postgresql": cluster.url(database),
            }
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


def run_team_scale(
    source_url: str, workdir: Path, label: str, *, runs: int, repeats: int
) -> TeamScaleFigures:
    """Measure (q) from the loaded SQLite store at ``source_url`` (see the module doc)."""
    figures = TeamScaleFigures()
    host = PluginHost()
    source = open_url(source_url, host=host)
    try:
        figures.messages = source.stats().total_messages
        by_class = probes(source, random.Random(1))
        some = next(iter(source.select_sessions(limit=1)))
    finally:
        source.close()
    source_home = _home(workdir / f"team-{label}-source", source_url)
    backup = workdir / f"team-{label}-backup.jsonl"
    _run(source_home, "sessions", "export", str(backup), "--format", "jsonl")
    try:
        with _fresh_urls(workdir, label, "restore") as urls:
            homes = {
                name: _home(workdir / f"team-{label}-restore-{name}", urls[name])
                for name in BACKENDS
            }
            for name in BACKENDS:
                figures.restore_seconds[name] = _run(
                    homes[name], "sessions", "import", "--from", "jsonl", str(backup)
                )
            restored = open_url(urls["postgresql"], host=host)
            try:
                figures.discovery_after_restore_ms = _discovery(restored, by_class, repeats)
            finally:
                restored.close()
            commands = {
                "list": ("sessions", "list"),
                "show": ("sessions", "show", some.id),
                "search": ("sessions", "search", " ".join(by_class["common"][:2])),
            }
            for command, args in commands.items():
                for name in BACKENDS:
                    _run(homes[name], *args)  # warm-up: bytecode caches, server buffers
                walls: dict[str, list[float]] = {name: [] for name in BACKENDS}
                for number in range(runs):
                    order = BACKENDS if number % 2 == 0 else tuple(reversed(BACKENDS))
                    for name in order:
                        walls[name].append(_run(homes[name], *args))
                figures.command_seconds[command] = walls
            for name in BACKENDS:
                shutil.rmtree(homes[name], ignore_errors=True)
    finally:
        backup.unlink(missing_ok=True)
    with _fresh_urls(workdir, label, "migrate") as urls:
        for name in BACKENDS:
            figures.migrate_seconds[name] = _run(
                source_home, "sessions", "migrate", "--to", urls[name]
            )
    shutil.rmtree(source_home, ignore_errors=True)
    return figures


def report(found: TeamScaleFigures, label: str) -> list[tuple[str, str, str, str]]:
    """(name, value, unit, note) lines for :func:`bench.figures.emit`."""
    lines: list[tuple[str, str, str, str]] = []
    messages = found.messages
    for what, seconds, how in (
        ("restore", found.restore_seconds, "hermes sessions import --from jsonl, wall"),
        ("migrate", found.migrate_seconds, "hermes sessions migrate --to, wall, verified"),
    ):
        rates = {name: messages / seconds[name] for name in seconds}
        for name, rate in rates.items():
            short = "pg" if name == "postgresql" else name
            lines.append((f"q_{what}_{short}_{label}", f"{rate:,.0f}", "msgs/s",
                          f"{how}; {seconds[name]:.1f} s for {messages:,} messages"))  # fmt: skip
        lines.append((f"q_{what}_ratio_{label}", f"{rates['postgresql'] / rates['sqlite']:.2f}",
                      "x", "PostgreSQL ÷ SQLite rate; target ≥ 0.5"))  # fmt: skip
    for probe_class, samples in found.discovery_after_restore_ms.items():
        lines.append((f"q_discovery_after_restore_p95_{probe_class}_pg_{label}",
                      f"{percentile(samples, 0.95):.1f}", "ms",
                      f"target ≤ 50 ms; right after the restore; {len(samples)} calls"))  # fmt: skip
    for command, walls in found.command_seconds.items():
        medians = {name: statistics.median(times) for name, times in walls.items()}
        for name, median in medians.items():
            short = "pg" if name == "postgresql" else name
            lines.append((f"q_{command}_wall_{short}_{label}", f"{median:.3f}", "s",
                          f"median of {len(walls[name])} runs, alternating"))  # fmt: skip
        lines.append((f"q_{command}_ratio_{label}",
                      f"{medians['postgresql'] / medians['sqlite']:.2f}", "x",
                      "PostgreSQL ÷ SQLite wall; target ≤ 1.25"))  # fmt: skip
    return lines
