"""SPEC K1 in exports: with ``--redact`` (or a format that redacts by default) the core scrubs
every free-text field — title, messages, tool calls and output, metadata — before the exporter
sees the session, with the built-in rules and the rules plugins register."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from export_helpers import ExporterPlugin, RecordingExporter, host, invoke
from hermes_hookspecs import Message, RedactionRule, ToolCall, hookimpl

from hermes_core.store import SessionStore

PLANTED = "PLANTED-0badc0de"
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


class PlantedRule:
    """A team's private token format, added through the hook."""

    @hookimpl
    def hermes_register_redaction_rules(self, register):
        register(RedactionRule("planted", r"PLANTED-[0-9a-f]{8}", keywords=("planted",)))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def secret_session(home: Path) -> str:
    """A session with the planted secret in every free-text field and a vendor token."""
    with SessionStore.open(home) as store:
        session = store.create_session(
            "cli",
            title=f"deploy with {PLANTED}",
            system_prompt=f"use {PLANTED} for the api",
            model_config={"api": {"key_hint": PLANTED}},
            metadata={"notes": [f"token {PLANTED}"]},
            model=f"gpt-{PLANTED}",
            cwd=f"/home/me/{PLANTED}",
            git_branch=f"fix/{PLANTED}",
            billing_provider=PLANTED,
        )
        store.append_messages(
            session.id,
            [
                Message("user", f"my token is {PLANTED} and {GITHUB_TOKEN}", timestamp=1.0),
                Message(
                    "assistant",
                    f"ok {PLANTED}",
                    timestamp=2.0,
                    reasoning=f"the user gave {PLANTED}",
                    tool_calls=(ToolCall(f"run_{PLANTED}", json.dumps({"env": PLANTED}), "c1"),),
                ),
                Message(
                    "tool",
                    f"export GITHUB_TOKEN={GITHUB_TOKEN}\n{PLANTED}",
                    timestamp=3.0,
                    tool_call_id="c1",
                    tool_name=f"run_{PLANTED}",
                ),
            ],
        )
        store.end_session(session.id, "user_exit")
        return session.id


def test_redact_scrubs_every_free_text_field_of_a_jsonl_export(home):
    session_id = secret_session(home)
    plugin_host = host(("planted", PlantedRule()))
    plain = invoke(plugin_host, home, "sessions", "export", "-", "--session-id", session_id)
    assert PLANTED in plain.stdout and GITHUB_TOKEN in plain.stdout  # the test can fail
    result = invoke(
        plugin_host, home, "sessions", "export", "-", "--session-id", session_id, "--redact"
    )
    assert result.exit_code == 0, result.output
    assert "PLANTED" not in result.stdout and GITHUB_TOKEN not in result.stdout
    [record] = [json.loads(line) for line in result.stdout.splitlines()]
    assert record["session"]["id"] == session_id  # identifiers stay
    assert record["messages"][2]["tool_call_id"] == "c1"
    assert "[REDACTED" in record["session"]["title"]


def test_redact_reaches_markdown_files_and_their_names(home, tmp_path):
    session_id = secret_session(home)
    plugin_host = host(("planted", PlantedRule()))
    result = invoke(
        plugin_host, home, "sessions", "export", str(tmp_path), "-f", "md", "--session-id",
        session_id, "--redact",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    [document] = tmp_path.glob("*.md")
    assert "planted" not in document.name.lower()
    text = document.read_text(encoding="utf-8")
    assert "PLANTED" not in text and GITHUB_TOKEN not in text
    assert "redacted: true" in text


def test_the_exporter_only_ever_sees_redacted_records(home):
    session_id = secret_session(home)
    spy = RecordingExporter("spy", redact_by_default=True)
    plugin_host = host(("planted", PlantedRule()), ("spy", ExporterPlugin(spy)))
    result = invoke(
        plugin_host,
        home,
        "sessions",
        "export",
        str(home.parent / "out.txt"),
        "-f",
        "spy",
        "--session-id",
        session_id,
    )
    assert result.exit_code == 0, result.output
    [record] = spy.records
    assert "PLANTED" not in repr(record) and GITHUB_TOKEN not in repr(record)
    assert spy.options is not None and spy.options.redacted
    again = invoke(
        plugin_host, home, "sessions", "export", str(home.parent / "out.txt"), "-f", "spy", "--session-id",
        session_id, "--no-redact",
    )  # fmt: skip
    assert again.exit_code == 0, again.output
    assert PLANTED in repr(spy.records[-1])


def test_redacted_logical_lineage_keeps_its_lineage_ids(home):
    with SessionStore.open(home) as store:
        root = store.create_session("cli", title="saga")
        store.append_messages(root.id, [Message("user", f"first {PLANTED}")])
        second = store.continue_after_compression(root.id)
        store.append_messages(second.id, [Message("user", "second")])
        store.end_session(second.id, "user_exit")
    plugin_host = host(("planted", PlantedRule()))
    result = invoke(
        plugin_host, home, "sessions", "export", "-", "--session-id", second.id, "--lineage",
        "logical", "--redact",
    )  # fmt: skip
    [record] = [json.loads(line) for line in result.stdout.splitlines()]
    assert record["lineage"] == [root.id, second.id]
    assert "PLANTED" not in result.stdout


class BrokenRule:
    """A plugin rule whose pattern is not a regular expression."""

    @hookimpl
    def hermes_register_redaction_rules(self, register):
        register(RedactionRule("broken", r"PLANTED-[0-9a-f", keywords=("planted",)))


def test_a_plugin_rule_that_does_not_compile_is_one_line_and_nothing_is_written(home):
    session_id = secret_session(home)
    spy = RecordingExporter("spy", redact_by_default=True)
    plugin_host = host(("broken", BrokenRule()), ("spy", ExporterPlugin(spy)))
    output = home.parent / "out.txt"
    result = invoke(
        plugin_host,
        home,
        "sessions",
        "export",
        str(output),
        "-f",
        "spy",
        "--session-id",
        session_id,
    )
    assert result.exit_code == 1
    assert "broken" in result.output and "Traceback" not in result.output
    assert spy.records == [] and not output.exists()
