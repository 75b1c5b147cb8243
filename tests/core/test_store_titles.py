"""Titles: sanitising and limits (S4), automatic titles (S5), compression lineage (S6)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from store_helpers import RecordingEvents, assistant, user

from hermes_core.store import InvalidTitle, SessionStore, TitleInUse
from hermes_core.store.protocol import Store
from hermes_core.store.titles import MAX_TITLE_LENGTH, sanitize_title


@pytest.fixture
def store(backend_store: Store) -> Store:
    """Every test runs on each backend (SQLite, PostgreSQL)."""
    return backend_store


# ------------------------------------------------------------------ sanitising (S4)


@pytest.mark.parametrize(
    ("raw", "stored"),
    [
        ("plain title", "plain title"),
        ("  padded  ", "padded"),
        ("line one\nline two", "line one line two"),
        ("tab\there", "tab here"),
        ("crlf\r\nend", "crlf end"),
        ("bell\x07 and\x00nul\x1b[31m", "bell andnul[31m"),
        ("del\x7fc1\x85x", "delc1x"),
        ("zero\u200bwidth\u200c\u200d\u200e\u200fjoin", "zerowidthjoin"),
        ("rtl \u202eevil.exe", "rtl evil.exe"),
        ("\ufeffbom first", "bom first"),
        ("isolate\u2066d\u2069", "isolated"),
        ("many    inner   spaces", "many inner spaces"),
        ("emoji 🚀✨ kept", "emoji 🚀✨ kept"),
        ("中文标题 と 日本語 한국어", "中文标题 と 日本語 한국어"),
        ("café naïve Ångström", "café naïve Ångström"),
    ],
)
def test_manual_title_is_sanitised(store: SessionStore, raw: str, stored: str) -> None:
    session = store.create_session()
    assert store.set_title(session.id, raw).title == stored
    assert store.get_session(session.id).title == stored


def test_title_is_stored_in_nfc(store: SessionStore) -> None:
    decomposed = "cafe\u0301"
    session = store.create_session(title=decomposed)
    assert session.title == "caf\u00e9"
    with pytest.raises(TitleInUse):
        store.create_session(title="caf\u00e9")


@pytest.mark.parametrize("raw", ["", "   ", "\u200b\u200b", "\n\t", "\u202e"])
def test_title_that_sanitises_to_nothing_is_refused(store: SessionStore, raw: str) -> None:
    session = store.create_session()
    with pytest.raises(InvalidTitle):
        store.set_title(session.id, raw)
    assert store.get_session(session.id).title is None


def test_sanitize_title_gives_none_for_invisible_input() -> None:
    assert sanitize_title("\u200b \u200f ") is None


# ------------------------------------------------------------------ length (S4)


def test_title_of_exactly_100_characters_is_accepted(store: SessionStore) -> None:
    title = "a" * MAX_TITLE_LENGTH
    assert MAX_TITLE_LENGTH == 100
    session = store.create_session()
    assert store.set_title(session.id, title).title == title
    other = store.create_session(title="b" * 100)
    assert other.title == "b" * 100


def test_title_over_100_characters_is_refused(store: SessionStore) -> None:
    session = store.create_session()
    with pytest.raises(InvalidTitle, match="101"):
        store.set_title(session.id, "a" * 101)
    assert store.get_session(session.id).title is None


def test_create_session_with_title_over_100_characters_is_refused(store: SessionStore) -> None:
    with pytest.raises(InvalidTitle):
        store.create_session(title="x" * 101)
    assert store.count_sessions() == 0


def test_length_is_counted_after_sanitising(store: SessionStore) -> None:
    padded = "\u200b" * 50 + "y" * 100 + "\n" * 20
    assert store.create_session(title=padded).title == "y" * 100
    decomposed = "e\u0301" * 100  # 200 code points, 100 after NFC
    assert store.create_session(title=decomposed).title == "\u00e9" * 100


def test_cjk_and_emoji_titles_count_characters_not_bytes(store: SessionStore) -> None:
    assert store.create_session(title="字" * 100).title == "字" * 100
    assert store.create_session(title="🚀" * 100).title == "🚀" * 100
    with pytest.raises(InvalidTitle):
        store.create_session(title="字" * 101)


def test_untitled_sessions_are_unlimited(store: SessionStore) -> None:
    sessions = [store.create_session() for _ in range(50)]
    assert all(store.get_session(s.id).title is None for s in sessions)


# ------------------------------------------------------------------ uniqueness (S4)


def test_title_in_use_names_the_other_session(store: SessionStore) -> None:
    owner = store.create_session(title="my project")
    other = store.create_session()
    with pytest.raises(TitleInUse, match=owner.id):
        store.set_title(other.id, "my project")
    with pytest.raises(TitleInUse, match=owner.id):
        store.create_session(title="  my\u200b project ")
    assert store.get_session(other.id).title is None


def test_title_in_use_is_an_invalid_title() -> None:
    assert issubclass(TitleInUse, InvalidTitle)


def test_renaming_a_session_to_its_own_title_is_fine(store: SessionStore) -> None:
    session = store.create_session(title="keep me")
    assert store.set_title(session.id, "keep me").title == "keep me"
    assert store.set_title(session.id, "renamed").title == "renamed"
    assert store.create_session(title="keep me").title == "keep me"


def test_set_title_marks_it_manual(store: SessionStore) -> None:
    session = store.create_session()
    assert store.set_title(session.id, "by hand").title_source == "user"


# ------------------------------------------------------------------ queued titles (S4)


def test_title_queued_before_the_session_exists_is_applied_on_create(
    store: SessionStore,
) -> None:
    session_id = "20250101_101010_abcdef"
    store.queue_title(session_id, "early\ntitle")
    session = store.create_session(session_id=session_id)
    assert (session.title, session.title_source) == ("early title", "user")
    other = store.create_session(session_id="20250101_101010_fedcba")
    assert other.title is None


def test_queued_title_is_applied_only_once(store: SessionStore) -> None:
    session_id = "20250101_101010_abcdef"
    store.queue_title(session_id, "once")
    store.create_session(session_id=session_id)
    store.delete_session(session_id)
    assert store.create_session(session_id=session_id).title is None


def test_queue_title_for_an_existing_session_sets_it_now(store: SessionStore) -> None:
    session = store.create_session()
    store.queue_title(session.id, "right away")
    assert store.get_session(session.id).title == "right away"


def test_queued_title_is_checked_when_queued(store: SessionStore) -> None:
    store.create_session(title="taken")
    with pytest.raises(TitleInUse):
        store.queue_title("20250101_101010_abcdef", "taken")
    with pytest.raises(InvalidTitle):
        store.queue_title("20250101_101010_abcdef", "z" * 101)


def test_queueing_a_session_its_own_title_is_fine(store: SessionStore) -> None:
    session = store.create_session(title="same")
    store.queue_title(session.id, "same")
    assert store.get_session(session.id).title == "same"


def test_queued_title_taken_meanwhile_does_not_stop_the_session_from_starting(
    store: SessionStore,
) -> None:
    session_id = "20250101_101010_abcdef"
    store.queue_title(session_id, "wanted")
    thief = store.create_session()
    store.set_title(thief.id, "wanted")
    session = store.create_session(session_id=session_id)
    assert session.title is None
    assert store.get_session(thief.id).title == "wanted"


def test_explicit_title_wins_over_a_queued_one(store: SessionStore) -> None:
    session_id = "20250101_101010_abcdef"
    store.queue_title(session_id, "queued")
    assert store.create_session(session_id=session_id, title="explicit").title == "explicit"
    assert store.create_session(title="queued").title == "queued"


# ------------------------------------------------------------------ automatic titles (S5)


def _first_exchange(store: SessionStore, session_id: str) -> None:
    store.append_message(session_id, user("How do I rotate my SSH keys on the build server?"))
    store.append_message(session_id, assistant("Generate a new key pair, then ..."))


def test_automatic_title_is_generated_once_in_the_background(tmp_path: Path) -> None:
    events = RecordingEvents("Rotating SSH keys on build server")
    with SessionStore.open(tmp_path, events=events) as store:
        session = store.create_session()
        store.append_message(session.id, user("How do I rotate my SSH keys?"))
        store.wait_for_titles()
        assert events.title_calls == []
        store.append_message(session.id, assistant("Generate a new key pair"))
        store.wait_for_titles()
        got = store.get_session(session.id)
        assert (got.title, got.title_source) == ("Rotating SSH keys on build server", "auto")
        assert len(events.title_calls) == 1
        called_for, shown = events.title_calls[0]
        assert called_for == session.id
        assert shown == ["How do I rotate my SSH keys?", "Generate a new key pair"]
        assert events.title_threads[0] is not threading.main_thread()
        assert events.title_threads[0] is not threading.current_thread()

        store.append_messages(session.id, [user("and then?"), assistant("then deploy it")])
        store.append_message(session.id, assistant("more"))
        store.wait_for_titles()
        assert len(events.title_calls) == 1


def test_automatic_title_does_not_block_the_caller(tmp_path: Path) -> None:
    release = threading.Event()
    entered = threading.Event()

    class SlowEvents(RecordingEvents):
        def generate_title(self, session, messages):  # type: ignore[no-untyped-def]
            entered.set()
            assert release.wait(10)
            return "Slow title"

    with SessionStore.open(tmp_path, events=SlowEvents()) as store:
        session = store.create_session()
        _first_exchange(store, session.id)
        assert entered.wait(10)
        # The generator is still blocked, yet the caller got control back and can write.
        assert store.get_session(session.id).title is None
        store.append_message(session.id, user("still typing"))
        release.set()
        store.wait_for_titles()
        assert store.get_session(session.id).title == "Slow title"


def test_exchange_appended_in_one_batch_gets_a_title(tmp_path: Path) -> None:
    events = RecordingEvents("Batch title")
    with SessionStore.open(tmp_path, events=events) as store:
        session = store.create_session()
        store.append_messages(session.id, [user("q"), assistant("a")])
        store.wait_for_titles()
        assert store.get_session(session.id).title == "Batch title"
        assert len(events.title_calls) == 1


def test_manual_title_is_never_replaced_by_an_automatic_one(tmp_path: Path) -> None:
    events = RecordingEvents("Automatic")
    with SessionStore.open(tmp_path, events=events) as store:
        session = store.create_session()
        store.set_title(session.id, "Chosen by hand")
        _first_exchange(store, session.id)
        store.wait_for_titles()
        got = store.get_session(session.id)
        assert (got.title, got.title_source) == ("Chosen by hand", "user")
        assert events.title_calls == []
        titled = store.create_session(title="Given at start")
        _first_exchange(store, titled.id)
        store.wait_for_titles()
        assert store.get_session(titled.id).title == "Given at start"
        assert events.title_calls == []


def test_title_set_while_generating_wins(tmp_path: Path) -> None:
    entered = threading.Event()
    release = threading.Event()

    class SlowEvents(RecordingEvents):
        def generate_title(self, session, messages):  # type: ignore[no-untyped-def]
            entered.set()
            assert release.wait(10)
            return "Too late"

    with SessionStore.open(tmp_path, events=SlowEvents()) as store:
        session = store.create_session()
        _first_exchange(store, session.id)
        assert entered.wait(10)
        store.set_title(session.id, "Manual meanwhile")
        release.set()
        store.wait_for_titles()
        got = store.get_session(session.id)
        assert (got.title, got.title_source) == ("Manual meanwhile", "user")


def test_long_automatic_title_is_cut_to_fit(tmp_path: Path) -> None:
    long_title = " ".join(["word"] * 60)  # 299 characters
    with SessionStore.open(tmp_path, events=RecordingEvents(long_title)) as store:
        session = store.create_session()
        _first_exchange(store, session.id)
        store.wait_for_titles()
        title = store.get_session(session.id).title
        assert title is not None
        assert 0 < len(title) <= MAX_TITLE_LENGTH
        assert title.startswith("word word")


def test_automatic_title_is_sanitised(tmp_path: Path) -> None:
    events = RecordingEvents("  Fix\u200b the\nbuild\u202e ")
    with SessionStore.open(tmp_path, events=events) as store:
        session = store.create_session()
        _first_exchange(store, session.id)
        store.wait_for_titles()
        assert store.get_session(session.id).title == "Fix the build"


def test_colliding_automatic_title_gets_a_numbered_suffix_not_a_hash(tmp_path: Path) -> None:
    events = RecordingEvents("Debugging the parser")
    with SessionStore.open(tmp_path, events=events) as store:
        titles = []
        for _ in range(3):
            session = store.create_session()
            _first_exchange(store, session.id)
            store.wait_for_titles()
            titles.append(store.get_session(session.id).title)
        assert titles == [
            "Debugging the parser",
            "Debugging the parser (2)",
            "Debugging the parser (3)",
        ]
        assert not any("#" in title for title in titles if title)


def test_colliding_long_automatic_title_still_fits(tmp_path: Path) -> None:
    proposal = "q" * 100
    with SessionStore.open(tmp_path, events=RecordingEvents(proposal)) as store:
        titles = []
        for _ in range(2):
            session = store.create_session()
            _first_exchange(store, session.id)
            store.wait_for_titles()
            titles.append(store.get_session(session.id).title)
        assert titles[0] == proposal
        assert titles[1] is not None and titles[1].endswith(" (2)")
        assert len(titles[1]) <= MAX_TITLE_LENGTH


def test_failing_title_generator_leaves_the_session_untitled(tmp_path: Path) -> None:
    events = RecordingEvents(RuntimeError("model unavailable"))
    with SessionStore.open(tmp_path, events=events) as store:
        session = store.create_session()
        _first_exchange(store, session.id)
        store.wait_for_titles()
        assert len(events.title_calls) == 1
        assert store.get_session(session.id).title is None
        store.append_messages(session.id, [user("next"), assistant("reply")])
        store.wait_for_titles()
        assert len(events.title_calls) == 1
        assert store.get_session(session.id).message_count == 4


@pytest.mark.parametrize("answer", [None, "", "   \u200b"])
def test_empty_automatic_title_leaves_the_session_untitled(
    tmp_path: Path, answer: str | None
) -> None:
    with SessionStore.open(tmp_path, events=RecordingEvents(answer)) as store:
        session = store.create_session()
        _first_exchange(store, session.id)
        store.wait_for_titles()
        assert store.get_session(session.id).title is None


def test_no_events_means_no_automatic_title(store: SessionStore) -> None:
    session = store.create_session()
    _first_exchange(store, session.id)
    store.wait_for_titles()
    assert store.get_session(session.id).title is None


# ------------------------------------------------------------------ lineage (S6)


def test_compression_continuations_get_numbered_titles(store: SessionStore) -> None:
    original = store.create_session(title="my project")
    second = store.continue_after_compression(original.id)
    third = store.continue_after_compression(second.id)
    assert second.title == "my project #2"
    assert third.title == "my project #3"
    assert second.title_source == third.title_source == "lineage"
    assert store.get_session(original.id).title == "my project"


def test_continuing_an_older_member_takes_the_next_free_number(store: SessionStore) -> None:
    original = store.create_session(title="my project")
    second = store.continue_after_compression(original.id)
    store.continue_after_compression(second.id)
    store.reopen_session(second.id)
    fourth = store.continue_after_compression(second.id)
    assert fourth.title == "my project #4"
    store.reopen_session(original.id)
    assert store.continue_after_compression(original.id).title == "my project #5"


def test_numbered_title_of_a_99_character_base_still_fits(store: SessionStore) -> None:
    base = "t" * 99
    original = store.create_session(title=base)
    second = store.continue_after_compression(original.id)
    third = store.continue_after_compression(second.id)
    for child, number in ((second, 2), (third, 3)):
        assert child.title is not None
        assert len(child.title) <= MAX_TITLE_LENGTH
        assert child.title.endswith(f" #{number}")


def test_continuing_a_99_character_original_twice_does_not_collide(store: SessionStore) -> None:
    base = "t" * 99
    original = store.create_session(title=base)
    second = store.continue_after_compression(original.id)
    store.reopen_session(original.id)
    again = store.continue_after_compression(original.id)
    assert again.title is not None and second.title is not None
    assert again.title != second.title
    assert len(again.title) <= MAX_TITLE_LENGTH
    assert again.title.endswith(" #3")


def test_hash_numbers_are_not_used_for_anything_but_lineage(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path, events=RecordingEvents("my project")) as store:
        original = store.create_session(title="my project")
        store.continue_after_compression(original.id)
        other = store.create_session()
        _first_exchange(store, other.id)
        store.wait_for_titles()
        assert store.get_session(other.id).title == "my project (2)"


def test_emoji_joined_with_zero_width_joiners_stay_whole() -> None:
    assert sanitize_title("dev 👩\u200d💻 notes") == "dev 👩\u200d💻 notes"
    assert sanitize_title("not\u200djoined") == "notjoined"
