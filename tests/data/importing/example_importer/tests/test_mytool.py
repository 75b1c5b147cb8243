from pathlib import Path

from hermes_mytool.importer import MyToolImporter

LOG = (
    '{"type": "chat", "at": "2026-05-01T09:00:00+00:00", "cwd": "/home/ana/shop"}\n'
    '{"type": "say", "from": "human", "at": "2026-05-01T09:00:05+00:00", "text": "Why is checkout slow?"}\n'
    "not json\n"
    '{"type": "say", "from": "bot", "at": "2026-05-01T09:00:30+00:00", "text": "An N+1 query.", "tools": ["grep"]}\n'
)


def test_reads_a_chat_and_resumes_after_the_cursor(tmp_path: Path) -> None:
    log = tmp_path / "c-42.jsonl"
    log.write_text(LOG)
    importer = MyToolImporter()
    assert importer.sniff(log)

    [session] = importer.read(log)
    messages = list(session.messages)  # the fields below are final once this is read
    assert [(m.role, m.content) for m in messages] == [
        ("user", "Why is checkout slow?"),
        ("assistant", "[ran tool: grep]\n\nAn N+1 query."),
    ]
    assert session.title_hint == "Imported from MyTool: Why is checkout slow?"
    assert session.cwd == "/home/ana/shop"
    assert session.warnings == {"malformed line": 1}

    with log.open("a") as grown:
        grown.write('{"type": "say", "from": "human", "text": "Fix it."}\n')
    [more] = importer.read(log, session.cursor)
    assert [m.content for m in more.messages] == ["Fix it."]
