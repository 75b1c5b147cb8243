"""A throwaway PostgreSQL cluster for tests: ``initdb`` + ``pg_ctl`` into a temporary folder.

The cluster listens on 127.0.0.1 only (its unix socket stays in its own folder), runs as an
unprivileged system user when the tests run as root (PostgreSQL refuses root), and trades
durability for speed (``fsync=off``): it lives for one test session. Each test gets a database
of its own, created from a template that already holds ``pg_trgm``.

Used by the store conformance suite (entry point groups ``hermes_store_conformance`` and
``hermes_store_conformance_read_only``) and by ``tests/postgres_cluster.py``. Where the
PostgreSQL binaries are missing the tests skip with a reason, except with ``CI=true``, where
they fail.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

SEARCHED_BIN_DIRS = ("/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin",
                     "/usr/lib/postgresql/15/bin", "/usr/local/bin", "/usr/bin")  # fmt: skip
"""Where ``initdb``/``pg_ctl`` are looked for after ``PATH`` (Debian keeps them per version)."""
CLUSTER_USER = "hermes-pg"
"""The system user the cluster runs as when the tests run as root (created when missing)."""
SUPERUSER = "hermes"
TEMPLATE_DATABASE = "hermes_template"


class ClusterUnavailable(Exception):
    """PostgreSQL cannot be started here (binaries missing, ``initdb`` failing…)."""


def find_binaries() -> Path:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``; raises
    :class:`ClusterUnavailable` when there is none."""
    candidates: list[Path] = []
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    candidates.extend(Path(folder) for folder in SEARCHED_BIN_DIRS)
    for folder in candidates:
        if all((folder / name).is_file() for name in ("initdb", "pg_ctl", "postgres")):
            return folder
    raise ClusterUnavailable(
        "PostgreSQL binaries (initdb, pg_ctl, postgres) not found: install Debian's "
        "postgresql and postgresql-contrib"
    )


def _cluster_user() -> pwd.struct_passwd | None:
    """Who runs the cluster: ``None`` (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(CLUSTER_USER)
    except KeyError:
        pass
    useradd = shutil.which("useradd")
    if useradd is not None:
        completed = subprocess.run(
            [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
             CLUSTER_USER],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if completed.returncode == 0 or "exists" in completed.stderr:
            return pwd.getpwnam(CLUSTER_USER)
    try:
        return pwd.getpwnam("nobody")
    except KeyError as error:
        raise ClusterUnavailable("running as root and no unprivileged user to run PostgreSQL") from error


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Cluster:
    """A running throwaway cluster."""

    root: Path
    bin_dir: Path
    port: int
    password: str
    owner: pwd.struct_passwd | None
    options: str = ""
    """The server's command-line options (``pg_ctl start -o``)."""

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    def url(self, database: str, *, user: str = SUPERUSER, password: str | None = None) -> str:
        """A ``postgresql://`` URL of ``database`` over TCP on 127.0.0.1."""
        secret = self.password if password is None else password
        return f"postgresql://{user}:{secret}@127.0.0.1:{self.port}/{database}"

    def _run(self, *command: str) -> subprocess.CompletedProcess[str]:
        owner = self.owner
        return subprocess.run(
            list(command),
            capture_output=True,
            text=True,
            check=False,
            cwd=self.root,
            user=owner.pw_uid if owner else None,
            group=owner.pw_gid if owner else None,
            env={**os.environ, "LC_ALL": "C.UTF-8", "PGPASSWORD": self.password},
            timeout=120,
        )

    def sql(self, statement: str, *, database: str = "postgres") -> str:
        """Run one statement as the superuser through ``psql`` over the unix socket."""
        psql = self.bin_dir / "psql"
        program = str(psql) if psql.is_file() else (shutil.which("psql") or "psql")
        completed = self._run(
            program, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", str(self.root),
            "-p", str(self.port), "-U", SUPERUSER, "-d", database, "-c", statement,
        )  # fmt: skip
        if completed.returncode != 0:
            raise ClusterUnavailable(f"psql {statement!r}: {completed.stderr.strip()}")
        return completed.stdout.strip()

    def start_server(self) -> None:
        """``pg_ctl start`` with :attr:`options`, waiting until the server takes connections
        (again, after :meth:`stop_server`)."""
        started = self._run(
            str(self.bin_dir / "pg_ctl"), "start", "-D", str(self.data_dir), "-w", "-t", "60",
            "-l", str(self.root / "server.log"), "-o", self.options,
        )  # fmt: skip
        if started.returncode != 0:
            log = (self.root / "server.log").read_text(errors="replace")[-500:]
            raise ClusterUnavailable(f"pg_ctl start failed: {started.stderr.strip()} {log}")

    def stop_server(self, mode: str = "immediate") -> None:
        """``pg_ctl stop -m MODE``, the folder kept, so :meth:`start_server` brings it back.
        ``immediate``: the server goes away at once, as in a crash, its clients' connections
        dropped; ``fast``: a clean shutdown (everything written to the data files)."""
        stopped = self._run(str(self.bin_dir / "pg_ctl"), "stop", "-D", str(self.data_dir),
                            "-m", mode, "-w")  # fmt: skip
        if stopped.returncode != 0:
            raise ClusterUnavailable(f"pg_ctl stop failed: {stopped.stderr.strip()}")

    def stop(self) -> None:
        """``pg_ctl stop -m immediate`` and remove the folder."""
        if self.data_dir.exists():
            self._run(str(self.bin_dir / "pg_ctl"), "stop", "-D", str(self.data_dir),
                      "-m", "immediate", "-w")  # fmt: skip
        shutil.rmtree(self.root, ignore_errors=True)


def start_cluster(*, durable: bool = False) -> Cluster:
    """``initdb`` a new cluster in a fresh temporary folder and start it (see the module doc).

    ``durable`` keeps ``fsync`` and full-page writes on (benchmarks); tests run without them.

    The superuser ``hermes`` logs in with a random password over TCP (scram-sha-256), so
    wrong-password cases are real; the unix socket in the folder trusts it for set-up.
    """
    bin_dir = find_binaries()
    owner = _cluster_user()
    root = _new_root(owner)
    cluster = Cluster(root, bin_dir, _free_port(), secrets.token_urlsafe(12), owner)
    password_file = root / "pwfile"
    password_file.write_text(cluster.password + "\n")
    if owner is not None:
        os.chown(password_file, owner.pw_uid, owner.pw_gid)
    try:
        initialised = cluster._run(
            str(bin_dir / "initdb"), "-D", str(cluster.data_dir), "-U", SUPERUSER,
            f"--pwfile={password_file}", "--auth-local=trust", "--auth-host=scram-sha-256",
            "-E", "UTF8", "--locale=C.UTF-8", "--no-sync",
        )  # fmt: skip
        if initialised.returncode != 0:
            raise ClusterUnavailable(f"initdb failed: {initialised.stderr.strip()[-500:]}")
        cluster.options = _server_options(cluster, durable=durable)
        cluster.start_server()
        cluster.sql(f"CREATE DATABASE {TEMPLATE_DATABASE}")
        cluster.sql("CREATE EXTENSION pg_trgm", database=TEMPLATE_DATABASE)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _server_options(cluster: Cluster, *, durable: bool) -> str:
    options = (
        f"-c listen_addresses=127.0.0.1 -p {cluster.port} -k {cluster.root} "
        "-c synchronous_commit=off -c max_connections=200"
    )
    if not durable:
        options += " -c fsync=off -c full_page_writes=off"
    return options


def _new_root(owner: pwd.struct_passwd | None) -> Path:
    # Under /tmp itself: pytest's own temporary folders are private to root.
    root = Path(tempfile.mkdtemp(prefix="hermes-pg-"))
    if owner is not None:
        os.chown(root, owner.pw_uid, owner.pw_gid)
    return root


def start_standby(primary: Cluster) -> Cluster:
    """A hot standby of ``primary`` in a folder and on a port of its own: a base backup
    (``pg_basebackup -R``, so it streams from ``primary`` afterwards), started read-only as
    every standby is. It holds what ``primary`` held when it was made. Stop it with
    :meth:`Cluster.stop`."""
    root = _new_root(primary.owner)
    standby = Cluster(root, primary.bin_dir, _free_port(), primary.password, primary.owner)
    try:
        copied = standby._run(
            str(primary.bin_dir / "pg_basebackup"), "-D", str(standby.data_dir), "-R",
            "-X", "stream", "--checkpoint=fast", "--no-sync", "-h", str(primary.root),
            "-p", str(primary.port), "-U", SUPERUSER,
        )  # fmt: skip
        if copied.returncode != 0:
            raise ClusterUnavailable(f"pg_basebackup failed: {copied.stderr.strip()[-500:]}")
        standby.options = _server_options(standby, durable=False)
        standby.start_server()
    except BaseException:
        standby.stop()
        raise
    return standby


_shared: Cluster | None = None
_names = itertools.count(1)


def shared_cluster() -> Cluster:
    """The test session's cluster, started on first use (stopped by :func:`stop_shared_cluster`
    or, failing that, at interpreter exit)."""
    global _shared
    if _shared is None:
        _shared = start_cluster()
        atexit.register(stop_shared_cluster)
    return _shared


def stop_shared_cluster() -> None:
    """Stop the session's cluster if one was started."""
    global _shared
    if _shared is not None:
        cluster, _shared = _shared, None
        cluster.stop()


@contextlib.contextmanager
def fresh_database(cluster: Cluster, *, template: str = TEMPLATE_DATABASE) -> Iterator[str]:
    """A new database of ``cluster`` (from ``template``), dropped afterwards; yields its name."""
    name = f"t{os.getpid()}_{next(_names)}"
    cluster.sql(f"CREATE DATABASE {name} TEMPLATE {template}")
    try:
        yield name
    finally:
        cluster.sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def skip_or_fail(reason: str) -> NoReturn:
    """Skip the test with ``reason``; with ``CI=true`` fail it (CI must run PostgreSQL)."""
    import pytest

    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but PostgreSQL is unavailable: {reason}")
    pytest.skip(reason)


def cluster_or_skip() -> Cluster:
    """:func:`shared_cluster`, or skip (fail under CI) with the reason it cannot start."""
    try:
        return shared_cluster()
    except ClusterUnavailable as error:
        skip_or_fail(str(error))


@contextlib.contextmanager
def conformance_database(tmp_path: Path) -> Iterator[str]:
    """The conformance suite's hook (see ``tests/store_conformance/README.md``): the URL of a
    fresh, empty database of the shared cluster."""
    cluster = cluster_or_skip()
    with fresh_database(cluster) as name:
        yield cluster.url(name)


@contextlib.contextmanager
def conformance_read_only(url: str) -> Iterator[None]:
    """The conformance suite's read-only hook (entry point group
    ``hermes_store_conformance_read_only``): the database of ``url`` (one of
    :func:`conformance_database`'s) read-only by default for the connections made meanwhile
    (``ALTER DATABASE … SET default_transaction_read_only = on``), as a database an
    administrator froze; reset afterwards."""
    cluster = cluster_or_skip()
    database = url.rsplit("/", 1)[1]
    cluster.sql(f"ALTER DATABASE {database} SET default_transaction_read_only = on")
    try:
        yield
    finally:
        cluster.sql(f"ALTER DATABASE {database} RESET default_transaction_read_only")
