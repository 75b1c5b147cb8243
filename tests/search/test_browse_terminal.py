"""``hermes sessions browse``: the installed command in a pseudo-terminal, plus its rows."""

from __future__ import annotations

import os
import sqlite3
import subprocess

import pexpect
from installed_hermes import hermes_command
from search_corpus import Corpus

from hermes_core.search.typeahead import browse_rows, typeahead_query


def environment(corpus: Corpus) -> dict[str, str]:
    env = {**os.environ, "HOME": str(corpus.home.parent), "HERMES_HOME": str(corpus.home)}
    env.pop("HERMES_DEBUG", None)
    env["HERMES_PLUGINS"] = ""
    return env


def spawn_browse(corpus: Corpus) -> pexpect.spawn:
    return pexpect.spawn(
        hermes_command(),
        ["--home", str(corpus.home), "sessions", "browse"],
        env=environment(corpus),
        dimensions=(30, 120),
        encoding="utf-8",
        timeout=20,
    )


def test_typing_a_title_word_and_tab_shows_that_session(corpus: Corpus) -> None:
    child = spawn_browse(corpus)
    child.expect("type to search")
    child.send("quarterly")
    child.expect("Quarterly budget spreadsheet")
    child.expect("1 shown")
    child.expect("Enter resume · Tab show")
    child.send("\t")
    child.expect(r"id: (\S+)")
    assert child.match.group(1) == corpus.ids["title_only"]
    child.expect("morning! what shall we do")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_typing_words_from_messages_finds_the_session(corpus: Corpus) -> None:
    child = spawn_browse(corpus)
    child.expect("type to search")
    child.send("JWT refr")  # the last word is taken as a prefix
    child.expect("The JWT refresh token rotation")
    child.send("\t")
    child.expect(r"id: (\S+)")
    assert child.match.group(1) == corpus.ids["auth"]
    child.expect(pexpect.EOF)


def test_escape_leaves_without_showing_anything(corpus: Corpus) -> None:
    child = spawn_browse(corpus)
    child.expect("type to search")
    child.send("\x1b")
    child.expect("Nothing chosen.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_browse_without_a_terminal_is_a_one_line_error(corpus: Corpus) -> None:
    result = subprocess.run(
        [hermes_command(), "--home", str(corpus.home), "sessions", "browse"],
        capture_output=True,
        text=True,
        env=environment(corpus),
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.strip().startswith("hermes: browse needs a terminal")
    assert "Traceback" not in result.stderr


def test_rows_hide_archived_and_delegate_sessions(corpus: Corpus) -> None:
    connection = sqlite3.connect(corpus.home / "state.db")
    recent = browse_rows(connection, "")
    shown = [row.session_id for row in recent]
    assert corpus.ids["archived"] not in shown and corpus.ids["delegate"] not in shown
    assert [r.last_active_at for r in recent] == sorted(
        (r.last_active_at for r in recent), reverse=True
    )
    assert browse_rows(connection, "zebra") == []  # archived: searchable, not browsable
    assert browse_rows(connection, "walrus") == []  # delegate sessions are not listed
    kube = browse_rows(connection, "kubernetes")
    assert [r.matched for r in kube][:1] == ["content"]
    assert len({r.session_id for r in kube}) == len(kube)
    titled = browse_rows(connection, "auth ref")
    assert titled[0].session_id == corpus.ids["auth"] and titled[0].matched == "title"
    chinese = browse_rows(connection, "纠缠")
    assert [r.session_id for r in chinese] == [corpus.ids["chinese"]]


def test_only_a_long_enough_last_word_becomes_a_prefix() -> None:
    assert typeahead_query("deploy kub") == "deploy kub*"
    assert typeahead_query("deploy k") == "deploy k"
    assert typeahead_query('"unbalanced') == '"unbalanced'
    assert typeahead_query("量子纠缠") == "量子纠缠"
