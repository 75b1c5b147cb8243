"""The jsonl and markdown plugins on their own: shapes, names, front matter, the backup reader."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
import yaml
from hermes_export_jsonl.importer import JsonlBackupImporter
from hermes_export_jsonl.shape import (
    message_from_dict,
    message_to_dict,
    record_to_dict,
    session_from_dict,
)
from hermes_export_markdown.frontmatter import front_matter, yaml_string
from hermes_export_markdown.naming import session_file_name
from hermes_export_markdown.render import fenced, message_body, transcript
from hermes_hookspecs import (
    ImportedSession,
    Message,
    Session,
    SessionRecord,
    ToolCall,
    UnreadableRecords,
)
from hypothesis import given, settings
from hypothesis import strategies as st

SAFE_NAME = re.compile(r"^[A-Za-z0-9_-]+-[a-z0-9-]+\.(md|qmd)$")


def full_session(**changes: object) -> Session:
    """A session with every field set to something that is not its default."""
    session = Session(
        id="20260705_143000_abcdef",
        source="telegram",
        started_at=1_780_000_000.25,
        title="every field",
        title_source="user",
        user_id="u1",
        model="gpt-5",
        model_config={"temperature": 0.2},
        system_prompt="You are Hermes.",
        parent_session_id="20260705_120000_000000",
        parent_kind="delegate",
        ended_at=1_780_000_100.5,
        end_reason="done",
        last_active_at=1_780_000_099.0,
        cwd="/work",
        git_branch="main",
        git_repo_root="/work",
        chat_id="c1",
        chat_type="dm",
        thread_id="t1",
        session_key="agent:main:telegram:dm:c1",
        billing_provider="openai",
        cost_actual_usd=0.5,
        cost_estimated_usd=0.4,
        input_tokens=10,
        output_tokens=20,
        message_count=2,
        tool_call_count=1,
        pinned=True,
        archived=True,
        metadata={"imported": {"from": "claude"}},
    )
    return dataclasses.replace(session, **changes)  # type: ignore[arg-type]


MESSAGES = [
    Message("user", "hi", timestamp=1_780_000_001.0, platform_message_id="m1", id=7),
    Message(
        "assistant",
        "",
        timestamp=1_780_000_002.0,
        tool_calls=(ToolCall("terminal", '{"command": "ls"}', "call_1"),),
        reasoning="look first",
        token_count=12,
        id=8,
    ),
    Message("tool", "a\nb", timestamp=1_780_000_003.0, tool_call_id="call_1", tool_name="terminal"),
]


def test_a_backup_object_round_trips_every_field():
    record = SessionRecord(full_session(), list(MESSAGES), children=("x",))
    data = json.loads(json.dumps(record_to_dict(record)))
    assert session_from_dict(data["session"]) == record.session
    restored = [message_from_dict(m) for m in data["messages"]]
    expected = [dataclasses.replace(m, id=None, session_id=None) for m in MESSAGES]
    assert restored == expected
    assert data["children"] == ["x"] and data["lineage"] == []
    assert message_to_dict(MESSAGES[1])["tool_calls"][0]["id"] == "call_1"


def write_backup(path: Path, *lines: str) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def backup_line(session: Session, messages: list[Message]) -> str:
    return json.dumps(record_to_dict(SessionRecord(session, messages)))


def test_the_importer_yields_snapshots_and_timed_messages_and_names_bad_lines(tmp_path):
    path = tmp_path / "backup.jsonl"
    child = full_session(id="20260705_150000_222222", title="child", pinned=False)
    write_backup(
        path,
        backup_line(full_session(parent_session_id=None, parent_kind=None), list(MESSAGES)),
        "{not json",
        json.dumps({"format": "hermes-prompt", "version": 1, "text": "hi"}),
        backup_line(child, []),
    )
    importer = JsonlBackupImporter()
    assert importer.sniff(path) and list(importer.discover({})) == []
    read: list[ImportedSession] = []
    with pytest.raises(UnreadableRecords) as unread:
        read.extend(importer.read(path))
    assert unread.value.problems == ["line 2: not valid JSON (Expecting property name "
                                     "enclosed in double quotes at character 2)"]  # fmt: skip
    first, second = read
    assert first.snapshot is not None and first.snapshot.pinned and first.snapshot.archived
    assert first.foreign_id == first.snapshot.id and first.source == "telegram"
    messages = list(first.messages)
    assert [m.timestamp for m in messages] == [m.timestamp for m in MESSAGES]
    assert first.warnings == {}
    assert second.warnings == {"not a session backup line": 1}
    assert second.parent_foreign_id == "20260705_120000_000000"  # a delegate child
    assert second.cursor == str(path.stat().st_size)
    # Reading again from the last cursor finds nothing new; a grown file gives the new line,
    # and a last line cut short is named with its true line number.
    assert list(importer.read(path, resume_from=second.cursor)) == []
    with path.open("a", encoding="utf-8") as handle:
        handle.write(backup_line(full_session(id="20260706_000000_333333"), []) + "\n")
        handle.write('{"format": "hermes-session"')
    grown: list[ImportedSession] = []
    with pytest.raises(UnreadableRecords) as cut:
        grown.extend(importer.read(path, resume_from=second.cursor))
    assert [session.foreign_id for session in grown] == ["20260706_000000_333333"]
    assert len(cut.value.problems) == 1
    assert cut.value.problems[0].startswith("line 6: not valid JSON")
    assert cut.value.problems[0].endswith("(the file ends inside this line)")


def test_sniff_says_no_to_other_files(tmp_path):
    other = tmp_path / "claude.jsonl"
    other.write_text('{"type": "user", "message": {}}\n')
    assert not JsonlBackupImporter().sniff(other)
    assert not JsonlBackupImporter().sniff(tmp_path / "missing.jsonl")


@settings(max_examples=300, deadline=None)
@given(title=st.one_of(st.none(), st.text()), session_id=st.text(min_size=1))
def test_file_names_are_safe_whatever_the_title_or_id(title, session_id):
    for extension in ("md", "qmd"):
        name = session_file_name(session_id, title, extension)
        assert SAFE_NAME.match(name), name
        assert "/" not in name and ".." not in name and not name.startswith(".")
        assert len(name) <= 80 + 1 + 60 + 4


def test_file_names_keep_the_id_and_a_readable_slug():
    name = session_file_name("20260705_143000_abcdef", "Fix the ../../etc/passwd bug!", "md")
    assert name == "20260705_143000_abcdef-fix-the-etc-passwd-bug.md"
    assert session_file_name("x", "Ünïcödé café", "qmd") == "x-unicode-cafe.qmd"
    assert session_file_name("x", "数据库", "md") == "x-session.md"


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_front_matter_reads_back_exactly_as_yaml(text):
    block = front_matter([("title", text), ("cwd", text), ("ids", [text, "b"]), ("n", 3)])
    assert block.startswith("---\n") and block.endswith("---\n")
    meta = yaml.safe_load(block.split("---\n")[1])
    assert meta == {"title": text, "cwd": text, "ids": [text, "b"], "n": 3}


def test_yaml_strings_escape_what_yaml_would_fold():
    for character in ("\u2028", "\u2029", "\x85", "\ufeff", "\x00", "\x1b", "\t"):
        assert character not in yaml_string(f"a{character}b")


@given(text=st.text())
def test_a_fence_is_never_closed_by_the_text_inside(text):
    block = fenced(text)
    fence = block.split("\n", 1)[0].removesuffix("text")
    assert block.endswith("\n" + fence)
    assert fence not in text


def test_tool_output_calls_and_reasoning_are_collapsed():
    assistant, tool = MESSAGES[1], MESSAGES[2]
    assert "<summary>Tool call: terminal (call_1)</summary>" in message_body(assistant)
    assert "<summary>Reasoning</summary>" in message_body(assistant)
    assert message_body(tool).startswith("<details>\n<summary>Tool output (2 lines)")


def test_the_transcript_has_one_heading_per_message():
    text = "".join(transcript(SessionRecord(full_session(), list(MESSAGES))))
    headings = [line for line in text.splitlines() if line.startswith("### ")]
    assert headings == [
        "### User — 2026-05-28T20:26:41Z",
        "### Assistant — 2026-05-28T20:26:42Z",
        "### Tool — terminal — 2026-05-28T20:26:43Z",
    ]
    assert text.startswith("# every field\n")


def test_a_logical_lineage_export_is_not_restored_as_a_backup(tmp_path):
    path = tmp_path / "logical.jsonl"
    joined = SessionRecord(full_session(), list(MESSAGES), lineage=("a", "b"))
    single = full_session(id="20260707_000000_444444")
    write_backup(path, json.dumps(record_to_dict(joined)), backup_line(single, []))
    [only] = JsonlBackupImporter().read(path)
    assert only.foreign_id == single.id
    assert only.warnings == {"not a backup line (a --lineage logical export)": 1}


def rendered(record: SessionRecord) -> str:
    """The transcript as a Markdown renderer that passes raw HTML through (as Quarto does)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).render("".join(transcript(record)))


HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "</details><script>alert(2)</script>",
    "text with `<b>code</b>` inline and <iframe src=x></iframe>",
    "```html\n<script>kept as code</script>\n```\nafter <svg onload=alert(3)>",
]
_TAG = re.compile(r"<([a-zA-Z][\w-]*)([^>]*)>")


def assert_inert(html: str) -> None:
    for name, attributes in _TAG.findall(html):
        assert name.lower() not in {"script", "iframe", "svg", "style", "object", "embed"}, html
        assert not re.search(r"\son\w+\s*=", attributes), html


def test_raw_html_in_messages_and_titles_renders_as_text():
    messages = [Message("user", text, timestamp=1.0) for text in HOSTILE]
    record = SessionRecord(full_session(title="<script>alert('title')</script>"), messages)
    html = rendered(record)
    assert_inert(html)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # shown, not run
    assert "<code>&lt;b&gt;code&lt;/b&gt;</code>" in html  # code spans stay code
    assert "<code>plain code</code>" in rendered(
        SessionRecord(full_session(), [Message("user", "a `plain code` span")])
    )
    assert "&lt;script&gt;kept as code&lt;/script&gt;" in html


def test_a_fence_a_message_leaves_open_is_closed_before_the_next_message():
    messages = [
        Message("user", "```python\nprint('never closed')", timestamp=1.0),
        Message("assistant", "the answer", timestamp=2.0),
    ]
    html = rendered(SessionRecord(full_session(), messages))
    assert "<h3>Assistant — " in html and "<p>the answer</p>" in html


_FRAGMENTS = [
    "<script>", "</script>", "</details>", "<details>", "```", "~~~", "`", "``", "\n", "\n\n",
    "<img src=x onerror=alert(1)>", "    ", "text", "<svg onload=x>", "<!--", "-->", "<?php",
    "<![CDATA[", "<", ">", "&", "# ", "> ", "- ", "<a href='javascript:x'>", "<style>",
    "````", " ```", "    ```", "``` x", "```a`b", "`` ` ``", "\t", "`<b>`", "`` <i> ``",
]  # fmt: skip
_MARKUP = st.one_of(st.text(), st.lists(st.sampled_from(_FRAGMENTS)).map("".join))


@settings(max_examples=300, deadline=None)
@given(content=_MARKUP, title=_MARKUP.filter(lambda t: bool(t.strip())))
def test_no_message_or_title_can_inject_active_html(content, title):
    record = SessionRecord(
        full_session(title=title), [Message("user", content), Message("assistant", "end")]
    )
    html = rendered(record)
    assert_inert(html)
    assert "<h3>Assistant" in html


def test_a_qmd_title_cannot_carry_html_into_quarto_and_md_keeps_it_exact():
    from hermes_export_markdown.exporter import MarkdownExporter
    from hermes_hookspecs import ExportOptions

    record = SessionRecord(full_session(title="<b onmouseover=x>bold</b> plan"), [])
    options = ExportOptions(output=None, single_session=True)
    qmd = dict(MarkdownExporter("qmd")._front_matter(record, options, 0.0))
    md = dict(MarkdownExporter("md")._front_matter(record, options, 0.0))
    assert qmd["title"] == "&lt;b onmouseover=x>bold&lt;/b> plan"
    assert md["title"] == "<b onmouseover=x>bold</b> plan"
