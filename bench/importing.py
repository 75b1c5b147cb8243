"""Figure (i): importing Claude Code logs — throughput, peak memory, the unchanged re-scan.

Three generated Claude Code trees (``projects/<folder>/<uuid>.jsonl``, the records a real
session writes: prompts, one-block-per-line assistant records sharing ``message.id``,
``tool_use`` and ``tool_result`` records with ``toolUseResult``, usage on every assistant
line) are kept in the workdir and reused while :data:`GENERATOR_VERSION` is unchanged:

- a **bulk** tree (500 MB in about 2,500 files, log-normal sizes so some are tens of MB):
  ``hermes sessions import --all`` over it gives MB/s and the peak RSS of the process;
- a **single** file of 200 MB: ``hermes sessions import --from claude FILE``, peak RSS;
- a **many-files** tree of 10,000 small sessions, imported once (untimed), then
  ``--all`` again with nothing changed, alternating with ``hermes --help`` (same
  environment): the re-scan cost is the difference of the medians.

Every command is the installed ``hermes`` in a fresh process, with ``HERMES_HOME`` in a
temporary store (deleted afterwards), ``CLAUDE_CONFIG_DIR`` at the tree and ``CODEX_HOME``
at an empty folder, so nothing of the machine's own logs is read. Peak RSS is the child's
``ru_maxrss`` from ``os.wait4``.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import sqlite3
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.startup import CommandFailed, StartupResult, hermes_command, time_alternating

GENERATOR_VERSION = 1
"""Bump when the generated trees change; cached trees of another version are rebuilt."""
MB = 1_000_000
UNSET = ("PYTHONDONTWRITEBYTECODE",)
"""Left out of the commands' environment: an installed ``hermes`` runs from cached bytecode,
and without it every start compiles the modules it imports (≈ 1 s on these machines)."""
MARKER = "tree-complete.json"
EPOCH = 1_767_225_600.0  # 2026-01-01T00:00:00Z


@dataclass(frozen=True, slots=True)
class TreeSpec:
    """A generated Claude Code tree: ``files`` sessions holding ``total_bytes`` in all."""

    name: str
    files: int
    total_bytes: int
    folders: int
    sigma: float
    """Spread of the log-normal file sizes (0 gives equal sizes)."""

    @property
    def cache_name(self) -> str:
        return f"import-claude-v{GENERATOR_VERSION}-{self.name}"


@dataclass(frozen=True, slots=True)
class ImportSizes:
    bulk: TreeSpec
    single: TreeSpec
    many: TreeSpec
    rescan_runs: int
    bulk_runs: int
    """Imports of the bulk tree, each into a fresh store; the fastest is the figure."""


FULL = ImportSizes(
    bulk=TreeSpec("500MB", files=2_500, total_bytes=500 * MB, folders=60, sigma=1.3),
    single=TreeSpec("single-200MB", files=1, total_bytes=200 * MB, folders=1, sigma=0.0),
    many=TreeSpec("10k-files", files=10_000, total_bytes=60 * MB, folders=200, sigma=0.6),
    rescan_runs=7,
    bulk_runs=3,
)
QUICK = ImportSizes(
    bulk=TreeSpec("50MB", files=250, total_bytes=50 * MB, folders=12, sigma=1.3),
    single=TreeSpec("single-20MB", files=1, total_bytes=20 * MB, folders=1, sigma=0.0),
    many=TreeSpec("1k-files", files=1_000, total_bytes=6 * MB, folders=20, sigma=0.6),
    rescan_runs=3,
    bulk_runs=1,
)


# -- the generated logs ---------------------------------------------------------------------

_VOCABULARY = (
    "the of and to in is that it for with on as this be are not or file test function return "
    "value error line config path import class module request response data user session "
    "build run check update fix add remove change list query index cache table column row "
    "handler parser token stream buffer offset cursor commit branch merge diff patch review"
)
_TOOLS = ("Bash", "Read", "Edit", "Grep", "Write", "Glob", "TodoWrite", "WebFetch")


class _Text:
    """Cheap pseudo-text: slices of one large block of words."""

    def __init__(self, rng: random.Random) -> None:
        vocabulary = _VOCABULARY.split()
        words = [rng.choice(vocabulary) for _ in range(400_000)]
        for index in range(0, len(words), 13):
            words[index] += "\n" if rng.random() < 0.3 else "."
        self.block = " ".join(words)
        self.rng = rng

    def __call__(self, low: int, high: int) -> str:
        length = int(math.exp(self.rng.uniform(math.log(low), math.log(high))))
        start = self.rng.randrange(0, len(self.block) - length - 1)
        return self.block[start : start + length]


class _SessionWriter:
    """Writes one Claude Code session file, record by record, until it reaches a size."""

    def __init__(self, rng: random.Random, text: _Text, cwd: str, started: float) -> None:
        self.rng = rng
        self.text = text
        self.cwd = cwd
        self.session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        self.clock = started
        self.parent: str | None = None

    def _envelope(self, kind: str, message: dict[str, object], **extra: object) -> str:
        self.clock += self.rng.uniform(0.5, 40.0)
        record_id = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        record = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": "2.1.17",
            "gitBranch": "main",
            "type": kind,
            "message": message,
            **extra,
            "uuid": record_id,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(self.clock)),
        }
        self.parent = record_id
        return json.dumps(record, ensure_ascii=False) + "\n"

    def _assistant(self, message_id: str, block: dict[str, object], output: int) -> str:
        usage = {
            "input_tokens": self.rng.randint(5, 4_000),
            "cache_creation_input_tokens": self.rng.randint(0, 20_000),
            "cache_read_input_tokens": self.rng.randint(0, 90_000),
            "output_tokens": output,
            "service_tier": "standard",
        }
        message = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [block],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        }
        return self._envelope("assistant", message, requestId=f"req_{message_id[4:]}")

    def turn(self, budget: int) -> Iterator[str]:
        """One prompt and everything the assistant does until the next, in about ``budget``
        bytes or less (tool output is most of a real log, so it takes the slack)."""
        rng, text = self.rng, self.text
        yield self._envelope("user", {"role": "user", "content": text(20, 400)})
        rounds = min(12, int(rng.expovariate(0.35)))
        largest = max(400, min(60_000, budget // max(1, 2 * rounds)))
        for _ in range(rounds):
            message_id = f"msg_{rng.getrandbits(96):024x}"
            output = rng.randint(20, 900)
            if rng.random() < 0.6:
                yield self._assistant(message_id, {"type": "text", "text": text(40, 600)}, output)
            tool_id = f"toolu_{rng.getrandbits(96):024x}"
            name = rng.choice(_TOOLS)
            call = {"type": "tool_use", "id": tool_id, "name": name, "input": _tool_input(text)}
            yield self._assistant(message_id, call, output)
            if largest == 60_000 and rng.random() < 0.03:
                result = text(60_000, 400_000)  # a whole file read, a long build log
            else:
                result = text(min(300, largest // 2), largest)
            yield self._envelope(
                "user",
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": result}],
                },
                toolUseResult={
                    "stdout": result,
                    "stderr": "",
                    "interrupted": False,
                    "isImage": False,
                },
            )
        message_id = f"msg_{rng.getrandbits(96):024x}"
        yield self._assistant(
            message_id, {"type": "text", "text": text(200, 3_000)}, rng.randint(50, 1_500)
        )


def _tool_input(text: _Text) -> dict[str, object]:
    return {"command": text(10, 120), "description": text(10, 60)}


def _file_sizes(spec: TreeSpec, rng: random.Random) -> list[int]:
    weights = [math.exp(rng.gauss(0.0, spec.sigma)) for _ in range(spec.files)]
    scale = spec.total_bytes / sum(weights)
    return [max(2_000, int(weight * scale)) for weight in weights]


def write_tree(root: Path, spec: TreeSpec, seed: int) -> None:
    """Generate ``spec`` under ``root`` (``projects/<folder>/<session>.jsonl``)."""
    rng = random.Random(f"{seed}-{spec.name}")
    text = _Text(rng)
    projects = root / "projects"
    folders = [f"-home-dev-src-project-{index:03d}" for index in range(spec.folders)]
    for index, size in enumerate(_file_sizes(spec, rng)):
        folder = folders[index % len(folders)]
        cwd = "/home/dev/src/project-" + folder.rsplit("-", 1)[1]
        started = EPOCH + rng.uniform(0, 300 * 86_400)
        writer = _SessionWriter(rng, text, cwd, started)
        directory = projects / folder
        directory.mkdir(parents=True, exist_ok=True)
        written = 0
        with (directory / f"{writer.session_id}.jsonl").open("w", encoding="utf-8") as handle:
            while written < size:
                for line in writer.turn(size - written):
                    handle.write(line)
                    written += len(line)


def ensure_tree(workdir: Path, spec: TreeSpec, seed: int) -> tuple[Path, float]:
    """The cached tree for ``spec`` (generated when missing); returns it and the seconds spent."""
    root = workdir / f"{spec.cache_name}-seed{seed}"
    marker = root / MARKER
    if marker.exists():
        return root, 0.0
    started = time.perf_counter()
    if root.exists():
        shutil.rmtree(root)
    write_tree(root, spec, seed)
    marker.write_text(json.dumps({"version": GENERATOR_VERSION, "spec": spec.name}))
    return root, time.perf_counter() - started


def tree_bytes(root: Path) -> tuple[int, int]:
    """``(files, bytes)`` of the session logs under ``root``."""
    files = [path for path in (root / "projects").rglob("*.jsonl") if path.is_file()]
    return len(files), sum(path.stat().st_size for path in files)


# -- running hermes -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Measured:
    seconds: float
    cpu_seconds: float
    """User + system CPU time of the process: less swayed by a busy machine than wall time."""
    peak_rss_bytes: int
    output: str


def hermes_env(store: Path, claude_root: Path, scratch: Path) -> dict[str, str]:
    empty_codex = scratch / "empty-codex"
    empty_codex.mkdir(exist_ok=True)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("HERMES_", "CLAUDE_")) and key not in UNSET
    }
    env.update(
        HERMES_HOME=str(store),
        HOME=str(scratch / "home"),
        CLAUDE_CONFIG_DIR=str(claude_root),
        CODEX_HOME=str(empty_codex),
        COLUMNS="120",
    )
    return env


def run_measured(args: Sequence[str], env: dict[str, str], scratch: Path) -> Measured:
    """Run ``hermes ARGS``; its wall time and its own peak RSS (``wait4``)."""
    output_path = scratch / "output.txt"
    with output_path.open("wb") as output:
        started = time.perf_counter()
        process = subprocess.Popen(
            [*hermes_command(), *args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    text = output_path.read_text(errors="replace")
    if process.returncode != 0:
        last = text.strip().splitlines()[-1:] or ["no output"]
        raise CommandFailed(f"`hermes {' '.join(args)}` exited {process.returncode}: {last[0]}")
    return Measured(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, text)


def stored_counts(store: Path) -> tuple[int, int]:
    """``(sessions, messages)`` in the store at ``store``."""
    with sqlite3.connect(f"file:{store / 'state.db'}?mode=ro", uri=True) as db:
        sessions = db.execute("SELECT count(*) FROM sessions").fetchone()[0]
        messages = db.execute("SELECT count(*) FROM messages").fetchone()[0]
    return int(sessions), int(messages)


def _with_env(env: dict[str, str], args: Sequence[str]) -> list[str]:
    """``env K=V … hermes ARGS``: the same environment for both sides of a comparison."""
    assignments = [
        f"{key}={env[key]}" for key in ("HERMES_HOME", "HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME")
    ]
    unset = [part for key in UNSET for part in ("-u", key)]
    return ["env", *unset, *assignments, *hermes_command(), *args]


# -- the figures ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BulkResult:
    files: int
    bytes: int
    run: Measured
    sessions: int
    messages: int

    @property
    def mb_per_second(self) -> float:
        return self.bytes / MB / self.run.seconds

    @property
    def mb_per_cpu_second(self) -> float:
        return self.bytes / MB / self.run.cpu_seconds


@dataclass(frozen=True, slots=True)
class RescanResult:
    files: int
    first_import_seconds: float
    timing: StartupResult

    @property
    def rescan_seconds(self) -> float:
        return (self.timing.command_median - self.timing.baseline_median) / 1000.0


def warm_up(scratch: Path) -> None:
    """Run the import command once on nothing, so every module it loads has its bytecode
    cached before anything is timed."""
    empty = scratch / "empty-claude"
    (empty / "projects").mkdir(parents=True, exist_ok=True)
    store = Path(tempfile.mkdtemp(prefix="store-", dir=scratch))
    try:
        run_measured(["sessions", "import", "--all"], hermes_env(store, empty, scratch), scratch)
    finally:
        shutil.rmtree(store, ignore_errors=True)


def measure_bulk(tree: Path, scratch: Path, args: Sequence[str]) -> BulkResult:
    """Import ``tree`` into a fresh store with ``hermes ARGS``."""
    store = Path(tempfile.mkdtemp(prefix="store-", dir=scratch))
    try:
        env = hermes_env(store, tree, scratch)
        files, size = tree_bytes(tree)
        run = run_measured(args, env, scratch)
        sessions, messages = stored_counts(store)
        return BulkResult(files, size, run, sessions, messages)
    finally:
        shutil.rmtree(store, ignore_errors=True)


def measure_rescan(tree: Path, scratch: Path, runs: int) -> RescanResult:
    """Import ``tree`` once (untimed), then time the unchanged ``--all`` against start-up."""
    store = Path(tempfile.mkdtemp(prefix="store-", dir=scratch))
    try:
        env = hermes_env(store, tree, scratch)
        files, _ = tree_bytes(tree)
        first = run_measured(["sessions", "import", "--all"], env, scratch)
        timing = time_alternating(
            _with_env(env, ["--help"]), _with_env(env, ["sessions", "import", "--all"]), runs
        )
        return RescanResult(files, first.seconds, timing)
    finally:
        shutil.rmtree(store, ignore_errors=True)


def single_file(tree: Path) -> Path:
    [path] = list((tree / "projects").rglob("*.jsonl"))
    return path
