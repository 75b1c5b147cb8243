"""Importing a Hermes Agent ``state.db``: throughput of the first import, the unchanged
re-import, and the re-import after the store grew by 1 %.

``uv run python bench/hermes_agent_store.py [--messages 100000] [--workdir DIR] [--seed 1]``

The store is the latest documented shape (schema v30, built with the test suite's DDL in
``tests/importing/hermes_agent/agent_stores.py``), filled from the bench corpus
(``corpus.CorpusGenerator``: 100 messages per session, realistic lengths, some CJK); assistant
turns before a tool message carry the matching tool call. Each figure is the installed
``hermes sessions import --from hermes-agent PATH`` in a fresh process with ``HERMES_HOME`` in
a fresh temporary folder (the first import) kept for the re-imports. Generation never counts.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "tests" / "importing" / "hermes_agent")]

from agent_stores import create_store  # noqa: E402

from bench.corpus import CorpusGenerator  # noqa: E402

MESSAGES_PER_SESSION = 100


def build_store(path: Path, messages: int, seed: int) -> int:
    """Write a v30 store of ``messages`` messages; returns the number of sessions."""
    sessions = max(1, messages // MESSAGES_PER_SESSION)
    connection = create_store(path, 30, wal=False)
    connection.execute("BEGIN")
    for corpus in CorpusGenerator(seed).sessions(sessions):
        session_id = time.strftime("%Y%m%d_%H%M%S", time.gmtime(corpus.started_at))
        session_id += f"_{corpus.index:06x}"
        connection.execute(
            "INSERT INTO sessions (id, source, model, started_at, ended_at, end_reason, title, cwd,"
            " input_tokens, output_tokens, message_count) VALUES (?, ?, ?, ?, ?, 'user_exit', ?, ?,"
            " ?, ?, ?)",
            (
                session_id, corpus.source, corpus.model, corpus.started_at,
                corpus.messages[-1].timestamp, corpus.title, corpus.cwd, 1000, 500,
                len(corpus.messages),
            ),
        )  # fmt: skip
        rows = []
        for number, message in enumerate(corpus.messages):
            calls = None
            following = corpus.messages[number + 1] if number + 1 < len(corpus.messages) else None
            if message.role == "assistant" and following is not None and following.role == "tool":
                calls = json.dumps([{
                    "id": f"call_{corpus.index}_{number}", "type": "function",
                    "function": {"name": following.tool_name or "terminal", "arguments": "{}"},
                }])  # fmt: skip
            call_id = f"call_{corpus.index}_{number - 1}" if message.role == "tool" else None
            rows.append((session_id, message.role, message.content, message.timestamp,
                         calls, call_id, message.tool_name))  # fmt: skip
        connection.executemany(
            "INSERT INTO messages (session_id, role, content, timestamp, tool_calls, tool_call_id,"
            " tool_name) VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    connection.execute("COMMIT")
    connection.close()
    return sessions


def grow(path: Path, extra: int) -> None:
    """Append ``extra`` messages spread over the existing sessions."""
    connection = sqlite3.connect(path)
    ids = [row[0] for row in connection.execute("SELECT id FROM sessions ORDER BY id")]
    with connection:
        connection.executemany(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
            [(ids[i % len(ids)], f"follow-up question {i}", 2e9 + i) for i in range(extra)],
        )
    connection.close()


def hermes(home: Path, *args: str) -> float:
    """Seconds one installed ``hermes`` run takes (it must succeed)."""
    command = shutil.which("hermes", path=str(Path(sys.executable).parent)) or "hermes"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env["HERMES_HOME"] = str(home)
    started = time.perf_counter()
    done = subprocess.run([command, *args], env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"hermes {' '.join(args)} failed: {done.stderr.strip()}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--workdir", type=Path, default=_ROOT / "bench" / ".corpus")
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    size = f"{options.messages // 1000}k"
    store = options.workdir / f"hermes-agent-seed{options.seed}-{options.messages}" / "state.db"
    store.parent.mkdir(parents=True, exist_ok=True)
    if not store.exists():
        started = time.perf_counter()
        sessions = build_store(store, options.messages, options.seed)
        print(f"# generated {sessions} sessions in {time.perf_counter() - started:.1f} s")
    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as folder:
        home = Path(folder) / "home"
        first = hermes(home, "sessions", "import", "--from", "hermes-agent", str(store))
        megabytes = store.stat().st_size / 1e6
        print(
            f"hermes_agent_import_{size}: {options.messages / first:,.0f} msgs/s  "
            f"({options.messages:,} messages, store {megabytes:.0f} MB; {first:.1f} s wall, "
            "process start included)"
        )
        again = hermes(home, "sessions", "import", "--from", "hermes-agent", str(store))
        print(f"hermes_agent_reimport_unchanged_{size}: {again:.2f} s  (nothing written)")
        grown_copy = Path(folder) / "grown.db"
        shutil.copyfile(store, grown_copy)
        hermes(home, "sessions", "import", "--from", "hermes-agent", str(grown_copy))
        extra = max(1, options.messages // 100)
        grow(grown_copy, extra)
        grown = hermes(home, "sessions", "import", "--from", "hermes-agent", str(grown_copy))
        print(f"hermes_agent_reimport_grown_{size}: {grown:.2f} s  (+{extra:,} messages appended)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
