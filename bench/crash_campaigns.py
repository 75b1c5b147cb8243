"""(k) kill -9 campaigns beside a live gateway and CLI commands.

The crash tests of the suite (``tests/core/test_store_crash.py``,
``tests/importing/test_import_crash.py``, ``tests/lifecycle/test_lifecycle_processes.py``) kill
one writer on a store nobody else uses. Here the same victims die while the store is busy the
way users keep it busy: a real ``hermes gateway run`` (api-server, the tests' stand-in model)
answers two conversations without pause, and the installed ``hermes`` runs list, show, rename,
search, stats, pin, gateway status, export, optimize and ``repair --check-only`` one after
the other beside it (``tests/beside_processes.py``). Each cycle starts one victim and kills it
with SIGKILL at a varied point:

- **import**: ``hermes sessions import --from jsonl BACKUP`` of a fresh backup (sessions that
  are not in the store yet), killed once 5-85 % of its sessions are in; then the same import
  again, unkilled, whose sessions are its acknowledged writes (a backup import reports at the
  end);
- **prune**: the library calls ``hermes sessions prune`` makes, in batches of 10 sessions, on
  fresh ended ``cron`` sessions, killed after 1-4 reported batches and a varied delay; the
  sessions of the reported batches are its acknowledged deletions;
- **writer**: a process appending one message per transaction (``SessionStore.append_message``)
  and printing an ACK after each, killed after 20-80 ACKs and a varied delay.

After every cycle the file must pass ``PRAGMA integrity_check``. At the end the gateway is
killed too. Lost writes (must be 0): an acknowledged message, turn or imported session that is
not in the store (or an imported session with fewer messages than its backup), an acknowledged
deletion that came back, and any session outside the victims' reach that went missing. Also
counted: the CLI commands run and failed, and how often a ``state.db`` file of the gateway's
``/proc/<pid>/fd`` had lost its name.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parent.parent / "tests")
API_KEY = "bench-crash-key"
ANSWER = "campaign answer"
PRUNE_BATCH = 10
PRUNE_SESSIONS = 60
IMPORT_SESSIONS = 400
IMPORT_MESSAGES = 40

WRITER = """
import sys
from hermes_hookspecs import Message
from hermes_core.store import SessionStore

store = SessionStore(sys.argv[1])
session = store.create_session("cli")
print("SESSION", session.id, flush=True)
number = 0
while True:  # until killed
    number += 1
    store.append_message(session.id, Message(role="user", content=f"writer {number}"))
    print("ACK", number, flush=True)
"""

PRUNER = f"""
import sys
from hermes_core.lifecycle import prune
from hermes_core.lifecycle.lock import acquire
from hermes_core.selection.filters import SessionFilter
from hermes_core.store import SessionStore

prune.BATCH_SESSIONS = {PRUNE_BATCH}
store = SessionStore(sys.argv[1])
plan = prune.plan_prune(store.lifecycle, SessionFilter(source="cron", ended_only=True))
print("PLANNED", " ".join(c.id for c in plan.candidates), flush=True)  # in batch order
lock = acquire(store.lifecycle, "prune")
prune.run_prune(store.lifecycle, plan, lock, on_batch=lambda p: print("BATCH", flush=True))
lock.release()
print("DONE", flush=True)
"""


@dataclass
class Victim:
    """What the cycles of one kind of victim did."""

    cycles: int = 0
    killed: int = 0
    """Cycles whose process died of the SIGKILL (not finished before it)."""
    acknowledged: int = 0
    lost: int = 0
    integrity_ok: int = 0
    at_kill: list[int] = field(default_factory=list)
    """Per cycle, how far it had got when killed (sessions stored, batches, ACKs)."""
    notes: list[str] = field(default_factory=list)


@dataclass
class CampaignResult:
    victims: dict[str, Victim]
    gateway_acknowledged: int = 0
    gateway_lost: int = 0
    gateway_killed: bool = False
    cli_commands: int = 0
    cli_failures: int = 0
    cli_failure_examples: list[str] = field(default_factory=list)
    deleted_wal_seen: int = 0
    untouched_lost: int = 0
    integrity_final: str = ""
    seconds: float = 0.0


def _python(code: str, *args: str) -> subprocess.Popen[str]:
    """A victim process; its stderr is appended to ``victims.log`` beside the home."""
    log = Path(args[0]).parent.parent / "victims.log"
    with log.open("ab") as errors:
        return subprocess.Popen(
            [sys.executable, "-c", code, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )


def _kill(process: subprocess.Popen[str]) -> bool:
    """SIGKILL; True when the process died of it (it had not finished by itself)."""
    finished = process.poll() is not None
    process.kill()
    code = process.wait(30)
    return not finished and code == -signal.SIGKILL


def _integrity(db: Path) -> str:
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        connection.close()


class _Conversation(threading.Thread):
    """Sends turns to the api-server until told to stop; remembers the acknowledged ones."""

    def __init__(self, name: str, base_url: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.name_ = name
        self.url = urllib.parse.urlsplit(base_url)
        self.stop = stop
        self.acknowledged: list[tuple[str, str]] = []  # (session id, question)
        self.errors = 0

    def run(self) -> None:
        number = 0
        while not self.stop.is_set():
            number += 1
            question = f"campaign {self.name_} turn {number}"
            body = json.dumps(
                {"model": "hermes", "messages": [{"role": "user", "content": question}]}
            )
            connection = http.client.HTTPConnection(self.url.hostname, self.url.port, timeout=60)
            try:
                connection.request(
                    "POST",
                    f"{self.url.path}/chat/completions",
                    body=body,
                    headers={
                        "Content-Type": "application/json",
                        "Authorization": f"Bearer {API_KEY}",
                        "X-Hermes-Conversation": self.name_,
                    },
                )
                response = connection.getresponse()
                payload = response.read()
            except (OSError, http.client.HTTPException):
                self.errors += 1
                return  # the gateway is gone (killed at the end)
            finally:
                connection.close()
            if response.status != 200:
                self.errors += 1
                continue
            answer = json.loads(payload)["choices"][0]["message"]["content"]
            session_id = response.getheader("X-Hermes-Session") or ""
            if answer == ANSWER:
                self.acknowledged.append((session_id, question))


def _start_gateway(home: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    from installed_hermes import hermes_command

    log = home / "gateway.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [hermes_command(), "gateway", "run"], env=env, stdout=subprocess.DEVNULL, stderr=out
        )
    status = home / "gateway" / "status.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the gateway exited: {log.read_text()}")
        try:
            data = json.loads(status.read_text())
        except (FileNotFoundError, ValueError):
            data = {}
        if data.get("pid") == process.pid:
            for platform in data["platforms"]:
                if platform.get("address"):
                    return process, str(platform["address"])
        time.sleep(0.05)  # polling a file the gateway writes once it listens
    process.kill()
    raise SystemExit("the gateway did not start")


def _make_backups(workdir: Path, env: dict[str, str], count: int) -> list[Path]:
    """``count`` jsonl backups of IMPORT_SESSIONS sessions each, every one with ids of its own
    (built in a scratch store, exported with the installed ``hermes``; untimed)."""
    from hermes_hookspecs import Message
    from installed_hermes import hermes_command

    from hermes_core.store import SessionStore

    backups = []
    for index in range(count):
        scratch = workdir / f"backup-home-{index}"
        shutil.rmtree(scratch, ignore_errors=True)
        with SessionStore.open(scratch) as store:
            for number in range(IMPORT_SESSIONS):
                session = store.create_session("cli", title=f"backup {index} session {number}")
                store.append_messages(
                    session.id,
                    [
                        Message(
                            role="user" if i % 2 == 0 else "assistant",
                            content=f"backup {index} session {number} message {i} " * 8,
                        )
                        for i in range(IMPORT_MESSAGES)
                    ],
                )
                store.end_session(session.id, "user_exit")
        target = workdir / f"backup-{index}.jsonl"
        subprocess.run(
            [hermes_command(), "--home", str(scratch), "sessions", "export", str(target)],
            env=env,
            check=True,
            capture_output=True,
        )
        shutil.rmtree(scratch, ignore_errors=True)
        backups.append(target)
    return backups


def _backup_sessions(backup: Path) -> dict[str, int]:
    """Session id → message count, from a jsonl backup."""
    found = {}
    for line in backup.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        found[data["session"]["id"]] = len(data["messages"])
    return found


def run_campaigns(workdir: Path, cycles: int) -> CampaignResult:
    """``cycles`` cycles of each victim (see the module docstring) in a fresh home."""
    if _TESTS not in sys.path:
        sys.path.insert(0, _TESTS)
    from beside_processes import CliBeside, deleted_store_files
    from standins.openai_server import OpenAIStandIn, Reply

    from hermes_core.store import SessionStore

    root = workdir / "crash-campaigns"
    shutil.rmtree(root, ignore_errors=True)
    home = root / "home"
    home.mkdir(parents=True)
    db = home / "state.db"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HERMES_")},
        "HERMES_HOME": str(home),
        "OPENAI_API_KEY": "sk-bench",
        "PYTHONUNBUFFERED": "1",
    }
    backups = _make_backups(root, env, cycles)
    result = CampaignResult(victims={name: Victim() for name in ("import", "prune", "writer")})
    # Sessions no victim may touch: created first, checked last.
    with SessionStore.open(home) as store:
        untouched = []
        for number in range(20):
            session = store.create_session("cli", title=f"untouched {number}")
            store.append_message(session.id, _message(f"untouched {number}"))
            store.end_session(session.id, "user_exit")
            untouched.append(session.id)
    started = time.perf_counter()
    with OpenAIStandIn() as standin:
        standin.add(Reply(text=ANSWER, times=None))
        config = {
            "model": {"provider": "openai", "base_url": standin.base_url, "name": "standin"},
            "gateway": {
                "workers": 3,
                "platforms": {"api-server": {"api_key": API_KEY, "port": 0}},
            },
        }
        (home / "config.yaml").write_text(json.dumps(config))  # JSON is YAML
        gateway, base_url = _start_gateway(home, env)
        stop = threading.Event()
        conversations = [_Conversation(f"chat{i}", base_url, stop) for i in range(2)]
        for conversation in conversations:
            conversation.start()
        while not all(c.acknowledged for c in conversations):
            time.sleep(0.05)  # until each conversation has its session
        cli = CliBeside(
            home=home,
            watched=gateway.pid,
            sessions=lambda: sorted({c.acknowledged[0][0] for c in conversations}),
            env=env,
            scratch=root,
        )
        cli_stop = threading.Event()

        def commands() -> None:
            while not cli_stop.is_set():
                try:
                    cli.step()
                except Exception as error:
                    result.cli_failures += 1
                    if len(result.cli_failure_examples) < 3:
                        result.cli_failure_examples.append(str(error)[:300])

        cli_thread = threading.Thread(target=commands, daemon=True)
        cli_thread.start()
        try:
            for cycle in range(cycles):
                _import_cycle(result.victims["import"], cycle, backups[cycle], home, env, db)
                _prune_cycle(result.victims["prune"], cycle, home, db)
                _writer_cycle(result.victims["writer"], cycle, home, db)
        finally:
            cli_stop.set()
            cli_thread.join(600)
            result.deleted_wal_seen = len(cli.deleted) + (
                1 if deleted_store_files(gateway.pid) else 0
            )
            result.gateway_killed = _kill(gateway)
            stop.set()
            for conversation in conversations:
                conversation.join(60)
    result.seconds = time.perf_counter() - started
    result.cli_commands = sum(cli.ran.values())
    result.integrity_final = _integrity(db)
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        stored = set(connection.execute("SELECT session_id, content FROM messages"))
        for conversation in conversations:
            result.gateway_acknowledged += len(conversation.acknowledged)
            result.gateway_lost += sum(
                1 for turn in conversation.acknowledged if turn not in stored
            )
        present = {row[0] for row in connection.execute("SELECT id FROM sessions")}
        result.untouched_lost = sum(1 for session_id in untouched if session_id not in present)
        for session_id, title in cli.titles.items():
            row = connection.execute(
                "SELECT title FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row != (title,):
                result.cli_failures += 1
                result.cli_failure_examples.append(f"{session_id}: title {row}, not {title!r}")
    finally:
        connection.close()
    return result


def _message(text: str) -> object:
    from hermes_hookspecs import Message

    return Message(role="user", content=text)


def _import_cycle(
    victim: Victim, cycle: int, backup: Path, home: Path, env: dict[str, str], db: Path
) -> None:
    from installed_hermes import hermes_command

    expected = _backup_sessions(backup)
    command = [hermes_command(), "--home", str(home), "sessions", "import", "--from", "jsonl"]
    with (home.parent / "victims.log").open("ab") as errors:
        process = subprocess.Popen(
            [*command, str(backup)], env=env, stdout=subprocess.DEVNULL, stderr=errors
        )
    # Killed once a varied share of the backup is in: from its first session to most of it.
    target = max(1, IMPORT_SESSIONS * (1 + 4 * (cycle % 5)) // 20)
    deadline = time.monotonic() + 300
    while process.poll() is None and time.monotonic() < deadline:
        if _present(db, expected) >= target:
            break
        time.sleep(0.01)  # polling the store the import writes to
    victim.cycles += 1
    victim.killed += _kill(process)
    if _integrity(db) == "ok":
        victim.integrity_ok += 1
    victim.at_kill.append(_present(db, expected))
    again = subprocess.run([*command, str(backup)], env=env, capture_output=True, text=True)
    if again.returncode != 0:
        victim.notes.append(f"re-import failed: {again.stderr.strip()[:200]}")
        return
    victim.acknowledged += len(expected)
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        counts = dict(
            connection.execute(
                "SELECT session_id, count(*) FROM messages WHERE session_id IN "
                f"({','.join('?' * len(expected))}) GROUP BY session_id",
                list(expected),
            )
        )
    finally:
        connection.close()
    victim.lost += sum(1 for sid, n in expected.items() if counts.get(sid, 0) != n)


def _present(db: Path, sessions: dict[str, int]) -> int:
    """How many of ``sessions`` the store holds."""
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(
            connection.execute(
                f"SELECT count(*) FROM sessions WHERE id IN ({','.join('?' * len(sessions))})",
                list(sessions),
            ).fetchone()[0]
        )
    finally:
        connection.close()


def _prune_cycle(victim: Victim, cycle: int, home: Path, db: Path) -> None:
    from hermes_core.store import SessionStore

    with SessionStore.open(home) as store:
        for number in range(PRUNE_SESSIONS):
            session = store.create_session("cron", title=f"prunable {cycle} {number}")
            store.append_messages(
                session.id, [_message(f"prunable {cycle} {number} {i}") for i in range(8)]
            )
            store.end_session(session.id, "cron_complete")
    process = _python(PRUNER, str(db))
    assert process.stdout is not None
    planned = process.stdout.readline().split()[1:]
    batches_wanted = 1 + cycle % 4
    batches = 0
    while batches < batches_wanted:
        line = process.stdout.readline()
        if not line.startswith("BATCH"):
            break
        batches += 1
    time.sleep(0.002 * (cycle % 4))  # not synchronisation: varies where the kill lands
    victim.cycles += 1
    victim.killed += _kill(process)
    rest = process.stdout.read()
    batches += rest.count("BATCH")
    victim.at_kill.append(batches)
    # run_prune deletes the planned sessions in plan order, a batch per line printed.
    acknowledged = planned[: batches * PRUNE_BATCH]
    victim.acknowledged += len(acknowledged)
    if _integrity(db) == "ok":
        victim.integrity_ok += 1
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        present = {row[0] for row in connection.execute("SELECT id FROM sessions")}
        partial = connection.execute(
            "SELECT count(*) FROM sessions s WHERE s.source = 'cron' AND s.message_count != "
            "(SELECT count(*) FROM messages m WHERE m.session_id = s.id)"
        ).fetchone()[0]
    finally:
        connection.close()
    victim.lost += sum(1 for session_id in acknowledged if session_id in present)
    if partial:
        victim.lost += partial
        victim.notes.append(f"{partial} half-pruned session(s)")
    # Leave no prunable sessions for the next cycle's plan (an unkilled prune finishes them).
    finish = _python(PRUNER, str(db))
    finish.wait(120)


def _writer_cycle(victim: Victim, cycle: int, home: Path, db: Path) -> None:
    process = _python(WRITER, str(db))
    assert process.stdout is not None
    first = process.stdout.readline().split()
    session_id = first[1]
    wanted = 20 + 15 * (cycle % 5)
    acknowledged = 0
    while acknowledged < wanted:
        line = process.stdout.readline()
        if not line.startswith("ACK"):
            break
        acknowledged += 1
    time.sleep(0.001 * (cycle % 7))  # not synchronisation: varies where the kill lands
    victim.cycles += 1
    victim.killed += _kill(process)
    acknowledged += process.stdout.read().count("ACK")
    victim.at_kill.append(acknowledged)
    victim.acknowledged += acknowledged
    if _integrity(db) == "ok":
        victim.integrity_ok += 1
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        stored = {
            row[0]
            for row in connection.execute(
                "SELECT content FROM messages WHERE session_id = ?", (session_id,)
            )
        }
    finally:
        connection.close()
    victim.lost += sum(1 for n in range(1, acknowledged + 1) if f"writer {n}" not in stored)
