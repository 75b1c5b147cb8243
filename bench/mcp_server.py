"""Figure (m): ``hermes mcp`` — what ``--import`` costs when nothing changed, and discovery
through MCP beside the in-process tool.

* ``mcp_import_nochange_*``: one look of ``--import claude`` (listing, one ``stat`` per log,
  the bookkeeping compared) over a tree of ``logs`` Claude Code logs already imported —
  what every answer pays at most once per ``--import-every`` seconds. Target ≤ 50 ms at 1,000.
* ``mcp_discovery_p95_*``: discovery calls (the (s) query classes' planted and natural words)
  sent by the MCP SDK's stdio client to the installed ``hermes mcp`` on a copy of the store,
  beside the same calls to ``session_search()`` in-process in the same run, interleaved.
  Target: the MCP p95 ≤ 1.5 × the in-process p95.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import anyio

from bench.search import open_read_only, percentile, query_classes
from hermes_core.search import session_search
from hermes_core.store.store import STATE_DB_NAME, SessionStore


def _claude_log(path: Path, index: int) -> None:
    session = f"{index:08d}-aaaa-4bbb-8ccc-{index:012d}"
    lines = []
    for turn, (role, text) in enumerate(
        [("user", f"bench question {index} about the parser"), ("assistant", "an answer")]
    ):
        record = {
            "parentUuid": None if turn == 0 else "u0",
            "isSidechain": False,
            "type": role,
            "uuid": f"u{turn}",
            "sessionId": session,
            "cwd": "/bench/project",
            "timestamp": f"2026-11-01T10:00:{turn:02d}.000Z",
            "message": {"role": role, "content": text}
            if role == "user"
            else {"role": role, "content": [{"type": "text", "text": text}], "id": f"m{index}"},
        }
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_import_nochange(workdir: Path, logs: int, repeats: int) -> list[float]:
    """Milliseconds of each no-change look over ``logs`` imported logs."""
    from hermes_mcp.freshness import Freshness

    from hermes_core.plugins import PluginHost

    root = workdir / f"mcp-import-{logs}"
    shutil.rmtree(root, ignore_errors=True)
    config = root / "claude"
    for index in range(logs):
        folder = config / "projects" / f"-bench-project-{index % 40}"
        folder.mkdir(parents=True, exist_ok=True)
        _claude_log(folder / f"{index:08d}-aaaa-4bbb-8ccc-{index:012d}.jsonl", index)
    os.environ["CLAUDE_CONFIG_DIR"] = str(config)
    importers = {"claude": PluginHost().importer("claude")}
    samples: list[float] = []
    with SessionStore.open(root / "home") as store:
        look = Freshness(store, importers, every=0, on_problem=print)
        first = look.import_new()
        assert first == logs, f"imported {first} of {logs} logs"
        for _ in range(repeats):
            started = time.perf_counter()
            assert look.import_new() == 0
            samples.append((time.perf_counter() - started) * 1000)
    shutil.rmtree(root, ignore_errors=True)
    return samples


def run_mcp_discovery(
    db_path: Path, workdir: Path, seed: int, repeats: int
) -> tuple[list[float], list[float]]:
    """(MCP milliseconds, in-process milliseconds) of the same discovery calls."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    home = workdir / "mcp-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    shutil.copyfile(db_path, home / STATE_DB_NAME)  # the cached store is never served
    connection = open_read_only(db_path)
    classes, _counts = query_classes(connection, seed)
    queries = [
        q for c in classes if c.name in {"rare", "medium", "common", "two_terms"} for q in c.queries
    ]
    hermes = shutil.which("hermes", path=str(Path(sys.executable).parent)) or "hermes"
    through_mcp: list[float] = []
    in_process: list[float] = []

    async def run() -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
        parameters = StdioServerParameters(
            command=hermes, args=["--home", str(home), "mcp"], env=env
        )
        async with (
            stdio_client(parameters) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for query in queries:  # warm both
                await session.call_tool("session_search", {"query": query})
                session_search(connection, query=query)
            for _ in range(repeats):
                for query in queries:
                    started = time.perf_counter()
                    result = await session.call_tool("session_search", {"query": query})
                    through_mcp.append((time.perf_counter() - started) * 1000)
                    assert not result.isError, result.content
                    started = time.perf_counter()
                    session_search(connection, query=query)
                    in_process.append((time.perf_counter() - started) * 1000)

    anyio.run(run)
    connection.close()
    shutil.rmtree(home, ignore_errors=True)
    return through_mcp, in_process


def p50_p95(samples: Sequence[float]) -> str:
    return f"{statistics.median(samples):.1f} / {percentile(samples, 0.95):.1f}"
