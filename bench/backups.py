"""Rolling backups and salvage, measured (not asserted: DESIGN §7).

``uv run python bench/backups.py [--messages 100000] [--workdir DIR] [--seed 1]``

* ``backup_vacuum_into_seconds_*`` — one rolling backup (``backups.take_backup``: ``VACUUM
  INTO`` a temporary file, fsync, rename) of the bench store; ``backup_api_seconds_*`` — the
  backup API copying every page in one step, for comparison; ``backup_bytes_*`` /
  ``store_bytes_*``.
* ``backup_writer_p50/p99/max_ms_*`` — a writer in another process appends one message per
  transaction (as a chat or the gateway does) all along; its append latency while the backup
  runs, beside the same figures in the seconds before (``…_before``): a backup must never
  make a writer wait.
* ``salvage_<damage>`` — ``hermes sessions repair``'s salvage of the test corpus (40 sessions,
  4,000 messages, ``tests/core/damaged_stores.py``) after each kind of damage: kept of held;
  ``salvage_seconds_*`` — the salvage of the bench store cut by its last page.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
for extra in (str(_ROOT), str(_ROOT / "tests" / "core")):
    if extra not in sys.path:
        sys.path.insert(0, extra)

from bench.corpusfile import CorpusFile  # noqa: E402
from bench.figures import emit, size_label  # noqa: E402
from bench.ingest import build_store_untimed, checkpoint  # noqa: E402
from hermes_core.store import STATE_DB_NAME  # noqa: E402
from hermes_core.store.backups import BackupSettings, take_backup  # noqa: E402
from hermes_core.store.salvage import salvage  # noqa: E402

WRITER = r"""
import json, select, sys, time
from hermes_hookspecs import Message
from hermes_core.store import SessionStore
store = SessionStore.open(sys.argv[1])
session = store.create_session("cli", title="bench writer")
print("READY", flush=True)
samples = []
number = 0
while not select.select([sys.stdin], [], [], 0)[0]:
    text = f"message {number} " + "of a chat that goes on while a backup is taken " * 8
    started = time.time()
    store.append_message(session.id, Message(role="user", content=text))
    samples.append((started, time.time() - started))
    number += 1
    time.sleep(0.002)
store.delete_session(session.id)
store.close()
print(json.dumps(samples), flush=True)
"""


def _percentiles(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)

    def at(fraction: float) -> float:
        return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]

    return at(0.5) * 1000, at(0.99) * 1000, ordered[-1] * 1000


def backup_figures(home: Path, label: str) -> None:
    """One rolling backup while a writer in another process appends all along."""
    store = home / STATE_DB_NAME
    emit(f"store_bytes_{label}", f"{store.stat().st_size:,}", "B")
    folder = Path(tempfile.mkdtemp(prefix="hermes-bench-backups-"))
    settings = BackupSettings(folder=folder, keep=100)
    try:
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert writer.stdout is not None and writer.stdin is not None
        assert writer.stdout.readline().strip() == "READY"
        warm = time.time() + 1.0
        time.sleep(4.0)
        started = time.time()
        backup = take_backup(store, settings, only_if_due=False)
        finished = time.time()
        time.sleep(1.0)
        writer.stdin.write("STOP\n")
        writer.stdin.flush()
        samples = json.loads(writer.stdout.readline())
        writer.wait(60)
        emit(
            f"backup_vacuum_into_seconds_{label}",
            f"{finished - started:.2f}",
            "s",
            "VACUUM INTO a temporary file, fsync, rename; a writer appending all along",
        )
        emit(f"backup_bytes_{label}", f"{backup.path.stat().st_size:,}", "B", "compact copy")
        copy = folder / "backup-api.db"
        source = sqlite3.connect(store)
        destination = sqlite3.connect(copy)
        api_started = time.perf_counter()
        source.backup(destination, pages=-1)
        api_seconds = time.perf_counter() - api_started
        source.close()
        destination.close()
        emit(f"backup_api_seconds_{label}", f"{api_seconds:.2f}", "s", "every page in one step")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    before = [d for t, d in samples if warm < t and t + d < started]
    during = [d for t, d in samples if t < finished and t + d > started]
    for name, window in (("before", before), ("during", during)):
        if not window:
            emit(f"backup_writer_{name}_{label}", "no appends in the window")
            continue
        p50, p99, most = _percentiles(window)
        emit(
            f"backup_writer_p50_p99_max_ms_{name}_{label}",
            f"{p50:.2f} / {p99:.2f} / {most:.2f}",
            "ms",
            f"{len(window)} appends of one message each",
        )


def salvage_figures(workdir: Path) -> None:
    from damaged_stores import DAMAGES, build_corpus

    corpus = workdir / "salvage-corpus"
    if not (corpus / STATE_DB_NAME).exists():
        corpus.mkdir(parents=True, exist_ok=True)
        build_corpus(corpus, sessions=40, per_session=100)
    for damage, apply in DAMAGES.items():
        scratch = Path(tempfile.mkdtemp(prefix="hermes-bench-salvage-"))
        try:
            damaged = scratch / "damaged.db"
            shutil.copyfile(corpus / STATE_DB_NAME, damaged)
            apply(damaged)
            started = time.perf_counter()
            report, _trace = salvage(damaged, scratch / "salvaged.db")
            seconds = time.perf_counter() - started
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        emit(
            f"salvage_{damage.replace(' ', '_')}",
            f"{report.sessions_kept} of {report.sessions_held} sessions, "
            f"{report.messages_kept:,} of {report.messages_held} messages",
            "",
            f"{seconds:.2f} s; {report.sessions_rebuilt} sessions rebuilt from indexes",
        )


def salvage_speed(home: Path, label: str) -> None:
    from damaged_stores import DAMAGES

    scratch = Path(tempfile.mkdtemp(prefix="hermes-bench-salvage-"))
    try:
        damaged = scratch / "damaged.db"
        shutil.copyfile(home / STATE_DB_NAME, damaged)
        DAMAGES["last page cut"](damaged)
        started = time.perf_counter()
        report, _trace = salvage(damaged, scratch / "salvaged.db")
        seconds = time.perf_counter() - started
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    emit(
        f"salvage_seconds_{label}",
        f"{seconds:.1f}",
        "s",
        f"last page cut: kept {report.messages_kept:,} of {report.messages_held} messages",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--workdir", type=Path, default=_ROOT / "bench" / ".corpus")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    sessions = args.messages // 100
    label = size_label(args.messages)
    import os
    import platform

    emit(
        "machine",
        f"nproc={os.cpu_count()} python={platform.python_version()} sqlite={sqlite3.sqlite_version}",
    )
    home = args.workdir / f"backups-seed{args.seed}-{sessions}"
    if not (home / STATE_DB_NAME).exists():
        corpus = CorpusFile.ensure(args.workdir, args.seed, sessions)
        build_store_untimed(corpus, sessions, home, chunk_sessions=max(1, sessions // 50))
        checkpoint(home / STATE_DB_NAME)
    backup_figures(home, label)
    salvage_figures(args.workdir)
    salvage_speed(home, label)
    return 0


if __name__ == "__main__":
    sys.exit(main())
