"""A small store of realistic sessions for the search tests (imported by name: a module called
``conftest`` resolves to whichever conftest loaded last)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from hermes_hookspecs import Message, ToolCall

from hermes_core.store import SessionStore
from hermes_core.store.protocol import Store

DAY = 86_400.0


@dataclass
class Corpus:
    """Ids of the sessions :func:`search_store` builds, by what they are for."""

    home: Path
    url: str | None = None
    """The store's ``store.url`` when it is not ``home/state.db`` (written to the home's
    ``config.yaml``, so commands run on ``home`` use it too)."""
    ids: dict[str, str] = field(default_factory=dict)
    messages: dict[str, list[int]] = field(default_factory=dict)


def _add(
    store: SessionStore,
    corpus: Corpus,
    name: str,
    turns: list[tuple[str, str]],
    *,
    ago_days: float,
    title: str | None = None,
    source: str = "cli",
    **fields: object,
) -> str:
    started = time.time() - ago_days * DAY
    session = store.create_session(source, title=title, started_at=started, **fields)
    batch = []
    for index, (role, text) in enumerate(turns):
        extra: dict[str, object] = {}
        if role == "assistant" and "run it" in text:
            extra["tool_calls"] = (ToolCall("terminal", '{"command": "make"}', "c1"),)
        if role == "tool":
            extra["tool_name"] = "terminal"
            extra["tool_call_id"] = "c1"
        batch.append(Message(role, text, timestamp=started + index * 10, **extra))  # type: ignore[arg-type]
    corpus.ids[name] = session.id
    corpus.messages[name] = list(store.append_messages(session.id, batch))
    return session.id


def open_corpus_store(corpus: Corpus) -> Store:
    """The corpus's store: ``home/state.db``, or the store at ``corpus.url``."""
    if corpus.url is None:
        return SessionStore.open(corpus.home)
    from hermes_core.plugins import PluginHost
    from hermes_core.store.backends import open_url

    return open_url(corpus.url, host=PluginHost())


def build_corpus(home: Path, url: str | None = None) -> Corpus:
    corpus = Corpus(home, url)
    if url is not None:
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.yaml").write_text(f"store:\n  url: '{url}'\n", encoding="utf-8")
    with open_corpus_store(corpus) as store:
        auth_turns = [("user", "Let us refactor the authentication middleware today")]
        for step in range(1, 20):
            auth_turns.append(("assistant", f"Step {step}: moving session checks, part {step}"))
            auth_turns.append(("user", f"ok, continue with part {step + 1}"))
        auth_turns[21] = ("assistant", "The JWT refresh token rotation is the tricky bit here")
        _add(store, corpus, "auth", auth_turns, ago_days=10, title="Auth refactor plan")
        _add(
            store,
            corpus,
            "title_only",
            [("user", "good morning"), ("assistant", "morning! what shall we do")],
            ago_days=9,
            title="Quarterly budget spreadsheet",
        )
        parent = _add(
            store,
            corpus,
            "project",
            [
                ("user", "deploy the kubernetes cluster for staging"),
                ("assistant", "kubernetes manifests drafted"),
            ],
            ago_days=8,
            title="my project",
        )
        child = store.continue_after_compression(parent)
        corpus.ids["project2"] = child.id
        corpus.messages["project2"] = list(
            store.append_messages(
                child.id,
                [
                    Message("user", "kubernetes kubernetes kubernetes rollout is stuck"),
                    Message("assistant", "rolled back the deployment"),
                ],
            )
        )
        branch = store.create_session(
            "cli", parent_session_id=parent, parent_kind="branch", started_at=time.time() - 7 * DAY
        )
        corpus.ids["branch"] = branch.id
        corpus.messages["branch"] = list(
            store.append_messages(branch.id, [Message("user", "kubernetes on a branch")])
        )
        _add(
            store,
            corpus,
            "archived",
            [("user", "the zebra crossing design"), ("assistant", "zebra stripes noted")],
            ago_days=6,
        )
        store.set_archived([corpus.ids["archived"]], True)
        _add(
            store,
            corpus,
            "tooling",
            [
                ("user", "build the project please"),
                ("assistant", "I will run it now"),
                ("tool", "make: *** [all] Segmentation fault segfault in parser.c line 42"),
                ("assistant", "The build crashed in the parser."),
            ],
            ago_days=5,
        )
        _add(
            store,
            corpus,
            "hostile",
            [
                ("user", "why does my c++ template fail with foo-bar names"),
                ("assistant", "set a.b_c in the config and docker-compose up; 🚀 works"),
            ],
            ago_days=4,
        )
        _add(
            store,
            corpus,
            "chinese",
            [
                ("user", "我们昨天讨论了量子纠缠的实验结果"),
                ("assistant", "是的，量子纠缠实验需要低温环境"),
            ],
            ago_days=3,
        )
        _add(
            store,
            corpus,
            "japanese",
            [("user", "東京でラーメンを食べました"), ("assistant", "ラーメンはおいしいですね")],
            ago_days=2,
            source="telegram",
        )
        _add(
            store,
            corpus,
            "phrases",
            [
                ("user", "python is great but java is verbose"),
                ("assistant", "deployment pipelines and deploying docs"),
                ("user", "only python here"),
            ],
            ago_days=1.5,
        )
        long_turns = [
            ("user" if i % 2 == 0 else "assistant", f"long session message {i} " + "x" * 50)
            for i in range(100)
        ]
        _add(store, corpus, "long", long_turns, ago_days=1)
        delegate = store.create_session(
            "cli",
            parent_session_id=corpus.ids["long"],
            parent_kind="delegate",
            started_at=time.time() - 0.5 * DAY,
        )
        corpus.ids["delegate"] = delegate.id
        store.append_messages(delegate.id, [Message("user", "subagent looking at walrus")])
    return corpus
