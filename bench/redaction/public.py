"""Figure (r), public corpus: recall on secrets taken from gitleaks', detect-secrets' and
trufflehog's test data (``public_corpus/secrets.jsonl``) and false positives on clean controls
from public sources (``public_corpus/clean.jsonl``), measured through the real export engine.

Every secret is planted in four places — user text, assistant text, tool output, tool-call
arguments — each in a session of its own, and every session is exported with ``--redact`` in
every installed format (``plan_export`` + ``run_export``, the code behind ``hermes sessions
export``). A secret is caught in a format and place when neither it nor any third of it
(for secrets of 24 characters and more) is left in the output, read as written and with the
format's escapes undone (HTML entities, JSON string escapes, Markdown backslashes). A clean
control is a false positive when the export with ``--redact`` differs from the export without.

Sessions are exported in batches in which no two items share a piece of a secret, so a leak
is always attributed to the item it belongs to. Like :mod:`.planted`, nothing here imports
the redaction rules.
"""

from __future__ import annotations

import base64
import html
import json
import re
import shutil
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hermes_hookspecs import Message, ToolCall

CORPUS = Path(__file__).resolve().parent / "public_corpus"
PLACES = ("user", "assistant", "tool-output", "tool-arguments")
BASE_TIME = 1_760_000_000.0
MARKER = "[REDACTED"


@dataclass(frozen=True, slots=True)
class Secret:
    id: str
    kind: str
    placement: str
    text: str
    secrets: tuple[str, ...]

    def pieces(self) -> tuple[str, ...]:
        """The secret and, for a long one, its three thirds: any of them left is a leak."""
        out: list[str] = []
        for secret in self.secrets:
            out.append(secret)
            if len(secret) >= 24:
                third = len(secret) // 3
                out += [secret[:third], secret[third : 2 * third], secret[2 * third :]]
        return tuple(out)


@dataclass(frozen=True, slots=True)
class Control:
    id: str
    group: str
    text: str


def _decode(value: str) -> str:
    return base64.b64decode(value).decode("utf-8")


def load_secrets(path: Path = CORPUS / "secrets.jsonl") -> list[Secret]:
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        raw = json.loads(line)
        items.append(
            Secret(
                id=raw["id"],
                kind=raw["kind"],
                placement=raw["placement"],
                text=_decode(raw["text_b64"]),
                secrets=tuple(_decode(s) for s in raw["secrets_b64"]),
            )
        )
    return items


def load_clean(path: Path = CORPUS / "clean.jsonl") -> list[Control]:
    return [
        Control(id=raw["id"], group=raw["group"], text=raw["text"])
        for raw in map(json.loads, path.read_text(encoding="utf-8").splitlines())
    ]


def planted_messages(text: str, place: str) -> list[Message]:
    """A short session whose only copy of ``text`` sits in ``place``."""
    opening = Message("user", "Please help me get the deployment config right.")
    if place == "user":
        return [Message("user", f"Can you check this?\n\n{text}\n\nThanks.")]
    if place == "assistant":
        return [
            opening,
            Message("assistant", f"I found this in the config:\n\n{text}\n\nIt looks off."),
        ]
    if place == "tool-output":
        call = ToolCall("read_file", json.dumps({"path": "deploy/config.env"}), id="call_read")
        return [
            opening,
            Message("assistant", "Let me read the file.", tool_calls=(call,)),
            Message("tool", text, tool_call_id="call_read", tool_name="read_file"),
        ]
    call = ToolCall(
        "write_file", json.dumps({"path": "deploy/config.env", "content": text}), id="call_write"
    )
    return [
        opening,
        Message("assistant", "I will write the file.", tool_calls=(call,)),
        Message("tool", "written", tool_call_id="call_write", tool_name="write_file"),
    ]


def batches(items: Sequence[Secret]) -> list[list[Secret]]:
    """Items grouped so that no piece of one item's secrets occurs in another's text within a
    batch (greedy; most items land in the first batch)."""
    groups: list[list[Secret]] = []
    texts: list[list[str]] = []
    for item in items:
        pieces = item.pieces()
        for group, group_texts in zip(groups, texts, strict=True):
            if not any(piece in text for piece in pieces for text in group_texts) and not any(
                piece in item.text for other in group for piece in other.pieces()
            ):
                group.append(item)
                group_texts.append(item.text)
                break
        else:
            groups.append([item])
            texts.append([item.text])
    return groups


_JSON_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\([\"\\/])|\\n|\\t|\\r")
_MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def _json_unescape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        if match.group(1):
            return chr(int(match.group(1), 16))
        if match.group(2):
            return match.group(2)
        return {"\\n": "\n", "\\t": "\t", "\\r": "\r"}[match.group(0)]

    return _JSON_ESCAPE.sub(one, text)


def readings(output: str) -> list[str]:
    """The output as written and with each format's escapes undone (twice, for text escaped
    twice, such as JSON inside a tool call's arguments inside a JSONL line)."""
    once = _json_unescape(html.unescape(output))
    twice = _json_unescape(once)
    return [output, once, twice, _MARKDOWN_ESCAPE.sub(r"\1", html.unescape(output))]


@dataclass
class PublicFigures:
    formats: list[str] = field(default_factory=list)
    items: int = 0
    kinds: int = 0
    caught: dict[tuple[str, str, str], bool] = field(default_factory=dict)
    """(item id, format, place) → no piece of the secret left."""
    kind_of: dict[str, str] = field(default_factory=dict)
    controls: int = 0
    false_positives: list[tuple[str, str, str]] = field(default_factory=list)
    """(control id, format, first difference)"""
    seconds: float = 0.0

    def recall(self, keys: Iterable[tuple[str, str, str]] | None = None) -> tuple[int, int]:
        chosen = list(self.caught) if keys is None else list(keys)
        return sum(self.caught[key] for key in chosen), len(chosen)

    def by_kind(self) -> dict[str, tuple[int, int]]:
        """Kind → (items caught everywhere, items): an item counts as caught only when it is
        caught in every format and every place."""
        everywhere: dict[str, bool] = defaultdict(lambda: True)
        for (item, _format, _place), ok in self.caught.items():
            everywhere[item] = everywhere[item] and ok
        counts: Counter[str] = Counter()
        hits: Counter[str] = Counter()
        for item, ok in everywhere.items():
            kind = self.kind_of[item]
            counts[kind] += 1
            hits[kind] += ok
        return {kind: (hits[kind], counts[kind]) for kind in sorted(counts)}

    def items_caught(self) -> tuple[int, int]:
        per_kind = self.by_kind().values()
        return sum(hit for hit, _ in per_kind), sum(total for _, total in per_kind)

    def misses(self) -> list[tuple[str, str, str]]:
        return sorted(key for key, ok in self.caught.items() if not ok)


def _export_all(
    store_home: Path, scratch: Path, redact: bool, sessions: int
) -> dict[str, dict[str, str]]:
    """Format → everything written (under the key ``"*"``); every one of the store's
    ``sessions`` must have been written, or the figure would measure nothing."""
    from hermes_core.exporting import ExporterTraits, ExportRequest, plan_export, run_export
    from hermes_core.plugins import PluginHost
    from hermes_core.store import SessionStore

    host = PluginHost(report=lambda _line: None)
    found: dict[str, dict[str, str]] = {}
    with SessionStore.open(store_home) as store:
        for name, exporter in sorted(host.exporters().items()):
            traits = ExporterTraits.of(exporter)
            folder = scratch / f"{name}-{int(redact)}"
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            output = (
                str(folder)
                if traits.one_file_per_session
                else str(folder / f"export.{exporter.extension}")
            )
            request = ExportRequest(
                format=name, output=output, filter_options={"min_messages": 0}, redact=redact
            )
            report = run_export(plan_export(store, host, request, home=store_home), store, host)
            if report.sessions_written != sessions:
                raise RuntimeError(
                    f"{name}: {report.sessions_written} of {sessions} sessions exported"
                )
            found[name] = {"*": _read_folder(folder)}
            shutil.rmtree(folder, ignore_errors=True)
    return found


def _read_folder(folder: Path) -> str:
    return "\n".join(
        path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.name.startswith("manifest")
    )


def _build_store(home: Path, documents: Sequence[tuple[str, list[Message]]]) -> None:
    from hermes_core.store import SessionStore

    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    with SessionStore.open(home) as store:
        for index, (title, messages) in enumerate(documents):
            started = BASE_TIME + index * 60
            session = store.create_session("cli", title=title, started_at=started)
            stamped = [
                Message(
                    m.role,
                    m.content,
                    timestamp=started + k,
                    tool_calls=m.tool_calls,
                    tool_call_id=m.tool_call_id,
                    tool_name=m.tool_name,
                )
                for k, m in enumerate(messages)
            ]
            store.append_messages(session.id, stamped)
            store.end_session(session.id, "imported", ended_at=started + len(stamped))


def run_public_bench(
    secrets: Sequence[Secret] | None = None, clean: Sequence[Control] | None = None
) -> PublicFigures:
    """Every number of the public-corpus part of figure (r)."""
    started = time.perf_counter()
    items = load_secrets() if secrets is None else list(secrets)
    controls = load_clean() if clean is None else list(clean)
    figures = PublicFigures(items=len(items), kinds=len({i.kind for i in items}))
    figures.kind_of = {item.id: item.kind for item in items}
    scratch = Path(tempfile.mkdtemp(prefix="hermes-redaction-public-"))
    try:
        for number, batch in enumerate(batches(items)):
            for place in PLACES:
                home = scratch / f"store-{number}-{place}"
                _build_store(
                    home,
                    [
                        (f"corpus item {i}", planted_messages(item.text, place))
                        for i, item in enumerate(batch)
                    ],
                )
                outputs = _export_all(home, scratch, redact=True, sessions=len(batch))
                figures.formats = sorted(outputs)
                for name, by_session in outputs.items():
                    views = readings(by_session["*"])
                    for item in batch:
                        leaked = any(piece in view for piece in item.pieces() for view in views)
                        figures.caught[(item.id, name, place)] = not leaked
                shutil.rmtree(home, ignore_errors=True)
        figures.controls = len(controls)
        _false_positives(controls, scratch, figures)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    figures.seconds = time.perf_counter() - started
    return figures


def _false_positives(controls: Sequence[Control], scratch: Path, figures: PublicFigures) -> None:
    """Each clean control in every place, exported with ``--redact``: the sessions hold no
    secret, so any marker is a false positive. When one shows up, the controls of that place
    are exported one by one to name the culprits."""
    for place in PLACES:
        home = scratch / f"clean-{place}"
        _build_store(home, [(f"clean {c.id}", planted_messages(c.text, place)) for c in controls])
        redacted = _export_all(home, scratch, redact=True, sessions=len(controls))
        shutil.rmtree(home, ignore_errors=True)
        if not any(MARKER in by_session["*"] for by_session in redacted.values()):
            continue
        for control in controls:
            _build_store(home, [(f"clean {control.id}", planted_messages(control.text, place))])
            for name, by_session in _export_all(home, scratch, redact=True, sessions=1).items():
                if MARKER in by_session["*"]:
                    figures.false_positives.append((control.id, name, place))
            shutil.rmtree(home, ignore_errors=True)
