"""Runs the figures and prints one line per figure: ``name: value unit  (target …)``.

Lines starting with ``#`` are context (what was done, how long the untimed preparation took).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.corpus import CJK_SHORT_TERM, CJK_TERM, MESSAGES_PER_SESSION
from bench.corpusfile import CorpusFile, CorpusTruth, generator_hash
from bench.exporting import ensure_rss_store, run_memory, run_throughput, scratch_folder
from bench.footprint import measure
from bench.importing import FULL as IMPORT_FULL
from bench.importing import MB, ensure_tree, measure_bulk, measure_rescan, single_file, warm_up
from bench.importing import QUICK as IMPORT_QUICK
from bench.ingest import build_store_untimed, corpus_messages, fresh_home, run_ingest
from bench.insights import run_insights_bench
from bench.latency import live_messages, run_latency
from bench.lifecycle import run_lifecycle
from bench.search import bounds_note, run_search_bench, summary
from bench.startup import CommandFailed, run_startup
from bench.turns import run_turns
from hermes_core.store.store import STATE_DB_NAME, SessionStore

DEFAULT_WORKDIR = Path(__file__).resolve().parent / ".corpus"
FULL_SIZES = (100_000, 1_000_000)
QUICK_SIZES = (10_000, 20_000)
FIGURES = ("a", "b", "c", "d", "e", "i", "n", "s", "r", "t", "u", "x", "g", "h", "p", "q", "k", "m", "w")
STANDALONE_FIGURES = frozenset({"i", "r", "g", "h", "k"})
"""Figures that need neither the session corpus nor a store."""
TRIGGER_CONTEXT_MAX = 100_000
"""The trigger-based loader (context only) runs at sizes up to this many messages."""
CLI_STORE_SESSIONS = 50
MARKER = "bench-complete.json"


def emit(name: str, value: str, unit: str = "", note: str = "") -> None:
    line = f"{name}: {value}"
    if unit:
        line += f" {unit}"
    if note:
        line += f"  ({note})"
    print(line, flush=True)


def context(text: str) -> None:
    print(f"# {text}", flush=True)


def size_label(messages: int) -> str:
    if messages % 1_000_000 == 0:
        return f"{messages // 1_000_000}M"
    if messages % 1_000 == 0:
        return f"{messages // 1_000}k"
    return str(messages)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Hermes sessions performance figures")
    parser.add_argument(
        "--quick", action="store_true", help="small corpora (10k, 20k messages) for a smoke run"
    )
    parser.add_argument(
        "--messages",
        help="comma-separated corpus sizes in messages (multiples of 100); default 100000,1000000",
    )
    parser.add_argument(
        "--only",
        help="comma-separated figures out of a,b,c,d,e,i,n,s,r,t,u,x,g,h,p,k,m (default all)",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=DEFAULT_WORKDIR,
        help="where corpora and stores are kept (default bench/.corpus)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--gateway-load",
        help="(g): CHATSxMESSAGES sent through the webhook (default 50x20, quick 10x10)",
    )
    parser.add_argument(
        "--crash-cycles", type=int, help="(k): kill -9 cycles of each victim (default 5, quick 2)"
    )
    parser.add_argument("--appends", type=int, help="single appends timed by (b)")
    parser.add_argument("--startup-runs", type=int, help="runs of each command timed by (c)")
    parser.add_argument("--search-repeats", type=int, help="runs of each query timed by (s)")
    parser.add_argument("--insights-repeats", type=int, help="runs of each report timed by (n)")
    parser.add_argument("--turns", type=int, help="turns timed by (t)")
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="(r): list every redaction made on the real logs and every planted secret missed",
    )
    args = parser.parse_args(argv)
    if args.messages:
        args.sizes = sorted({int(part) for part in args.messages.split(",") if part.strip()})
    else:
        args.sizes = list(QUICK_SIZES if args.quick else FULL_SIZES)
    for size in args.sizes:
        if size <= 0 or size % MESSAGES_PER_SESSION:
            parser.error(f"--messages: {size} is not a positive multiple of {MESSAGES_PER_SESSION}")
    args.figures = set(FIGURES) if not args.only else {p.strip() for p in args.only.split(",")}
    unknown = args.figures - set(FIGURES)
    if unknown:
        parser.error(f"--only: unknown figure(s) {', '.join(sorted(unknown))}")
    load = args.gateway_load or ("10x10" if args.quick else "50x20")
    try:
        chats, per_chat = (int(part) for part in load.lower().split("x"))
    except ValueError:
        parser.error(f"--gateway-load: {load!r} is not CHATSxMESSAGES (e.g. 50x20)")
    args.gateway_chats, args.gateway_messages = chats, per_chat
    args.crash_cycles = args.crash_cycles or (2 if args.quick else 5)
    args.appends = args.appends or (300 if args.quick else 2_000)
    args.startup_runs = args.startup_runs or (5 if args.quick else 15)
    args.search_repeats = args.search_repeats or (3 if args.quick else 10)
    args.insights_repeats = args.insights_repeats or (3 if args.quick else 10)
    args.turns = args.turns or (50 if args.quick else 300)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    workdir: Path = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    emit(
        "machine",
        f"nproc={os.cpu_count()} python={platform.python_version()} "
        f"sqlite={sqlite3.sqlite_version}",
        note=f"workdir {workdir}",
    )
    if "i" in args.figures:
        import_figures(workdir, args.seed, args.quick)
    if "r" in args.figures:
        redaction_figures(args.seed, args.verbose)
    gateway_on_corpus = "g" in args.figures and bool(args.messages)
    if "g" in args.figures and not gateway_on_corpus:
        gateway_figures(workdir, args.gateway_chats, args.gateway_messages)
    if "h" in args.figures:
        relay_figures(workdir, args.quick)
    if "k" in args.figures:
        crash_figures(workdir, args.crash_cycles)
    if not args.figures - STANDALONE_FIGURES and not gateway_on_corpus:
        return 0
    largest = max(args.sizes)
    started = time.perf_counter()
    corpus = CorpusFile.ensure(workdir, args.seed, largest // MESSAGES_PER_SESSION)
    context(f"corpus {corpus.path.name} ready in {time.perf_counter() - started:.1f} s (untimed)")
    for size in args.sizes:
        sessions = size // MESSAGES_PER_SESSION
        root = workdir / f"stores-seed{args.seed}-{size_label(size)}"
        truth = corpus.truth(sessions)
        if "a" in args.figures:
            ingest_figures(corpus, sessions, root, size_label(size))
        needs_store = (
            "d" in args.figures
            or "e" in args.figures
            or "x" in args.figures
            or "n" in args.figures
            or "q" in args.figures
            or (bool({"b", "s", "t", "g", "m", "w"} & args.figures) and size == largest)
        )
        if needs_store and not _store_complete(root / "store"):
            started = time.perf_counter()
            build_store_untimed(corpus, sessions, root / "store", _chunk_sessions(sessions))
            _mark_complete(root / "store")
            context(
                f"built the {size_label(size)} store in {time.perf_counter() - started:.0f} s "
                "(untimed)"
            )
        if "d" in args.figures:
            footprint_figures(root / "store" / STATE_DB_NAME, truth, size_label(size))
        if "e" in args.figures:
            lifecycle_figures(root / "store" / STATE_DB_NAME, workdir, size_label(size))
        if "b" in args.figures and size == largest:
            latency_figures(root / "store", args.seed, sessions, args.appends, size_label(size))
        if "t" in args.figures and size == largest:
            turn_figures(root / "store", args.turns, size_label(size))
        if gateway_on_corpus and size == largest:
            gateway_figures(
                workdir,
                args.gateway_chats,
                args.gateway_messages,
                base_store=root / "store" / STATE_DB_NAME,
                store_label=size_label(size),
            )
        if "s" in args.figures and size == largest:
            search_figures(
                root / "store" / STATE_DB_NAME, args.seed, args.search_repeats, size_label(size)
            )
        if "m" in args.figures and size == largest:
            mcp_figures(
                root / "store" / STATE_DB_NAME,
                workdir,
                args.seed,
                args.search_repeats,
                size_label(size),
            )
        if "w" in args.figures and size == largest:
            web_figures(
                root / "store" / STATE_DB_NAME,
                workdir,
                args.seed,
                args.search_repeats,
                size_label(size),
            )
        if "x" in args.figures:
            export_figures(root / "store", workdir, size_label(size))
        if "n" in args.figures:
            insights_figures(root / "store", args.insights_repeats, size_label(size))
        if "p" in args.figures:
            backend_figures(corpus, sessions, truth, workdir, args, size_label(size))
        if "q" in args.figures:
            team_scale_figures(root / "store" / STATE_DB_NAME, workdir, args, size_label(size))
    if "x" in args.figures:
        export_memory_figures(workdir, args.seed)
    if "c" in args.figures:
        startup_figures(corpus, workdir, args.startup_runs)
    if "u" in args.figures:
        resume_figures(corpus, workdir, args.startup_runs, args.search_repeats)
    return 0


def gateway_figures(
    workdir: Path,
    chats: int,
    messages: int,
    *,
    base_store: Path | None = None,
    store_label: str | None = None,
) -> None:
    """(g) N chats × M messages through the webhook of a real gateway process; then the same
    with a kill -9 half-way and a restart. With ``--messages`` the gateway's home starts with a
    copy of the largest corpus store (``base_store``); without it, with an empty store."""
    from bench.gateway import median, percentile, run_load

    label = f"{chats}x{messages}"
    for kill in (False, True):
        result = run_load(workdir, chats, messages, kill_midway=kill, base_store=base_store)
        name = f"gateway{'_kill9' if kill else ''}_{label}"
        if store_label is not None:
            name += f"_{store_label}"
        emit(f"{name}_acknowledged", str(result.acknowledged), "messages")
        emit(f"{name}_lost", str(result.lost), "messages", "target 0")
        emit(f"{name}_misrouted", str(result.misrouted), "messages", "target 0")
        if kill:
            emit(
                f"{name}_killed",
                "yes" if result.killed else "NO",
                note="the gateway died of SIGKILL half-way and was restarted",
            )
            emit(
                f"{name}_resent_stored_twice",
                str(result.resent_stored_twice),
                "messages",
                "unacknowledged when killed, sent again; not a loss",
            )
        emit(
            f"{name}_overhead_p50",
            f"{median(result.overhead_ms):.2f}",
            "ms",
            "routing + store writes per message, model time excluded",
        )
        emit(
            f"{name}_overhead_p99",
            f"{percentile(result.overhead_ms, 0.99):.2f}",
            "ms",
            "target ≤ 10 ms (issue: 200x50 on a 1M-message store)",
        )
        emit(
            f"{name}_overhead_cpu_p50",
            f"{median(result.overhead_cpu_ms):.2f}",
            "ms",
            f"CPU time of the same work; p99 {percentile(result.overhead_cpu_ms, 0.99):.2f} ms",
        )
        emit(
            f"{name}_routing_p99",
            f"{percentile(result.routing_ms, 0.99):.2f}",
            "ms",
            f"store writes p99 {percentile(result.store_ms, 0.99):.2f} ms",
        )
        emit(
            f"{name}_round_trip_p50",
            f"{median(result.round_trips_ms):.1f}",
            "ms",
            f"client side, stand-in model included; p99 "
            f"{percentile(result.round_trips_ms, 0.99):.1f} ms; {result.seconds:.1f} s in all",
        )


def relay_figures(workdir: Path, quick: bool) -> None:
    """(h) The same turns straight to the stand-in model and through a real gateway
    (api-server, the official SDK as the client), side by side in one run."""
    from bench.gateway import median, percentile, run_relay

    shapes = [("sequential", 1, 40), ("concurrent", 50, 4), ("crowd", 200, 5)]
    if quick:
        shapes = [("sequential", 1, 20), ("concurrent", 20, 2), ("crowd", 50, 2)]
    load = os.getloadavg()[0]
    context(f"(h) load average {load:.2f} at the start on {os.cpu_count()} cores")
    targets = {"sequential": "target ≥ 0.4", "concurrent": "target ≥ 0.5"}
    for shape in run_relay(workdir, shapes):
        label = f"gateway_relay_{shape.name}"
        emit(f"{label}_direct", f"{shape.turns / shape.direct_seconds:.0f}", "turns/s")
        emit(f"{label}_relayed", f"{shape.turns / shape.relayed_seconds:.0f}", "turns/s")
        emit(f"{label}_ratio", f"{shape.ratio:.2f}", note=targets.get(shape.name, "no target"))
        emit(
            f"{label}_turn_p50",
            f"{median(shape.relayed_ms):.1f}",
            "ms",
            f"direct {median(shape.direct_ms):.1f} ms; p99 relayed "
            f"{percentile(shape.relayed_ms, 0.99):.1f} / direct "
            f"{percentile(shape.direct_ms, 0.99):.1f} ms; {shape.failures} failed",
        )
        emit(
            f"{label}_gateway_cpu_per_turn",
            f"{shape.gateway_cpu_ms_per_turn:.2f}",
            "ms",
            "CPU time of the gateway process (all threads, titles included) per turn",
        )
        if shape.name == "sequential":
            emit(
                "gateway_relay_added_p50",
                f"{median(shape.relayed_ms) - median(shape.direct_ms):.2f}",
                "ms",
                "unloaded: one turn's p50 through the gateway minus straight to the model; "
                "target ≤ 3 ms",
            )
    context(f"(h) load average {os.getloadavg()[0]:.2f} at the end")


def crash_figures(workdir: Path, cycles: int) -> None:
    """(k) kill -9 of an import, a prune and a writer, ``cycles`` times each, beside a live
    gateway and CLI commands (see ``bench/crash_campaigns.py``)."""
    from bench.crash_campaigns import run_campaigns

    found = run_campaigns(workdir, cycles)
    context(
        f"(k) {cycles} cycle(s) of each victim beside a gateway (api-server, 2 conversations) "
        f"and {found.cli_commands} CLI commands; {found.seconds:.0f} s wall"
    )
    progress = {"import": "sessions stored", "prune": "batches done", "writer": "ACKs"}
    for name, victim in found.victims.items():
        label = f"crash_{name}"
        emit(
            f"{label}_cycles",
            str(victim.cycles),
            "cycles",
            f"{victim.killed} died of the SIGKILL mid-work; {progress[name]} when killed: "
            + ", ".join(str(n) for n in victim.at_kill)
            + (f"; {'; '.join(victim.notes[:3])}" if victim.notes else ""),
        )
        emit(f"{label}_acknowledged", str(victim.acknowledged), "writes")
        emit(f"{label}_lost", str(victim.lost), "writes", "target 0")
        emit(f"{label}_integrity_ok", f"{victim.integrity_ok}/{victim.cycles}", "cycles")
    emit("crash_gateway_acknowledged", str(found.gateway_acknowledged), "turns")
    emit(
        "crash_gateway_lost",
        str(found.gateway_lost),
        "turns",
        "target 0; the gateway itself killed at the end: "
        + ("yes" if found.gateway_killed else "NO"),
    )
    emit("crash_untouched_lost", str(found.untouched_lost), "sessions", "target 0")
    emit(
        "crash_cli_failures",
        f"{found.cli_failures}/{found.cli_commands}",
        "commands",
        "target 0"
        + (f"; e.g. {found.cli_failure_examples[0]}" if found.cli_failure_examples else ""),
    )
    emit(
        "crash_deleted_wal_seen",
        str(found.deleted_wal_seen),
        "checks",
        "target 0: a state.db file of the gateway's /proc/<pid>/fd without its name",
    )
    emit("crash_integrity_final", found.integrity_final, note="PRAGMA integrity_check at the end")


def backend_figures(
    corpus: CorpusFile,
    sessions: int,
    truth: CorpusTruth,
    workdir: Path,
    args: argparse.Namespace,
    label: str,
) -> None:
    """(p): SQLite beside PostgreSQL on the same corpus (see ``bench/backends.py``)."""
    from hermes_store_postgres.testing import ClusterUnavailable

    from bench.backends import report, run_backends

    started = time.perf_counter()
    try:
        found = run_backends(
            corpus, sessions, workdir, label, appends=args.appends, repeats=args.search_repeats
        )
    except ClusterUnavailable as error:
        context(f"(p) {label}: skipped, PostgreSQL cannot be started here: {error}")
        return
    context(f"(p) {label}: both backends in {time.perf_counter() - started:.0f} s wall")
    for name, value, unit, note in report(found, truth.messages, truth.text_bytes, label):
        emit(name, value, unit, note)


def team_scale_figures(
    store_file: Path, workdir: Path, args: argparse.Namespace, label: str
) -> None:
    """(q): restore, migrate and the CLI's wall time, SQLite beside PostgreSQL, through the
    installed ``hermes`` on a copy of the corpus store (see ``bench/team_scale.py``)."""
    from hermes_store_postgres.testing import ClusterUnavailable

    from bench.team_scale import report, run_team_scale

    started = time.perf_counter()
    copy_folder = workdir / f"team-{label}-copy"
    shutil.rmtree(copy_folder, ignore_errors=True)
    copy_folder.mkdir(parents=True)
    copy = copy_folder / STATE_DB_NAME
    with sqlite3.connect(store_file) as original, sqlite3.connect(copy) as target:
        original.backup(target)
    try:
        found = run_team_scale(
            f"sqlite:///{copy}",
            workdir,
            label,
            runs=args.startup_runs,
            repeats=args.search_repeats,
        )
    except ClusterUnavailable as error:
        context(f"(q) {label}: skipped, PostgreSQL cannot be started here: {error}")
        return
    finally:
        shutil.rmtree(copy_folder, ignore_errors=True)
    context(f"(q) {label}: both backends in {time.perf_counter() - started:.0f} s wall")
    for name, value, unit, note in report(found, label):
        emit(name, value, unit, note)


def _chunk_sessions(sessions: int) -> int:
    return max(10, sessions // 50)


def _store_complete(home: Path) -> bool:
    marker = home / MARKER
    if not marker.exists():
        return False
    return bool(json.loads(marker.read_text()).get("generator") == generator_hash())


def _mark_complete(home: Path) -> None:
    (home / MARKER).write_text(json.dumps({"generator": generator_hash()}))


def ingest_figures(corpus: CorpusFile, sessions: int, root: Path, label: str) -> None:
    messages = sessions * MESSAGES_PER_SESSION
    started = time.perf_counter()
    result = run_ingest(
        corpus,
        sessions,
        root,
        chunk_sessions=_chunk_sessions(sessions),
        with_triggers=messages <= TRIGGER_CONTEXT_MAX,
    )
    _mark_complete(root / "store")
    context(
        f"(a) {label}: {len(result.chunk_ratios)} interleaved chunks, "
        f"{time.perf_counter() - started:.0f} s wall including untimed preparation"
    )
    store_rate, plain_rate = result.rate("store"), result.rate("plain")
    emit(
        f"ingest_store_{label}",
        f"{store_rate:.0f}",
        "messages/s",
        f"{sessions} sessions × create + 1 append_messages + end, through SessionStore",
    )
    emit(
        f"ingest_plain_{label}",
        f"{plain_rate:.0f}",
        "messages/s",
        "same schema, raw SQL, FTS rows in the same transaction, 1 transaction per session",
    )
    bulk_rate = result.rate("bulk")
    emit(
        f"ingest_store_bulk_{label}",
        f"{bulk_rate:.0f}",
        "messages/s",
        f"target ≥ 20k; the store's bulk path, SessionStore.add_whole_sessions (whole sessions, "
        f"≤ 5,000 messages per transaction); {bulk_rate / plain_rate:.2f}× plain; with the "
        f"merge after ({result.bulk_merge_seconds:.0f} s): "
        f"{messages / (result.seconds['bulk'] + result.bulk_merge_seconds):.0f} messages/s",
    )
    emit(
        f"ingest_ratio_{label}",
        f"{store_rate / plain_rate:.3f}",
        "store/plain",
        f"target ≥ 0.8; median of chunk ratios {statistics.median(result.chunk_ratios):.3f}",
    )
    emit(
        f"ingest_store_merge_after_{label}",
        f"{result.merge_seconds:.0f}",
        "s",
        f"context: merging the word index after the load, as the store's background thread "
        f"does in pauses; the load and the merge together: "
        f"{messages / (result.seconds['store'] + result.merge_seconds):.0f} messages/s",
    )
    tenth = max(1, len(result.store_rates) // 10)
    first = statistics.median(result.store_rates[:tenth])
    last = statistics.median(result.store_rates[-tenth:])
    emit(
        f"ingest_store_last_tenth_{label}",
        f"{last:.0f}",
        "messages/s",
        f"context: first tenth {first:.0f} messages/s",
    )
    if "triggers" in result.seconds:
        trigger_rate = result.rate("triggers")
        emit(
            f"ingest_triggers_{label}",
            f"{trigger_rate:.0f}",
            "messages/s",
            f"context: word index kept by a trigger; plain is "
            f"{plain_rate / trigger_rate:.2f}× faster",
        )


def footprint_figures(db_path: Path, truth: CorpusTruth, label: str) -> None:
    found = measure(db_path)
    mb = 1024 * 1024
    emit(
        f"size_ratio_{label}",
        f"{found.file_bytes / truth.text_bytes:.3f}",
        "state.db/text",
        f"target ≤ 2.0; {found.file_bytes / mb:.0f} MiB for {truth.text_bytes / mb:.0f} MiB "
        f"of text in {truth.messages} messages",
    )
    fts = found.share("messages_fts", "messages_cjk")
    emit(
        f"fts_share_{label}",
        f"{fts * 100:.1f}",
        "% of state.db",
        f"word index {found.share('messages_fts') * 100:.1f} %, CJK trigram "
        f"{found.share('messages_cjk') * 100:.1f} %, messages table "
        f"{found.object_share('messages') * 100:.1f} %, "
        f"free pages {found.free_share * 100:.1f} %",
    )
    emit(
        f"cjk_4char_found_{label}",
        f"{found.cjk_term_found}/{truth.cjk_term}",
        "messages",
        f"trigram MATCH '\"{CJK_TERM}\"' in {found.cjk_term_ms:.1f} ms"
        + _beyond_head(truth.cjk_term, truth.cjk_term_indexed),
    )
    emit(
        f"cjk_2char_found_{label}",
        f"{found.cjk_short_found}/{truth.cjk_short}",
        "messages",
        f"scan of messages_cjk, text || '' LIKE '%{CJK_SHORT_TERM}%', in "
        f"{found.cjk_short_ms:.1f} ms" + _beyond_head(truth.cjk_short, truth.cjk_short_indexed),
    )
    emit(
        f"cjk_2char_like_pushed_down_{label}",
        f"{found.cjk_short_like_pushed_down}/{truth.cjk_short}",
        "messages",
        "pitfall: plain `text LIKE` on the trigram table; SQLite 3.40 finds nothing for "
        "< 3 non-ASCII characters",
    )


def _beyond_head(total: int, indexed: int) -> str:
    if total == indexed:
        return ""
    return f"; {total - indexed} of the true count lie past the indexed head of tool output"


def lifecycle_figures(db_path: Path, workdir: Path, label: str) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="lifecycle-", dir=workdir))
    found = run_lifecycle(db_path, scratch)
    mb = 1024 * 1024
    emit(
        f"prune_half_shrink_{label}",
        f"{found.shrink * 100:.1f}",
        "% smaller",
        f"target ≥ 40 %; {found.bytes_before / mb:.0f} MiB → {found.bytes_after_optimize / mb:.0f} "
        f"MiB: pruned {found.sessions_pruned} of {found.sessions_before} sessions (older half) in "
        f"{found.prune_seconds:.1f} s ({found.bytes_after_prune / mb:.0f} MiB before optimize), "
        f"optimize {found.optimize_seconds:.1f} s",
    )
    emit(
        f"prune_half_fts_share_{label}",
        f"{found.fulltext_share_after * 100:.1f}",
        "% of state.db",
        f"target ≤ 35 %, after optimize; {found.fulltext_share_before * 100:.1f} % before the prune",
    )
    emit(
        f"archive_half_reclaimed_{label}",
        f"{found.archive_reclaimed * 100:.1f}",
        "% smaller",
        "context: archiving the same half then optimize (archiving deletes nothing)",
    )


def latency_figures(home: Path, seed: int, sessions: int, appends: int, label: str) -> None:
    messages = live_messages(seed, sessions, appends)
    result = run_latency(home, messages)
    emit(
        f"append_p50_{label}",
        f"{result.percentile(0.50):.2f}",
        "ms",
        f"{appends} single-message appends, each its own transaction",
    )
    emit(f"append_p99_{label}", f"{result.percentile(0.99):.2f}", "ms", "target ≤ 5 ms")
    emit(
        f"append_cpu_p99_{label}",
        f"{result.percentile(0.99, cpu=True):.2f}",
        "ms",
        f"context: the appending thread's CPU time per append (p50 "
        f"{result.percentile(0.5, cpu=True):.2f} ms, max {max(result.cpu_ms):.1f} ms)",
    )
    emit(
        f"append_max_{label}",
        f"{result.max_ms:.1f}",
        "ms",
        f"target: no multi-second outliers; p99.9 {result.percentile(0.999):.1f} ms, "
        f"{result.over(100.0)} appends over 100 ms",
    )
    emit(
        f"delete_session_{label}",
        f"{result.delete_ms:.0f}",
        "ms",
        f"context: deleting that {appends}-message session afterwards",
    )


def _stall_totals() -> dict[str, int]:
    """Microseconds during which some task waited for the CPU, and for I/O, since boot (Linux
    pressure stall information, ``some … total``); empty where the kernel does not report it."""
    totals = {}
    for resource in ("cpu", "io"):
        try:
            first = Path(f"/proc/pressure/{resource}").read_text().splitlines()[0]
        except (OSError, IndexError):
            continue
        fields = dict(part.split("=", 1) for part in first.split()[1:])
        if "total" in fields:
            totals[resource] = int(fields["total"])
    return totals


def _stall_note(before: dict[str, int], seconds: float) -> str:
    """``; some task waited for cpu 12 %, io 3 % of the time`` over the run, or nothing."""
    after = _stall_totals()
    shares = [
        f"{resource} {100 * (after[resource] - before[resource]) / (seconds * 1e6):.0f} %"
        for resource in before
        if resource in after and seconds > 0
    ]
    return f"; some task waited for {', '.join(shares)} of the time" if shares else ""


def turn_figures(home: Path, turns: int, label: str) -> None:
    load_before = os.getloadavg()[0]
    stalls_before = _stall_totals()
    started = time.perf_counter()
    times = run_turns(home, turns)
    last, end = times.after_last_token_ms, times.after_stream_end_ms
    note = (
        f"{turns} turns through TurnEngine + openai SDK against the local stand-in; "
        f"load average {load_before:.1f} → {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        f"{_stall_note(stalls_before, time.perf_counter() - started)}"
    )
    emit(f"turn_overhead_p50_{label}", f"{times.percentile(last, 0.50):.2f}", "ms", note)
    emit(
        f"turn_overhead_p99_{label}",
        f"{times.percentile(last, 0.99):.2f}",
        "ms",
        "target ≤ 5 ms at 1M; last streamed token → assistant message + usage stored",
    )
    emit(
        f"turn_store_p99_{label}",
        f"{times.percentile(end, 0.99):.2f}",
        "ms",
        f"context: stream end → returned, p50 {times.percentile(end, 0.50):.2f} ms",
    )


def startup_figures(corpus: CorpusFile, workdir: Path, runs: int) -> None:
    home = fresh_home(workdir / "cli-home")
    with SessionStore.open(home) as store:
        for chunk in corpus.chunks(CLI_STORE_SESSIONS, CLI_STORE_SESSIONS):
            for s in chunk:
                session_id = store.create_session(
                    s.source, title=s.title, started_at=s.started_at, cwd=s.cwd, model=s.model
                ).id
                store.append_messages(session_id, corpus_messages(s))
    scratch = Path(tempfile.mkdtemp(prefix="startup-", dir=workdir))
    try:
        result = run_startup(scratch, home, runs)
    except CommandFailed as error:
        emit("startup_ratio", f"unavailable: {error}", note="target ≤ 1.25")
        return
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    emit("startup_typer_hello", f"{result.baseline_median:.0f}", "ms", f"median of {runs}")
    emit(
        "startup_sessions_list",
        f"{result.command_median:.0f}",
        "ms",
        f"median of {runs}, `hermes --home … sessions list` on a "
        f"{CLI_STORE_SESSIONS}-session store",
    )
    emit("startup_ratio", f"{result.ratio:.3f}", "sessions-list/hello", "target ≤ 1.25")


def resume_figures(corpus: CorpusFile, workdir: Path, runs: int, repeats: int) -> None:
    from bench.resume import RESUME_MESSAGES, run_resume

    if len(corpus.facts) * MESSAGES_PER_SESSION < RESUME_MESSAGES:
        emit("resume_in_process", "unavailable", note=f"needs a corpus of {RESUME_MESSAGES}")
        return
    result = run_resume(corpus, workdir, runs, max(5, repeats))
    label = size_label(result.messages)
    emit(
        f"resume_in_process_{label}",
        f"{result.median(result.in_process_ms):.0f}",
        "ms",
        f"target ≤ 300 ms; p95 {result.p95(result.in_process_ms):.0f} ms over "
        f"{len(result.in_process_ms)}: resolve -c, reopen, recap of {result.messages} messages, "
        "panel drawn, prompt built",
    )
    emit(
        f"resume_to_prompt_{label}",
        f"{result.median(result.resume_to_prompt_ms):.0f}",
        "ms",
        f"median of {len(result.resume_to_prompt_ms)}: installed `hermes -c` in a pty, spawn → "
        "prompt drawn",
    )
    emit(
        "fresh_to_prompt",
        f"{result.median(result.fresh_to_prompt_ms):.0f}",
        "ms",
        "context: `hermes chat` on an empty home, spawn → prompt",
    )
    emit(
        "startup_hello_pty",
        f"{result.median(result.hello_ms):.0f}",
        "ms",
        "typer hello-world spawn → exit in the same pty; spawn → 'hello' shown "
        f"{result.median(result.hello_output_ms):.0f} ms",
    )
    emit(
        "startup_continue_ratio",
        f"{result.startup_ratio:.3f}",
        "hermes-c/hello",
        f"target ≤ 1.25; resuming the {label}-message session; both from cached bytecode",
    )
    emit(
        "startup_continue_ratio_first_output",
        f"{result.first_output_ratio:.3f}",
        "hermes-c/hello",
        "context: the hello-world timed to its output instead of its exit",
    )


def search_figures(db_path: Path, seed: int, repeats: int, label: str) -> None:
    started = time.perf_counter()
    found = run_search_bench(db_path, seed, repeats)
    context(
        f"(s) {label}: {repeats} runs of each query, classes interleaved; "
        f"{time.perf_counter() - started:.0f} s wall including untimed preparation; "
        f"ranking: {bounds_note()}"
    )
    for query_class in found.classes:
        counts = found.document_counts.get(query_class.name, [])
        matches = (
            f"; matching messages {min(counts):,}–{max(counts):,}" if counts and max(counts) else ""
        )
        target = "context" if query_class.name == "cjk_2char" else "target p95 ≤ 25 ms"
        emit(
            f"search_{query_class.name}_p50_p95_{label}",
            summary(found.latencies[query_class.name]),
            "ms",
            f"{target}; {len(query_class.queries)} queries ({query_class.note}){matches}",
        )
        emit(
            f"search_cli_{query_class.name}_p50_p95_{label}",
            summary(found.cli_latencies[query_class.name]),
            "ms",
            f"{target}; as `hermes sessions search` asks (10 results)",
        )
        emit(
            f"search_with_tool_{query_class.name}_p50_p95_{label}",
            summary(found.tool_latencies[query_class.name]),
            "ms",
            "context: role_filter user,assistant,tool",
        )
        truth = found.truth.get(query_class.name)
        if truth is not None:
            emit(
                f"search_recall_{query_class.name}_{label}",
                f"{sum(counts):,}/{sum(truth):,}",
                "messages",
                "target: equal; matches of the word index ÷ messages whose whole text holds "
                "the words (read from messages), summed over the class's queries",
            )
    emit(
        f"search_scroll_p50_p95_{label}",
        summary(found.scroll_ms),
        "ms",
        f"target p95 ≤ 2 ms; {len(found.scroll_ms)} scroll calls (±5 around discovery anchors)",
    )
    emit(
        f"search_browse_p50_p95_{label}",
        summary(found.browse_ms),
        "ms",
        f"target p95 ≤ 20 ms; {len(found.browse_ms)} calls, 10 recent sessions",
    )
    emit(
        f"search_browse_typeahead_p50_p95_{label}",
        summary(found.typeahead_ms),
        "ms",
        f"context: `hermes sessions browse` rows per keystroke, {len(found.typeahead_ms)} "
        "keystrokes typing a title, a medium term, a CJK term and two common words",
    )
    for name, (agreeing, total, misses) in found.agreement.items():
        note = "target ≥ 90 %" if name != "common" else "context: bounded ranking"
        if misses:
            note += f"; differing: {', '.join(misses)}"
        emit(
            f"search_top3_agreement_{name}_{label}",
            f"{agreeing}/{total}",
            "queries",
            f"{note}; top-3 sessions vs full bm25 over every match",
        )
    emit(
        f"search_full_bm25_very_common_{label}",
        f"{found.full_bm25_very_common_ms:.0f}",
        "ms",
        "context: FTS5 ORDER BY rank LIMIT 20 for `the`, what discovery never does",
    )


def import_figures(workdir: Path, seed: int, quick: bool) -> None:
    sizes = IMPORT_QUICK if quick else IMPORT_FULL
    trees = {}
    for spec in (sizes.bulk, sizes.single, sizes.many):
        trees[spec.name], seconds = ensure_tree(workdir, spec, seed)
        if seconds:
            context(f"(i) generated the {spec.name} Claude Code tree in {seconds:.0f} s (untimed)")
    scratch = Path(tempfile.mkdtemp(prefix="import-", dir=workdir))
    try:
        warm_up(scratch)
        runs = [
            measure_bulk(trees[sizes.bulk.name], scratch, ["sessions", "import", "--all"])
            for _ in range(sizes.bulk_runs)
        ]
        bulk = min(runs, key=lambda run: run.run.seconds)
        label = sizes.bulk.name
        walls = ", ".join(f"{run.run.seconds:.1f}" for run in runs)
        emit(
            f"import_all_mb_per_s_{label}",
            f"{bulk.mb_per_second:.1f}",
            "MB/s",
            f"target ≥ 40 MB/s; `hermes sessions import --all` over {bulk.files} files, "
            f"{bulk.bytes / MB:.0f} MB in {bulk.run.seconds:.1f} s (fastest of {len(runs)}: "
            f"{walls} s); stored {bulk.sessions} sessions, {bulk.messages} messages",
        )
        emit(
            f"import_all_cpu_mb_per_s_{label}",
            f"{bulk.mb_per_cpu_second:.1f}",
            "MB/s",
            f"context: the same bytes over the process's CPU time ({bulk.run.cpu_seconds:.1f} s "
            "user + system), less swayed by a busy machine",
        )
        emit(
            f"import_all_peak_rss_{label}",
            f"{bulk.run.peak_rss_bytes / MB:.0f}",
            "MB",
            "context: peak RSS of that process",
        )
        tree = trees[sizes.single.name]
        single = measure_bulk(
            tree, scratch, ["sessions", "import", "--from", "claude", str(single_file(tree))]
        )
        emit(
            f"import_single_peak_rss_{sizes.single.name.removeprefix('single-')}",
            f"{single.run.peak_rss_bytes / MB:.0f}",
            "MB",
            f"target ≤ 100 MB; one {single.bytes / MB:.0f} MB file imported in "
            f"{single.run.seconds:.1f} s ({single.mb_per_second:.1f} MB/s), "
            f"{single.messages} messages",
        )
        rescan = measure_rescan(trees[sizes.many.name], scratch, sizes.rescan_runs)
        timing = rescan.timing
        emit(
            f"import_rescan_{sizes.many.name.removesuffix('-files')}",
            f"{rescan.rescan_seconds:.2f}",
            "s",
            f"target ≤ 1 s beyond start-up; unchanged `--all` over {rescan.files} files: "
            f"median {timing.command_median:.0f} ms vs `hermes --help` "
            f"{timing.baseline_median:.0f} ms ({len(timing.command_ms)} runs each, "
            f"alternating); first import {rescan.first_import_seconds:.1f} s (untimed)",
        )
    except CommandFailed as error:
        emit("import", f"unavailable: {error}", note="figure (i)")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def redaction_figures(seed: int, verbose: bool) -> None:
    from bench.redaction.measure import run_redaction_bench

    started = time.perf_counter()
    found = run_redaction_bench(seed)
    context(
        f"(r) planted corpus: {found.overall[1]} secrets in {found.corpus_bytes / 1e6:.1f} MB; "
        f"real logs: {found.fixture_files} files, {found.fixture_bytes / 1e6:.2f} MB; "
        f"{time.perf_counter() - started:.0f} s wall"
    )
    for category, (caught, planted) in found.recall.items():
        emit(f"redaction_recall_{category}", f"{caught}/{planted}", "secrets")
    caught, planted = found.overall
    emit(
        "redaction_recall",
        f"{caught / planted * 100:.2f}",
        "%",
        f"target ≥ 99 %; {caught}/{planted} planted secrets gone from the output",
    )
    if found.fixture_bytes:
        per_100k = len(found.findings) / (found.fixture_bytes / 100_000)
        rules = ", ".join(
            f"{rule} {count}"
            for rule, count in sorted(
                {
                    f.rule: sum(1 for g in found.findings if g.rule == f.rule)
                    for f in found.findings
                }.items()
            )
        )
        emit(
            "redaction_false_positives",
            f"{per_100k:.2f}",
            "per 100 kB",
            f"target ≤ 1; {len(found.findings)} redactions on the real logs"
            + (f" ({rules}; --verbose lists them)" if rules else ""),
        )
        emit(
            "redaction_throughput_real_logs",
            f"{found.fixture_mb_s:.1f}",
            "MB/s",
            "target ≥ 5; one redact_text call per JSONL line",
        )
    else:
        emit("redaction_false_positives", "unavailable: ../shared/fixtures is absent")
    emit(
        "redaction_throughput_planted",
        f"{found.corpus_mb_s:.1f}",
        "MB/s",
        "target ≥ 5; one redact_text call per planted document",
    )
    worst = min(found.hostile_mb_s, key=found.hostile_mb_s.__getitem__)
    emit(
        "redaction_throughput_hostile_min",
        f"{found.hostile_mb_s[worst]:.1f}",
        "MB/s",
        f"context: slowest of {len(found.hostile_mb_s)} hostile 100 kB inputs ({worst}); "
        + ", ".join(f"{name} {rate:.1f}" for name, rate in found.hostile_mb_s.items()),
    )
    if verbose:
        for finding in found.findings:
            context(
                f"redacted [{finding.rule}] {finding.where}: "
                f"{finding.before!r} ⟨{finding.secret_shape}⟩ {finding.after!r}"
            )
        for category, where, around in found.misses:
            context(f"missed [{category}] {where}: {around!r}")
    public_redaction_figures(verbose)


def public_redaction_figures(verbose: bool) -> None:
    from bench.redaction.public import run_public_bench

    found = run_public_bench()
    context(
        f"(r) public corpus: {found.items} secrets of {found.kinds} kinds from gitleaks', "
        f"detect-secrets' and trufflehog's test data, each planted in user text, assistant "
        f"text, tool output and tool-call arguments and exported with --redact as "
        f"{', '.join(found.formats)}; {found.controls} clean controls; "
        f"{found.seconds:.0f} s wall"
    )
    for kind, (caught, total) in found.by_kind().items():
        emit(f"redaction_public_recall_{kind}", f"{caught}/{total}", "secrets")
    caught, total = found.items_caught()
    hits, plantings = found.recall()
    emit(
        "redaction_public_recall",
        f"{caught / total * 100:.2f}",
        "%",
        f"target ≥ 99 %; {caught}/{total} secrets gone from every format and place "
        f"({hits}/{plantings} plantings)",
    )
    for name in found.formats:
        hit, all_ = found.recall(key for key in found.caught if key[1] == name)
        emit(f"redaction_public_recall_format_{name}", f"{hit}/{all_}", "plantings")
    emit(
        "redaction_public_false_positives",
        str(len({control for control, _, _ in found.false_positives})),
        f"of {found.controls} clean controls",
        "target 0; a control is counted once however many formats and places show it",
    )
    if verbose:
        for item, name, place in found.misses():
            context(f"public corpus: missed {item} in {name} ({place})")
        for control, name, place in found.false_positives:
            context(f"public corpus: false positive {control} in {name} ({place})")


def insights_figures(home: Path, repeats: int, label: str) -> None:
    found = run_insights_bench(home, repeats)
    if found.migrated_seconds is not None:
        context(
            f"(n) {label}: the cached store was migrated to the current schema in "
            f"{found.migrated_seconds:.1f} s (untimed)"
        )
    counted = f"{found.sessions:,} sessions, {found.tool_results:,} tool results"
    emit(
        f"insights_all_p50_p95_{label}",
        summary(found.all_ms),
        "ms",
        f"target ≤ 1000 ms at 1M; every session ({counted}): queries, report, terminal and "
        f"JSON rendering, {repeats} runs after a warm-up",
    )
    emit(
        f"insights_all_first_{label}",
        f"{found.first_ms:.1f}",
        "ms",
        "context: the warm-up, first run on a freshly opened store",
    )
    emit(
        f"insights_filtered_p50_p95_{label}",
        summary(found.filtered_ms),
        "ms",
        f"context: --source cli --newer-than the median last activity "
        f"({found.filtered_sessions:,} sessions)",
    )
    if found.command_ms is None:
        emit(f"insights_command_{label}", f"unavailable: {found.command_error}")
    else:
        emit(
            f"insights_command_{label}",
            f"{found.command_ms:.0f}",
            "ms",
            "context: installed `hermes insights --json` in a fresh process, start-up "
            "included, median of 3",
        )


def export_figures(home: Path, workdir: Path, label: str) -> None:
    scratch = scratch_folder(workdir)
    try:
        found = run_throughput(home, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for figure in found:
        redaction = "with --redact" if figure.format.endswith("+redact") else "no redaction"
        emit(
            f"export_mbps_{figure.format.replace('+redact', '_redacted')}_{label}",
            f"{figure.mb_per_second:.1f}",
            "MB/s",
            f"context: {figure.bytes_written / 1e6:.0f} MB in {figure.files} file(s) for "
            f"{figure.sessions} sessions in {figure.seconds:.1f} s, {redaction}, best of 2",
        )


def export_memory_figures(workdir: Path, seed: int) -> None:
    started = time.perf_counter()
    home = ensure_rss_store(workdir, seed)
    context(f"(x) the 10k-session export store is ready in {time.perf_counter() - started:.0f} s")
    scratch = scratch_folder(workdir)
    try:
        found = run_memory(home, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for figure in found:
        emit(
            f"export_rss_ratio_{figure.format}",
            f"{figure.ratio:.3f}",
            "10k/1k sessions",
            f"target ≤ 1.2; peak RSS {figure.large_kb / 1024:.0f} MiB for 10,000 sessions, "
            f"{figure.small_kb / 1024:.0f} MiB for 1,000 (fresh process each)",
        )


def web_figures(db_path: Path, workdir: Path, seed: int, repeats: int, label: str) -> None:
    """(w) ``hermes serve``: search through HTTP beside the same search in-process; the first
    paint of a 10,000-message session in Chromium."""
    from bench.search import percentile
    from bench.web_server import p50_p95, run_web

    through_http, in_process, paint, first_page, whole, whole_bytes = run_web(
        db_path, workdir, seed, repeats, 15
    )
    emit(f"web_search_p50_p95_{label}", p50_p95(through_http), "ms", "GET /api/search")
    emit(f"inprocess_web_search_p50_p95_{label}", p50_p95(in_process), "ms", "same searches")
    ratio = percentile(through_http, 0.95) / max(percentile(in_process, 0.95), 1e-9)
    emit(f"web_search_p95_ratio_{label}", f"{ratio:.2f}", "", "target <= 1.5")
    if paint:
        emit(
            f"web_first_paint_10k_p50_p95_{label}",
            p50_p95(paint),
            "ms",
            f"target <= 300 ms; first page {first_page / 1024:.0f} KiB (200 of 10,000 messages)",
        )
        emit(
            f"export_file_first_paint_10k_p50_p95_{label}",
            p50_p95(whole),
            "ms",
            f"the same session as one HTML export file, {whole_bytes / 1024:.0f} KiB",
        )
    else:
        emit(f"web_first_paint_10k_{label}", "skipped", "", "no /usr/bin/chromium")


def mcp_figures(db_path: Path, workdir: Path, seed: int, repeats: int, label: str) -> None:
    """(m) ``hermes mcp``: ``--import`` with nothing new over 1,000 logs; discovery through
    the MCP stdio client beside the in-process tool (same queries, interleaved)."""
    from bench.mcp_server import p50_p95, run_import_nochange, run_mcp_discovery
    from bench.search import percentile

    looks = run_import_nochange(workdir, 1_000, max(repeats * 3, 20))
    emit(
        "mcp_import_nochange_p50_p95_1000_logs",
        p50_p95(looks),
        "ms",
        "target p95 <= 50 ms; one look of --import claude when no log changed",
    )
    through_mcp, in_process = run_mcp_discovery(db_path, workdir, seed, repeats)
    emit(f"mcp_discovery_p50_p95_{label}", p50_p95(through_mcp), "ms", "through the stdio client")
    emit(f"inprocess_discovery_p50_p95_{label}", p50_p95(in_process), "ms", "same calls")
    ratio = percentile(through_mcp, 0.95) / max(percentile(in_process, 0.95), 1e-9)
    emit(f"mcp_discovery_p95_ratio_{label}", f"{ratio:.2f}", "", "target <= 1.5")
