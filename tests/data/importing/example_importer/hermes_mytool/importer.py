"""Read MyTool chat logs: ``$MYTOOL_HOME/chats/<chat>.jsonl`` (default ``~/.mytool``)."""

import json
from datetime import datetime
from pathlib import Path

from hermes_hookspecs import ImportCandidate, ImportedSession, Message


class MyToolImporter:
    name = "mytool"
    label = "MyTool"

    def discover(self, env):
        """Every chat log in the default place: one stat each, nothing opened."""
        home = env.get("MYTOOL_HOME") or Path(env.get("HOME", "~"), ".mytool")
        chats = Path(home).expanduser() / "chats"
        if not chats.is_dir():
            return
        for path in sorted(chats.glob("*.jsonl")):
            if path.is_symlink() or not path.is_file():
                continue  # only the tool's own regular files
            yield ImportCandidate(
                importer=self.name,
                path=path,
                foreign_id=path.stem,
                ended_at=path.stat().st_mtime,
            )

    def sniff(self, path):
        """A MyTool log starts with a ``chat`` line."""
        try:
            with path.open("rb") as log:
                first = json.loads(log.readline(64 * 1024))
        except (OSError, ValueError):
            return False
        return isinstance(first, dict) and first.get("type") == "chat"

    def read(self, path, resume_from=None):
        """One session per file; ``resume_from`` is a byte offset this reader gave."""
        session = ImportedSession(foreign_id=path.stem, source="mytool", messages=iter(()))
        session.messages = self._messages(path, int(resume_from or 0), session)
        yield session

    def _messages(self, path, offset, session):
        resumed = offset > 0
        with path.open("rb") as log:  # read-only, one line at a time
            log.seek(offset)
            for line in log:
                if not line.endswith(b"\n"):
                    break  # still being written: read it next time
                offset += len(line)
                session.cursor = str(offset)
                try:
                    record = json.loads(line)
                except ValueError:  # not JSON, or not UTF-8
                    _count(session, "malformed line")
                    continue
                if not isinstance(record, dict):
                    _count(session, "malformed line")
                    continue
                kind, when = record.get("type"), _time(record.get("at"))
                if when is not None:
                    session.ended_at = when
                if kind == "chat":
                    session.cwd = record.get("cwd")
                    session.started_at = when
                elif kind == "say" and record.get("from") == "human":
                    text = record.get("text", "")
                    if session.title_hint is None and not resumed:
                        session.title_hint = "Imported from MyTool: " + " ".join(text.split())[:60]
                    yield Message(role="user", content=text, timestamp=when)
                elif kind == "say" and record.get("from") == "bot":
                    notes = [f"[ran tool: {name}]" for name in record.get("tools", [])]
                    parts = ["\n".join(notes)] if notes else []
                    parts.append(record.get("text", ""))
                    yield Message(role="assistant", content="\n\n".join(parts), timestamp=when)
                else:
                    _count(session, "unknown record type")


def _count(session, reason):
    session.warnings[reason] = session.warnings.get(reason, 0) + 1


def _time(value):
    """POSIX seconds from an ISO 8601 time with a zone, else None."""
    try:
        return datetime.fromisoformat(value).timestamp()
    except (TypeError, ValueError):
        return None
