"""Selection by the filters of SPEC F1, listing order, counts and the export order."""

from __future__ import annotations

from hermes_hookspecs import Message

from hermes_core.selection.filters import SessionFilter
from hermes_core.store.protocol import Store


def _fixture(store: Store) -> dict[str, str]:
    made: dict[str, str] = {}
    specs = [
        ("old_cli", "cli", 1_000.0, {"model": "claude-x", "cwd": "/home/ana/api"}),
        ("mid_tg", "telegram", 2_000.0, {"model": "gpt-y", "user_id": "u7"}),
        ("new_cli", "cli", 3_000.0, {"model": "claude-z", "cwd": "/home/ana/web"}),
    ]
    for name, source, started, fields in specs:
        session = store.create_session(source, started_at=started, title=name, **fields)
        store.append_messages(
            session.id, [Message("user", f"hello {name}", timestamp=started + 10)]
        )
        made[name] = session.id
    store.end_session(made["old_cli"], "user_exit", ended_at=1_100.0)
    store.end_session(made["mid_tg"], "timeout", ended_at=2_100.0)
    delegate = store.create_session(
        "cli", parent_session_id=made["new_cli"], parent_kind="delegate", started_at=3_050.0
    )
    made["delegate"] = delegate.id
    return made


def _ids(sessions: list) -> list[str]:  # type: ignore[type-arg]
    return [s.id for s in sessions]


def test_filters_narrow_the_selection(store: Store) -> None:
    made = _fixture(store)
    everything = store.select_sessions()
    assert _ids(everything) == [made["delegate"], made["new_cli"], made["mid_tg"], made["old_cli"]]
    assert _ids(store.select_sessions(SessionFilter(source="telegram"))) == [made["mid_tg"]]
    assert set(_ids(store.select_sessions(SessionFilter(model="CLAUDE")))) == {
        made["old_cli"],
        made["new_cli"],
    }
    assert _ids(store.select_sessions(SessionFilter(cwd="/home/ana/api"))) == [made["old_cli"]]
    assert _ids(store.select_sessions(SessionFilter(ended_only=True), newest_first=False)) == [
        made["old_cli"],
        made["mid_tg"],
    ]
    assert _ids(store.select_sessions(SessionFilter(end_reason="timeout"))) == [made["mid_tg"]]
    assert _ids(store.select_sessions(SessionFilter(user="u7"))) == [made["mid_tg"]]
    assert _ids(store.select_sessions(SessionFilter(older_than=1_500.0))) == [made["old_cli"]]
    assert made["delegate"] not in _ids(
        store.select_sessions(SessionFilter(include_delegates=False))
    )
    assert _ids(store.select_sessions(SessionFilter(session_ids=()))) == []
    assert _ids(store.select_sessions(limit=2)) == [made["delegate"], made["new_cli"]]
    assert store.count_sessions() == 4
    assert store.count_sessions(SessionFilter(source="cli")) == 3
    assert _ids(store.iter_selected(SessionFilter(title="mid"))) == [made["mid_tg"]]  # type: ignore[arg-type]


def test_listing_puts_pinned_sessions_first_and_hides_archived_ones_when_asked(
    store: Store,
) -> None:
    made = _fixture(store)
    store.set_pinned([made["old_cli"]], True)
    store.set_archived([made["mid_tg"]], True)
    listed = store.list_sessions(SessionFilter(include_archived=False), limit=1)
    assert _ids(listed) == [made["old_cli"], made["delegate"]]
    assert made["mid_tg"] not in _ids(store.list_sessions(SessionFilter(include_archived=False)))
    pinned_first = store.select_sessions(pinned_first=True)
    assert pinned_first[0].id == made["old_cli"]


def test_exports_list_parents_before_their_children(store: Store) -> None:
    parent = store.create_session("cli", started_at=5.0)
    # A child that started before its parent (a restore, a clock set back) still comes after.
    child = store.create_session(
        "cli", started_at=1.0, parent_session_id=parent.id, parent_kind="branch"
    )
    alone = store.create_session("cli", started_at=3.0)
    order = list(store.iter_parents_first(SessionFilter()))
    assert order == [alone.id, parent.id, child.id]
