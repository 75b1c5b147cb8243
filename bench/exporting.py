"""Figure (x): export — MB/s written per installed format, and peak memory vs selection size.

**Throughput** (``export_mbps_<format>_<size>``): every session of a bench store exported by
each installed exporter through the export engine (``plan_export`` + ``run_export``, the code
behind ``hermes sessions export``), redaction off, into a scratch folder; the figure is the
bytes written ÷ the wall time of ``run_export`` (best of ``repeats``). Formats are whatever the
host has installed, so new exporter plugins are measured as they land. For context, jsonl is
also run with ``--redact`` (``export_mbps_jsonl_redacted_<size>``): the cost of the K1 step.

**Memory** (``export_rss_ratio_<format>``, target ≤ 1.2): the peak RSS of a fresh process that
exports 10,000 sessions, ÷ that of one exporting 1,000 sessions of the same store. The store has
10,000 sessions of 10 messages each (the first 10 messages of corpus sessions), cached under the
workdir; the 1,000 are selected with ``--before``, the 10,000 with ``--min-messages 0``, both
through the real command line (``hermes sessions export``) running in the child process, which
reports its own peak resident set (``VmHWM``).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.corpusfile import CorpusFile
from bench.ingest import corpus_messages, fresh_home

RSS_SESSIONS = 10_000
RSS_SMALL = 1_000
RSS_MESSAGES_PER_SESSION = 10
RSS_BASE_TIME = 1_700_000_000.0
RSS_STEP = 60.0
RSS_MARKER = "export-rss-complete.json"


@dataclass(frozen=True, slots=True)
class Throughput:
    format: str
    bytes_written: int
    seconds: float
    sessions: int
    files: int

    @property
    def mb_per_second(self) -> float:
        return self.bytes_written / 1e6 / self.seconds


def _output_for(name: str, one_file_per_session: bool, folder: Path, extension: str) -> str:
    return str(folder) if one_file_per_session else str(folder / f"export.{extension}")


def _written_bytes(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def run_throughput(
    home: Path, scratch: Path, repeats: int = 2, *, redacted_formats: tuple[str, ...] = ("jsonl",)
) -> list[Throughput]:
    """Export every session of the store at ``home`` with each installed format, then (for
    context) with ``--redact`` in ``redacted_formats``; redacted runs are named ``<format>+redact``."""
    from hermes_core.exporting import ExporterTraits, ExportRequest, plan_export, run_export
    from hermes_core.plugins import PluginHost
    from hermes_core.store import SessionStore

    host = PluginHost(report=lambda _line: None)
    found: list[Throughput] = []
    with SessionStore.open(home) as store:
        installed = sorted(host.exporters().items())
        runs = [(name, exporter, False) for name, exporter in installed]
        runs += [(name, exporter, True) for name, exporter in installed if name in redacted_formats]
        for name, exporter, redact in runs:
            traits = ExporterTraits.of(exporter)
            best: Throughput | None = None
            for _ in range(repeats):
                folder = scratch / name
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir(parents=True)
                request = ExportRequest(
                    format=name,
                    output=_output_for(
                        name, traits.one_file_per_session, folder, exporter.extension
                    ),
                    filter_options={"min_messages": 0},
                    redact=redact,
                )
                plan = plan_export(store, host, request, home=home)
                started = time.perf_counter()
                report = run_export(plan, store, host)
                seconds = time.perf_counter() - started
                written, files = _written_bytes(folder)
                shutil.rmtree(folder, ignore_errors=True)
                label = f"{name}+redact" if redact else name
                measured = Throughput(label, written, seconds, report.sessions_written, files)
                if best is None or measured.seconds < best.seconds:
                    best = measured
            assert best is not None
            found.append(best)
    return found


def ensure_rss_store(workdir: Path, seed: int) -> Path:
    """The 10,000-session store of the memory figure (built once, then reused)."""
    from hermes_core.store import SessionStore

    home = workdir / f"stores-seed{seed}-export-rss" / "store"
    if (home / RSS_MARKER).exists():
        return home
    corpus = CorpusFile.ensure(workdir, seed, RSS_SESSIONS)
    fresh_home(home)
    with SessionStore.open(home) as store:
        index = 0
        for chunk in corpus.chunks(RSS_SESSIONS, 500):
            for session in chunk:
                started = RSS_BASE_TIME + index * RSS_STEP
                messages = corpus_messages(session)[:RSS_MESSAGES_PER_SESSION]
                for offset, message in enumerate(messages):
                    message.timestamp = started + offset
                created = store.create_session(
                    session.source, started_at=started, cwd=session.cwd, model=session.model
                )
                store.append_messages(created.id, messages)
                store.end_session(created.id, "done", ended_at=started + len(messages))
                index += 1
    (home / RSS_MARKER).write_text(json.dumps({"sessions": RSS_SESSIONS}))
    return home


def _child_peak_kb(home: Path, format_name: str, out: Path, selection: list[str]) -> int:
    command = [
        sys.executable, "-m", "bench.exporting", "--child", str(home), format_name, str(out),
        *selection,
    ]  # fmt: skip
    root = Path(__file__).resolve().parent.parent
    environment = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        command, capture_output=True, text=True, cwd=root, env=environment, timeout=1800
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr else "failed")
    return int(done.stdout.strip().splitlines()[-1])


@dataclass(frozen=True, slots=True)
class MemoryRatio:
    format: str
    small_kb: int
    large_kb: int

    @property
    def ratio(self) -> float:
        return self.large_kb / self.small_kb


def run_memory(home: Path, scratch: Path) -> list[MemoryRatio]:
    """Peak RSS of exporting 10k sessions ÷ 1k sessions, per installed format."""
    from hermes_core.exporting import ExporterTraits
    from hermes_core.plugins import PluginHost

    host = PluginHost(report=lambda _line: None)
    cut = str(RSS_BASE_TIME + RSS_SMALL * RSS_STEP - 1)
    found = []
    for name, exporter in sorted(host.exporters().items()):
        traits = ExporterTraits.of(exporter)
        peaks = []
        for selection in (["--before", f"@{cut}"], ["--min-messages", "0"]):
            folder = scratch / f"rss-{name}"
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            out = Path(_output_for(name, traits.one_file_per_session, folder, exporter.extension))
            peaks.append(_child_peak_kb(home, name, out, selection))
            shutil.rmtree(folder, ignore_errors=True)
        found.append(MemoryRatio(name, peaks[0], peaks[1]))
    return found


def _child(home: str, format_name: str, out: str, selection: list[str]) -> int:
    """Run one export through the command line in this process; print the peak RSS (KiB)."""
    from hermes_core.cli.app import build_app

    if selection[0] == "--before" and selection[1].startswith("@"):
        from datetime import datetime

        moment = float(selection[1][1:])
        selection = ["--before", datetime.fromtimestamp(moment).astimezone().isoformat()]
    app = build_app(None)
    try:
        app(
            ["--home", home, "sessions", "export", out, "-f", format_name, "--no-redact",
             *selection],
            standalone_mode=False,
        )  # fmt: skip
    except SystemExit as exit_:
        if exit_.code:
            raise
    print(peak_rss_kb(), flush=True)
    return 0


def peak_rss_kb() -> int:
    """This process's peak resident set (``VmHWM``, KiB).

    Not ``ru_maxrss``: Linux carries the forking parent's peak into a child across ``exec``,
    so a child started by a large parent would report the parent's size.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def scratch_folder(workdir: Path) -> Path:
    return Path(tempfile.mkdtemp(prefix="export-", dir=workdir))


if __name__ == "__main__":
    if len(sys.argv) >= 6 and sys.argv[1] == "--child":
        sys.exit(_child(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]))
    sys.exit("usage: python -m bench.exporting --child HOME FORMAT OUTPUT SELECTION…")
