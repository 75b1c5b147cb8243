"""``hermes sessions repair`` keeps the gateway inbox: messages a gateway acknowledged and had
not turned yet are in the salvaged store (read from the damaged file, also when its table of
tables is lost), and a merged backup brings back those the damage took. The rows' claims
(which gateway process held a row) stay behind. The installed command, real damaged files."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from damaged_stores import DAMAGES, build_corpus
from installed_hermes import run_hermes_in
from store_helpers import wait_for_backups

from hermes_core.store import STATE_DB_NAME, SessionStore
from hermes_core.store.backups import BackupSettings, list_backups
from hermes_core.store.inbox import CLAIM_PREFIX, InboxClaim

pytestmark = pytest.mark.slow

KEY = "agent:main:telegram:dm:7"
Row = tuple[str, str, str, str, float]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("corpus")
    build_corpus(home, sessions=12, per_session=100)
    return home / STATE_DB_NAME


def add_inbox_rows(home: Path, texts: list[str], *, at: float) -> list[Row]:
    """Messages acknowledged by a gateway (claimed by it, a process long gone), not turned."""
    with SessionStore.open(home) as store:
        for number, text in enumerate(texts):
            store.routing.inbox_add(
                KEY, "telegram", f"{at:.0f}-{number}", f'{{"text": "{text}"}}',
                now=at + number, claim=InboxClaim("gone.example/1/0ff", at + 60),
            )  # fmt: skip
    return [(KEY, "telegram", f"{at:.0f}-{n}", f'{{"text": "{t}"}}', at + n)
            for n, t in enumerate(texts)]  # fmt: skip


def inbox_of(path: Path) -> tuple[list[Row], list[str]]:
    """The inbox rows (oldest first) and the claim keys of the store at ``path``."""
    connection = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
    try:
        rows = connection.execute(
            "SELECT session_key, platform, message_id, event, received_at FROM gateway_inbox "
            "ORDER BY id"
        ).fetchall()
        claims = connection.execute(
            "SELECT key FROM state_meta WHERE substr(key, 1, ?) = ?",
            (len(CLAIM_PREFIX), CLAIM_PREFIX),
        ).fetchall()
    finally:
        connection.close()
    return [tuple(row) for row in rows], [str(key) for (key,) in claims]


@pytest.mark.parametrize("damage", ["garbage header", "garbage first page"])
def test_a_salvage_keeps_the_messages_waiting_in_the_gateway_inbox(
    corpus: Path, tmp_path: Path, damage: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    path = home / STATE_DB_NAME
    shutil.copyfile(corpus, path)
    waiting = add_inbox_rows(home, ["are you there?", "hello again"], at=1_000.0)
    DAMAGES[damage](path)
    repaired = run_hermes_in(home, "sessions", "repair", "--no-backup")
    assert repaired.returncode == 0, (repaired.stdout, repaired.stderr)
    assert "Salvaged" in repaired.stdout, repaired.stdout
    assert inbox_of(path) == (waiting, [])


@pytest.fixture
def backed_up(corpus: Path, tmp_path: Path) -> Iterator[tuple[Path, list[Row]]]:
    """Inbox rows in a rolling backup, then the store cut at half (its inbox pages, written
    last, with it)."""
    home = tmp_path / "home"
    home.mkdir()
    path = home / STATE_DB_NAME
    shutil.copyfile(corpus, path)
    waiting = add_inbox_rows(home, ["before the backup"], at=2_000.0)
    assert run_hermes_in(home, "sessions", "list").returncode == 0
    wait_for_backups(path)
    (backup,) = list_backups(path, BackupSettings())
    assert inbox_of(backup.path)[0] == waiting
    DAMAGES["truncated at half"](path)
    yield home, waiting


def test_merging_a_backup_brings_back_inbox_rows_the_damage_took(
    backed_up: tuple[Path, list[Row]],
) -> None:
    home, waiting = backed_up
    result = run_hermes_in(home, "sessions", "repair", "--merge-backup")
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert inbox_of(home / STATE_DB_NAME) == (waiting, [])


def test_restoring_a_backup_brings_back_its_inbox_rows(
    backed_up: tuple[Path, list[Row]],
) -> None:
    home, waiting = backed_up
    result = run_hermes_in(home, "sessions", "repair", "--restore-backup")
    assert result.returncode == 0, (result.stdout, result.stderr)
    rows, _claims = inbox_of(home / STATE_DB_NAME)  # the backup as it was, claims and all
    assert rows == waiting
