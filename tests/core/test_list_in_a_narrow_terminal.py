"""``hermes sessions list`` in a 70-column pseudo-terminal (issue 29): every id is printed
whole — it is what people copy — while titles and previews are shortened."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pexpect
from hermes_hookspecs import Message
from installed_hermes import hermes_command

from hermes_core.store import SessionStore

ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_a_70_column_terminal_shows_every_id_whole(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ids = []
    with SessionStore.open(home) as store:
        for number in range(3):
            session = store.create_session(
                "cli",
                title=f"A rather long title for session number {number} of the test",
                started_at=time.time() - 3600 * (number + 1),
            )
            store.append_messages(
                session.id,
                [Message("user", "a first message long enough to be cut in a narrow terminal")],
            )
            ids.append(session.id)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "COLUMNS"))}
    env.update(HOME=str(tmp_path / "user"), TERM="xterm-256color")
    child = pexpect.spawn(
        hermes_command(),
        ["--home", str(home), "sessions", "list"],
        env=env,
        dimensions=(40, 70),
        encoding="utf-8",
        timeout=60,
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    lines = [ESCAPES.sub("", line).rstrip() for line in (child.before or "").splitlines()]
    rows = [line for line in lines if re.search(r"\d{8}_\d{6}_", line)]
    assert len(rows) == 3
    for row in rows:
        assert len(row) <= 70, row
        assert row.split()[-1] in ids, row  # the whole id, at the end of the row
        assert "…" in row  # the title and preview gave way
