"""``hermes sessions search`` through typer's CliRunner."""

from __future__ import annotations

import json

import pytest
from installed_hermes import hermes_command
from search_corpus import Corpus
from typer.testing import CliRunner

from hermes_core.cli.app import build_app
from hermes_core.plugins import PluginHost

runner = CliRunner()


@pytest.fixture
def host() -> PluginHost:
    return PluginHost(load_entry_points=False)


def invoke(host: PluginHost, corpus: Corpus, *args: str):
    return runner.invoke(build_app(host), ["--home", str(corpus.home), *args])


def test_search_prints_title_when_source_snippet_and_id(host, corpus: Corpus) -> None:
    result = invoke(host, corpus, "sessions", "search", "JWT", "refresh")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("1. Auth refactor plan")
    assert "9d ago" in lines[0] and "cli" in lines[0] and corpus.ids["auth"] in lines[0]
    assert "The JWT refresh token rotation" in lines[1]
    assert ">>>" not in result.output  # markers become highlighting
    assert "hermes sessions show <id>" in result.output


def test_search_json_prints_the_tool_payload(host, corpus: Corpus) -> None:
    result = invoke(host, corpus, "sessions", "search", "kubernetes", "--json", "--limit", "1")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["form"] == "discovery" and payload["count"] == 1
    assert payload["results"][0]["lineage_id"] == corpus.ids["project"]
    assert ">>>kubernetes<<<" in payload["results"][0]["snippet"]


def test_search_options_source_sort_role(host, corpus: Corpus) -> None:
    by_source = invoke(host, corpus, "sessions", "search", "東京 OR ラーメン", "--source", "cli")
    assert by_source.exit_code == 0 and "No sessions match" in by_source.output
    tool = invoke(host, corpus, "sessions", "search", "segfault", "--role", "tool", "--json")
    assert json.loads(tool.output)["results"][0]["session_id"] == corpus.ids["tooling"]
    newest = invoke(
        host, corpus, "sessions", "search", "zebra OR JWT", "--sort", "newest", "--json"
    )
    assert [r["session_id"] for r in json.loads(newest.output)["results"]] == [
        corpus.ids["archived"],
        corpus.ids["auth"],
    ]


def test_search_shows_archived_sessions_marked(host, corpus: Corpus) -> None:
    result = invoke(host, corpus, "sessions", "search", "zebra")
    assert result.exit_code == 0
    assert "archived" in result.output.splitlines()[0]


def test_search_says_how_a_rejected_query_was_searched(host, corpus: Corpus) -> None:
    result = invoke(host, corpus, "sessions", "search", "c++")
    assert result.exit_code == 0, result.output
    assert '(searched as "c")' in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--role", "robot"], "hermes: --role: unknown role(s) robot"),
        (["--sort", "sideways"], "hermes: --sort must be one of newest, oldest"),
    ],
)
def test_bad_options_are_one_line_errors(host, corpus: Corpus, args, message) -> None:
    result = invoke(host, corpus, "sessions", "search", "kubernetes", *args)
    assert result.exit_code == 1
    assert result.output.strip().startswith(message)
    assert "Traceback" not in result.output


def test_blank_query_is_refused(host, corpus: Corpus) -> None:
    result = invoke(host, corpus, "sessions", "search", "  ")
    assert result.exit_code == 1 and "give some words" in result.output


def test_installed_hermes_searches_in_a_subprocess(corpus: Corpus) -> None:
    import os
    import subprocess

    hermes = hermes_command()
    env = {**os.environ, "HOME": str(corpus.home.parent), "HERMES_PLUGINS": ""}
    env.pop("HERMES_DEBUG", None)
    result = subprocess.run(
        [hermes, "--home", str(corpus.home), "sessions", "search", "量子纠缠", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert [r["session_id"] for r in payload["results"]] == [corpus.ids["chinese"]]


def test_a_word_deep_in_a_tool_output_is_found_by_the_installed_hermes(tmp_path) -> None:
    import subprocess

    from hermes_hookspecs import Message

    from hermes_core.store import SessionStore

    planted = {"nearword": 1_000, "fortykword": 40_000, "deepword": 190_000}
    with SessionStore.open(tmp_path) as store:
        session = store.create_session("cli", title="long build log")
        store.append_message(session.id, Message("user", "run the build"))
        for word, at in planted.items():
            log = "compiling module ok " * (at // 20) + word + " failed here"
            store.append_message(session.id, Message("tool", log, tool_name="terminal"))
    for word in planted:
        found = subprocess.run(
            [
                hermes_command(),
                "--home",
                str(tmp_path),
                "sessions",
                "search",
                word,
                "--role",
                "tool",
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert found.returncode == 0, found.stderr
        [result] = json.loads(found.stdout)["results"]
        assert result["session_id"] == session.id
        assert f">>>{word}<<< failed here" in result["snippet"]
