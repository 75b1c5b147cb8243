"""``hermes sessions stats`` says how it split the store's size, in the backend's own terms:
SQLite counts pages with ``dbstat``; PostgreSQL reads its relations' sizes (issue 25)."""

from __future__ import annotations

from pathlib import Path

from hermes_hookspecs import Message
from installed_hermes import run_hermes_in
from postgres_cluster import open_home_store


def test_stats_names_the_way_its_backend_counted(backend_home: Path) -> None:
    with open_home_store(backend_home) as store:
        session = store.create_session("cli")
        store.append_messages(session.id, [Message("user", "how big is the store")])
        postgres = store.url.startswith("postgresql")
    shown = run_hermes_in(backend_home, "sessions", "stats")
    assert shown.returncode == 0, shown.stderr
    (line,) = [line for line in shown.stdout.splitlines() if line.startswith("Size by content:")]
    if postgres:
        assert line.endswith("(counted with pg_total_relation_size)")
        assert "dbstat" not in shown.stdout
    else:
        assert line.endswith("(counted with dbstat)")
