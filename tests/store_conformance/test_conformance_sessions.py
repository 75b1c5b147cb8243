"""Sessions: create, read back, resolve, end, titles, lineage, pins, archive, usage, events."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest
from conformance_types import EventLog, StoreFactory
from hermes_hookspecs import Message, Session

from hermes_core.store.errors import (
    AmbiguousSessionId,
    InvalidTitle,
    SessionNotFound,
    TitleInUse,
)
from hermes_core.store.protocol import Store


def test_a_created_session_reads_back_with_its_fields_and_fires_started(
    store: Store, events: EventLog
) -> None:
    session = store.create_session(
        "telegram",
        started_at=1_700_000_000.0,
        gateway=True,
        system_prompt="You are Hermes.",
        model_config={"temperature": 0.2},
        metadata={"note": "kept"},
        user_id="u-1",
        model="gpt-x",
        cwd="/srv/app",
        chat_id="c-9",
        chat_type="group",
    )
    again = store.get_session(session.id)
    assert again == session
    assert again.source == "telegram"
    assert again.started_at == 1_700_000_000.0
    assert len(session.id.rsplit("_", 1)[-1]) == 8  # gateway ids end in 8 hex digits
    assert again.system_prompt == "You are Hermes."
    assert again.model_config == {"temperature": 0.2}
    assert again.metadata == {"note": "kept"}
    assert (again.user_id, again.model, again.cwd) == ("u-1", "gpt-x", "/srv/app")
    assert (again.chat_id, again.chat_type) == ("c-9", "group")
    assert again.ended_at is None and again.title is None
    assert events.started == [session.id]


def test_a_given_id_is_kept_and_an_unknown_id_is_not_found(store: Store) -> None:
    session = store.create_session("cli", session_id="20260101_000000_abcdef")
    assert session.id == "20260101_000000_abcdef"
    with pytest.raises(SessionNotFound):
        store.get_session("20260101_000000_000000")


def test_sessions_persist_across_reopening(store_factory: StoreFactory) -> None:
    first = store_factory()
    session = first.create_session("cli", title="persisted")
    first.append_message(session.id, Message("user", "still here"))
    first.close()
    second = store_factory()
    assert second.get_session(session.id).title == "persisted"
    assert [m.content for m in second.messages(session.id)] == ["still here"]


def test_resolve_takes_an_id_a_unique_prefix_or_a_title(store: Store) -> None:
    a = store.create_session("cli", session_id="20260101_000000_aaaaaa", title="alpha plan")
    store.create_session("cli", session_id="20260101_000000_aaabbb")
    assert store.resolve(a.id) == a.id
    assert store.resolve("20260101_000000_aaaa") == a.id
    assert store.resolve("alpha plan") == a.id
    with pytest.raises(AmbiguousSessionId):
        store.resolve("20260101_000000_aa")
    with pytest.raises(SessionNotFound):
        store.resolve("no such thing")
    with pytest.raises(SessionNotFound):
        store.resolve("   ")


def test_ending_fires_ended_once_and_keeps_the_first_end(store: Store, events: EventLog) -> None:
    session = store.create_session("cli")
    ended = store.end_session(session.id, "user_exit", ended_at=1_800_000_000.0)
    assert (ended.ended_at, ended.end_reason) == (1_800_000_000.0, "user_exit")
    store.end_session(session.id, "timeout")
    assert store.get_session(session.id).end_reason == "user_exit"
    assert events.ended == [(session.id, "user_exit")]
    store.reopen_session(session.id)
    reopened = store.get_session(session.id)
    assert reopened.ended_at is None and reopened.end_reason is None
    with pytest.raises(SessionNotFound):
        store.end_session("20260101_000000_000000", "user_exit")


def test_titles_are_sanitised_unique_and_several_sessions_may_have_none(store: Store) -> None:
    a = store.create_session("cli")
    b = store.create_session("cli")
    untitled = store.create_session("cli")
    assert store.set_title(a.id, "  my   project ").title == "my project"
    with pytest.raises(TitleInUse):
        store.set_title(b.id, "my project")
    with pytest.raises(InvalidTitle):
        store.set_title(b.id, "   ")
    with pytest.raises(InvalidTitle):
        store.set_title(b.id, "x" * 101)
    assert store.set_title(a.id, "my project").title == "my project"  # its own title again
    assert store.get_session(b.id).title is None
    assert store.get_session(untitled.id).title is None


def test_a_queued_title_waits_for_its_session(store: Store) -> None:
    store.queue_title("20260301_120000_c0ffee", "named in advance")
    session = store.create_session("cli", session_id="20260301_120000_c0ffee")
    assert session.title == "named in advance"
    existing = store.create_session("cli")
    store.queue_title(existing.id, "set at once")
    assert store.get_session(existing.id).title == "set at once"


def test_automatic_titles_never_replace_a_title_and_get_a_suffix_when_taken(store: Store) -> None:
    a = store.create_session("cli", title="deploy notes")
    b = store.create_session("cli")
    assert store.apply_automatic_title(a.id, "something else") is None
    assert store.apply_automatic_title(b.id, "deploy notes") == "deploy notes (2)"
    assert store.get_session(b.id).title == "deploy notes (2)"


def test_the_first_exchange_asks_for_an_automatic_title(
    store: Store, events: EventLog
) -> None:
    events.title = "Fixing the flaky test"
    session = store.create_session("cli")
    store.append_messages(
        session.id, [Message("user", "the CI test is flaky"), Message("assistant", "on it")]
    )
    store.wait_for_titles(timeout=10)
    assert events.titles == [session.id]
    assert store.get_session(session.id).title == "Fixing the flaky test"


def test_compression_continues_a_lineage_with_numbered_titles(
    store: Store, events: EventLog
) -> None:
    root = store.create_session("cli", title="my project", cwd="/w", model="m1")
    second = store.continue_after_compression(root.id)
    third = store.continue_after_compression(second.id)
    assert store.get_session(root.id).end_reason == "compression"
    assert (second.title, third.title) == ("my project #2", "my project #3")
    assert (second.parent_session_id, second.parent_kind) == (root.id, "compression")
    assert (second.cwd, second.model) == ("/w", "m1")
    assert store.resolve("my project") == third.id  # a title means the lineage's newest
    assert store.resolve("my project #2") == second.id
    assert store.compression_root(third.id) == root.id
    assert store.compression_lineage(second.id) == [root.id, second.id, third.id]
    assert events.started == [root.id, second.id, third.id]
    assert events.ended == [(root.id, "compression"), (second.id, "compression")]


def test_delegates_are_children_of_their_parent(store: Store) -> None:
    parent = store.create_session("cli")
    first = store.create_session(
        "cli", parent_session_id=parent.id, parent_kind="delegate", started_at=1.0
    )
    grandchild = store.create_session(
        "cli", parent_session_id=first.id, parent_kind="delegate", started_at=2.0
    )
    second = store.create_session(
        "cli", parent_session_id=parent.id, parent_kind="delegate", started_at=3.0
    )
    branch = store.create_session("cli", parent_session_id=parent.id, parent_kind="branch")
    assert store.delegate_children(parent.id) == (first.id, second.id)
    assert sorted(store.delegate_tree(parent.id)) == sorted(
        [parent.id, first.id, grandchild.id, second.id]
    )
    assert branch.id not in store.delegate_tree(parent.id)
    assert store.child_sessions(parent.id) == [
        (first.id, "delegate"),
        (second.id, "delegate"),
        (branch.id, "branch"),
    ]
    assert store.child_sessions(first.id) == [(grandchild.id, "delegate")]
    assert store.child_sessions(second.id) == []


def test_pins_and_archive_flags_count_only_changes(store: Store) -> None:
    a = store.create_session("cli")
    b = store.create_session("cli")
    assert store.set_pinned([a.id, b.id], True) == 2
    assert store.set_pinned([a.id], True) == 0
    assert store.set_pinned([b.id], False) == 1
    assert (store.get_session(a.id).pinned, store.get_session(b.id).pinned) == (True, False)
    assert store.set_archived([a.id], True) == 1
    assert store.get_session(a.id).archived
    assert store.set_archived([a.id], False) == 1
    assert store.set_pinned(["20260101_000000_000000"], True) == 0


def test_usage_adds_up_and_a_missing_cost_stays_unknown(store: Store) -> None:
    session = store.create_session("cli")
    store.record_usage(session.id, input_tokens=100, output_tokens=20)
    store.record_usage(
        session.id, input_tokens=5, output_tokens=1, cost_estimated_usd=0.25, billing_provider="p"
    )
    store.record_usage(session.id, cost_estimated_usd=0.5)
    again = store.get_session(session.id)
    assert (again.input_tokens, again.output_tokens) == (105, 21)
    assert again.cost_estimated_usd == pytest.approx(0.75)
    assert again.cost_actual_usd is None
    assert again.billing_provider == "p"
    with pytest.raises(SessionNotFound):
        store.record_usage("20260101_000000_000000", input_tokens=1)


def test_creating_refuses_a_taken_id_an_unknown_field_and_a_bad_parent(store: Store) -> None:
    store.create_session("cli", session_id="20260101_000000_abcdef")
    with pytest.raises(ValueError, match="already exists"):
        store.create_session("cli", session_id="20260101_000000_abcdef")
    with pytest.raises(TypeError, match="colour"):
        store.create_session("cli", colour="red")
    with pytest.raises(ValueError):
        store.create_session("cli", parent_session_id="20260101_000000_abcdef")
    with pytest.raises(SessionNotFound):
        store.create_session(
            "cli", parent_session_id="20990101_000000_ffffff", parent_kind="delegate"
        )
    assert store.count_sessions() == 1


def test_a_shared_system_prompt_outlives_the_sessions_deleted_before_its_last(
    store: Store,
) -> None:
    prompt = "You are Hermes. " * 50
    first = store.create_session("cli", system_prompt=prompt)
    second = store.create_session("cli", system_prompt=prompt)
    other = store.create_session("cli", system_prompt="Something else")
    store.delete_session(first.id)
    assert store.get_session(second.id).system_prompt == prompt
    store.delete_session(second.id)
    assert store.get_session(other.id).system_prompt == "Something else"
    third = store.create_session("cli", system_prompt=prompt)
    assert store.get_session(third.id).system_prompt == prompt


def test_ending_without_a_time_uses_now_and_a_reopened_session_ends_again(
    store: Store, events: EventLog
) -> None:
    session = store.create_session("cli")
    before = time.time()
    ended = store.end_session(session.id, "user_exit")
    assert ended.ended_at is not None and before <= ended.ended_at <= time.time()
    store.reopen_session(session.id)
    assert store.get_session(session.id).is_active
    assert store.end_session(session.id, "timeout").end_reason == "timeout"
    assert events.ended == [(session.id, "user_exit"), (session.id, "timeout")]


def test_a_continuation_ends_its_parent_keeps_its_messages_and_carries_on_its_identity(
    store: Store,
) -> None:
    parent = store.create_session(
        "telegram",
        gateway=True,
        title="chat",
        system_prompt="be brief",
        model="m1",
        model_config={"t": 1},
        cwd="/w",
        chat_id="c1",
        session_key="k1",
    )
    store.append_messages(
        parent.id, [Message("user", "one"), Message("assistant", "two"), Message("user", "3")]
    )
    child = store.continue_after_compression(parent.id)
    ended = store.get_session(parent.id)
    assert (ended.end_reason, ended.message_count) == ("compression", 3)
    assert ended.ended_at is not None
    assert (child.parent_session_id, child.parent_kind) == (parent.id, "compression")
    assert [m.content for m in store.messages(parent.id)] == ["one", "two", "3"]
    assert child.is_active and child.message_count == 0
    assert (child.source, child.model, child.cwd, child.chat_id, child.session_key) == (
        "telegram", "m1", "/w", "c1", "k1",
    )  # fmt: skip
    assert (child.system_prompt, child.model_config) == ("be brief", {"t": 1})
    assert len(child.id.rsplit("_", 1)[1]) == 8
    finished = store.create_session("cli", title="done already")
    store.end_session(finished.id, "user_exit")
    late = store.continue_after_compression(finished.id)
    assert store.get_session(finished.id).end_reason == "user_exit"
    assert late.parent_kind == "compression"
    untitled = store.create_session("cli")
    untitled_child = store.continue_after_compression(untitled.id)
    assert (untitled_child.title, untitled_child.parent_session_id) == (None, untitled.id)


def test_lineage_numbers_skip_taken_ones_follow_parent_links_and_fit_100_characters(
    store: Store,
) -> None:
    original = store.create_session("cli", title="my project")
    second = store.continue_after_compression(original.id)
    store.continue_after_compression(second.id)
    store.reopen_session(second.id)
    assert store.continue_after_compression(second.id).title == "my project #4"
    store.reopen_session(original.id)
    assert store.continue_after_compression(original.id).title == "my project #5"

    fix = store.create_session("cli", title="Fix issue")
    unrelated = store.create_session("cli", title="Fix issue #3")  # a person's title
    fixed = store.continue_after_compression(fix.id)
    assert fixed.title == "Fix issue #4"
    assert store.resolve("Fix issue") == fixed.id
    assert store.resolve("Fix issue #3") == unrelated.id

    long = store.create_session("cli", title="t" * 99)
    long_second = store.continue_after_compression(long.id)
    store.reopen_session(long.id)
    long_again = store.continue_after_compression(long.id)
    for child, number in ((long_second, 2), (long_again, 3)):
        assert child.title is not None and len(child.title) <= 100
        assert child.title.endswith(f" #{number}")


class _ScriptedTitles(EventLog):
    """Answers the title request with ``answer`` (raising it when it is an exception), after
    ``release`` is set when one is given."""

    def __init__(
        self, answer: str | Exception | None, release: threading.Event | None = None
    ) -> None:
        super().__init__()
        self.answer = answer
        self.entered = threading.Event()
        self.release = release

    def generate_title(self, session: Session, messages: Sequence[Message]) -> str | None:
        self.titles.append(session.id)
        self.entered.set()
        if self.release is not None:
            assert self.release.wait(10)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def _first_exchange(store: Store, session_id: str) -> None:
    store.append_message(session_id, Message("user", "How do I rotate my SSH keys?"))
    store.append_message(session_id, Message("assistant", "Generate a new key pair, then ..."))


@pytest.mark.parametrize("answer", [RuntimeError("model unavailable"), None, "", "   \u200b"])
def test_a_failing_or_empty_title_generator_leaves_the_session_untitled_and_is_asked_once(
    store_factory: StoreFactory, answer: str | Exception | None
) -> None:
    events = _ScriptedTitles(answer)
    store = store_factory(events)
    session = store.create_session("cli")
    _first_exchange(store, session.id)
    store.wait_for_titles(timeout=10)
    store.append_messages(session.id, [Message("user", "next"), Message("assistant", "reply")])
    store.wait_for_titles(timeout=10)
    assert events.titles == [session.id]
    got = store.get_session(session.id)
    assert (got.title, got.message_count) == (None, 4)


def test_a_title_set_while_the_generator_runs_wins(store_factory: StoreFactory) -> None:
    release = threading.Event()
    events = _ScriptedTitles("Too late", release)
    store = store_factory(events)
    session = store.create_session("cli")
    _first_exchange(store, session.id)
    assert events.entered.wait(10)
    store.set_title(session.id, "Manual meanwhile")
    release.set()
    store.wait_for_titles(timeout=10)
    got = store.get_session(session.id)
    assert (got.title, got.title_source) == ("Manual meanwhile", "user")


def test_automatic_titles_are_sanitised_cut_to_fit_and_never_take_a_lineage_number(
    store_factory: StoreFactory,
) -> None:
    titles = []
    for proposal in ("  Fix\u200b the\nbuild\u202e ", " ".join(["word"] * 60), "q" * 100, "q" * 100):
        store = store_factory(_ScriptedTitles(proposal))
        session = store.create_session("cli")
        _first_exchange(store, session.id)
        store.wait_for_titles(timeout=10)
        got = store.get_session(session.id)
        assert got.title_source == "auto"
        titles.append(got.title)
    assert titles[0] == "Fix the build"
    assert titles[1] is not None and titles[1].startswith("word word") and len(titles[1]) <= 100
    assert titles[2] == "q" * 100
    assert titles[3] is not None and titles[3].endswith(" (2)") and len(titles[3]) <= 100

    store = store_factory(_ScriptedTitles("my project"))
    original = store.create_session("cli", title="my project")
    store.continue_after_compression(original.id)
    other = store.create_session("cli")
    _first_exchange(store, other.id)
    store.wait_for_titles(timeout=10)
    assert store.get_session(other.id).title == "my project (2)"


class _SeenByTheTitler(EventLog):
    """Remembers the session and the messages the title hook was given."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[Session, list[str]]] = []

    def generate_title(self, session: Session, messages: Sequence[Message]) -> str | None:
        self.seen.append((session, [m.content for m in messages]))
        return "Seen"


def test_the_title_hook_sees_the_whole_session_and_its_first_six_messages(
    store_factory: StoreFactory,
) -> None:
    events = _SeenByTheTitler()
    store = store_factory(events)
    session = store.create_session("cli", system_prompt="You are Hermes.", model="m1")
    batch = [Message("user" if i % 2 == 0 else "assistant", f"turn {i}") for i in range(8)]
    store.append_messages(session.id, batch)
    store.wait_for_titles(timeout=10)
    [(seen, contents)] = events.seen
    assert (seen.id, seen.system_prompt, seen.model, seen.message_count) == (
        session.id, "You are Hermes.", "m1", 8,
    )  # fmt: skip
    assert contents == [f"turn {i}" for i in range(6)]
