"""Stored text with terminal control sequences, shown by the installed ``hermes`` in a real
pseudo-terminal (DESIGN §9, issue 23): ``show``, ``list``, ``search``, ``browse``, ``insights``,
an import summary, a question quoting a title and an error quoting what was typed print every
control character visibly (``^[]0;PWNED^G``), never as itself, and rich markup in stored text
prints literally; ``--json`` and exports keep the text exactly. The chat's side is
``tests/chat/test_chat_hostile_text.py``; the convention itself ``test_terminal_text.py``."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Sequence
from pathlib import Path

import pexpect
import pytest
from hostile_text import (
    ANSWER,
    ANSWER_SHOWN,
    MODEL,
    MODEL_SHOWN,
    PAYLOAD,
    PAYLOAD_SHOWN,
    TITLE,
    TITLE_SHOWN,
    TOOL_SHOWN,
    USER_TEXT,
    USER_TEXT_SHOWN,
    Screen,
    received,
    store_hostile_session,
)
from installed_hermes import hermes_command, run_hermes_in


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def session_id(home: Path) -> str:
    return store_hostile_session(home)


def terminal_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "COLUMNS"))}
    env.update(HOME=str(tmp_path / "user"), TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1")
    return env


def in_terminal(
    home: Path, *args: str, keys: Sequence[tuple[str, str]] = (), status: int = 0
) -> Screen:
    """``hermes --home HOME ARGS…`` in a pseudo-terminal 200 columns wide: for each
    ``(text, key)`` of ``keys`` wait until ``text`` is on the screen, then press ``key``;
    everything the terminal received, checked to hold nothing hostile."""
    child = pexpect.spawn(
        hermes_command(),
        ["--home", str(home), *args],
        env=terminal_env(home.parent),
        dimensions=(40, 200),
        timeout=30,
    )
    log = io.BytesIO()
    child.logfile_read = log
    for text, key in keys:
        child.expect_exact(text.encode())
        child.send(key)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == status, log.getvalue()[-2000:]
    return received(log.getvalue())


def test_show_prints_every_control_character_visibly(home: Path, session_id: str) -> None:
    shown = in_terminal(home, "sessions", "show", session_id).visible
    assert TITLE_SHOWN in shown
    assert f"model: {MODEL_SHOWN}" in shown
    assert USER_TEXT_SHOWN in shown  # NUL, C1, bidi, DCS and [bold red] markup shown too
    assert ANSWER_SHOWN in shown
    assert f"[1 tool call: {TOOL_SHOWN}]" in shown
    assert f"{TOOL_SHOWN} output: out{PAYLOAD_SHOWN}put" in shown


def test_list_shows_titles_and_previews_visibly(home: Path, session_id: str) -> None:
    shown = in_terminal(home, "sessions", "list").visible
    assert TITLE_SHOWN in shown
    assert f"{PAYLOAD_SHOWN} [bold red]not markup[/] c1<U+009B>31m" in shown  # the preview
    assert session_id in shown


def test_search_shows_titles_and_snippets_visibly_and_never_as_markup(
    home: Path, session_id: str
) -> None:
    shown = in_terminal(home, "sessions", "search", "ansiword").visible
    assert f"1. {TITLE_SHOWN}" in shown
    assert f"{PAYLOAD_SHOWN} [bold red]not markup[/] c1<U+009B>31m" in shown
    assert session_id in shown


def test_the_browse_picker_draws_rows_visibly(home: Path, session_id: str) -> None:
    shown = in_terminal(
        home,
        "sessions",
        "browse",
        keys=[("1 shown", "ansiword"), ("Preview / match", ""), ("1 shown", "\x1b")],
    ).visible
    assert TITLE_SHOWN[:30] in shown  # the title column is at most 40 cells wide
    assert PAYLOAD_SHOWN in shown  # the recent row's preview, then the content match
    assert "Nothing chosen." in shown


def test_insights_tables_show_names_visibly(home: Path, session_id: str) -> None:
    shown = in_terminal(home, "insights").visible
    assert MODEL_SHOWN in shown  # By model, and the unpriced note
    assert TITLE_SHOWN in shown  # By session (most tokens)
    assert TOOL_SHOWN in shown  # Tools


def test_an_error_quoting_what_was_typed_shows_it_visibly(home: Path, session_id: str) -> None:
    shown = in_terminal(home, "sessions", "show", PAYLOAD, status=1).visible
    assert f"hermes: no session matches '{PAYLOAD_SHOWN}'" in shown


def test_a_question_and_an_error_quoting_a_stored_title_show_it_visibly(
    home: Path, session_id: str
) -> None:
    shown = in_terminal(
        home, "sessions", "delete", session_id, keys=[("[y/N]", "n\r")], status=1
    ).visible
    assert f"Delete session {session_id} ('{TITLE_SHOWN}') and its 3 messages? [y/N]" in shown
    assert "hermes: nothing deleted" in shown


def test_an_import_summary_quoting_a_file_name_shows_it_visibly(home: Path, tmp_path: Path) -> None:
    log = tmp_path / f"log{PAYLOAD}.jsonl"
    log.write_text('{"not": "a conversation"}\n', encoding="utf-8")
    shown = in_terminal(home, "sessions", "import", str(log), status=1).visible
    assert f"log{PAYLOAD_SHOWN}.jsonl: no installed importer recognises it" in shown


def test_json_keeps_every_character_and_is_harmless_on_a_terminal(
    home: Path, session_id: str
) -> None:
    shown = run_hermes_in(home, "sessions", "show", session_id, "--json")
    assert shown.returncode == 0, shown.stderr
    received(shown.stdout.encode())  # C1 and bidi are \\u escapes, like the C0 JSON escapes
    document = json.loads(shown.stdout)
    assert document["title"] == TITLE and document["model"] == MODEL
    assert [m["content"] for m in document["messages"]] == [USER_TEXT, ANSWER, f"out{PAYLOAD}put"]
    listed = run_hermes_in(home, "sessions", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    received(listed.stdout.encode())
    assert json.loads(listed.stdout)[0]["preview"] == " ".join(USER_TEXT.split())  # past the NUL
    found = run_hermes_in(home, "sessions", "search", "ansiword", "--json")
    assert json.loads(found.stdout)["results"][0]["title"] == TITLE
    report = run_hermes_in(home, "insights", "--json")
    assert json.loads(report.stdout)["unpriced"]["models"] == [MODEL]


def test_an_export_keeps_the_bytes(home: Path, session_id: str, tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    exported = run_hermes_in(
        home, "sessions", "export", str(target), "--session-id", session_id, "--no-redact"
    )
    assert exported.returncode == 0, exported.stderr
    [record] = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert (record["session"]["title"], record["session"]["model"]) == (TITLE, MODEL)
    contents = [m["content"] for m in record["messages"]]
    assert contents == [USER_TEXT, ANSWER, f"out{PAYLOAD}put"]


def test_every_human_line_of_the_command_line_goes_through_one_door() -> None:
    """The commands no test above runs with hostile text (gateway status, plugins, stats,
    prune, repair…) print through ``hermes_core.cli.echo`` too: a ``typer.echo`` anywhere else
    would bypass it (``errors.py`` makes its own lines safe: it must not load typer early)."""
    cli = Path(__file__).resolve().parents[2] / "hermes_core" / "cli"
    bypassing = [
        path.name
        for path in sorted(cli.glob("*.py"))
        if "typer.echo(" in path.read_text(encoding="utf-8")
        and path.name not in ("echo.py", "errors.py")
    ]
    assert bypassing == []
