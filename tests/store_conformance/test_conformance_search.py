"""Search through ``session_search`` and the browse rows: both read the store only through
its protocol, so a backend that passes these serves the agent tool and the picker."""

from __future__ import annotations

from hermes_hookspecs import Message

from hermes_core.search import MATCH_END, MATCH_START, session_search
from hermes_core.search.typeahead import browse_rows
from hermes_core.store.protocol import Store


def _talk(store: Store, title: str | None, *texts: str, source: str = "cli") -> str:
    session = store.create_session(source, title=title)
    store.append_messages(
        session.id,
        [Message("user" if i % 2 == 0 else "assistant", text) for i, text in enumerate(texts)],
    )
    return session.id


def test_discovery_finds_words_phrases_or_not_and_prefixes(store: Store) -> None:
    docker = _talk(store, None, "how do I deploy with docker compose", "use docker compose up")
    kube = _talk(store, None, "kubernetes rollout is stuck", "check the kubernetes events")
    both = _talk(store, None, "docker images on kubernetes", "push them to the registry")

    def found(query: str) -> set[str]:
        payload = session_search(store, query=query)
        assert "error" not in payload, payload
        return {r["session_id"] for r in payload["results"]}

    assert found("docker") == {docker, both}
    assert found("docker kubernetes") == {both}
    assert found('"compose up"') == {docker}
    assert found("docker OR rollout") == {docker, kube, both}
    assert found("docker NOT kubernetes") == {docker}
    assert found("kube*") == {kube, both}
    assert found("zebra") == set()
    hostile = session_search(store, query='docker" AND (')
    assert "error" not in hostile


def test_results_are_highlighted_and_read_and_scroll_forms_work(store: Store) -> None:
    session_id = _talk(
        store, "auth refactor", *[f"step {i} of the jwt migration" for i in range(30)]
    )
    payload = session_search(store, query="jwt")
    [result] = payload["results"]
    assert result["session_id"] == session_id
    assert MATCH_START + "jwt" + MATCH_END in result["snippet"]
    assert any(m["match"] for m in result["messages"])
    read = session_search(store, session_id="auth refactor")
    assert read["session_id"] == session_id and read["message_count"] == 30
    anchor = result["match_message_id"]
    scrolled = session_search(store, session_id=session_id, around_message_id=anchor, window=2)
    assert anchor in [m["id"] for m in scrolled["messages"]]
    assert len(scrolled["messages"]) <= 5


def test_cjk_text_is_found_as_a_substring(store: Store) -> None:
    found = _talk(store, None, "我们讨论了量子纠缠的实验", "好的")
    _talk(store, None, "nothing in chinese here")
    for query in ("量子纠缠", "纠缠"):
        payload = session_search(store, query=query)
        assert [r["session_id"] for r in payload["results"]] == [found], query


def test_a_title_that_names_the_query_comes_first_and_lineages_appear_once(store: Store) -> None:
    named = _talk(store, "billing export", "we need to redo it")
    _talk(store, None, "the billing export failed again", "billing export retried")
    root = store.create_session("cli", title="parser work")
    store.append_message(root.id, Message("user", "the tokenizer drops commas"))
    child = store.continue_after_compression(root.id)
    store.append_message(child.id, Message("user", "tokenizer fixed, commas kept"))
    payload = session_search(store, query="billing export")
    assert payload["results"][0]["session_id"] == named
    assert payload["results"][0]["matched"] == "title"
    lineage = session_search(store, query="tokenizer")
    assert [r["lineage_id"] for r in lineage["results"]] == [root.id]


def test_browse_lists_recent_sessions_and_the_picker_matches_titles_and_text(store: Store) -> None:
    older = _talk(store, "auth refactor plan", "start")
    newer = _talk(store, None, "the walrus migration")
    archived = _talk(store, "zebra notes", "zebra")
    store.set_archived([archived], True)
    browse = session_search(store)
    assert [s["session_id"] for s in browse["sessions"]] == [newer, older]
    assert [r.session_id for r in browse_rows(store, "")] == [newer, older]
    assert [r.session_id for r in browse_rows(store, "auth ref")] == [older]
    assert [(r.session_id, r.matched) for r in browse_rows(store, "walrus")] == [
        (newer, "content")
    ]
    assert browse_rows(store, "zebra") == []


def test_a_cjk_query_naming_a_title_surfaces_that_session(store: Store) -> None:
    named = _talk(store, "量子纠缠实验", "hello", "hi")
    other = _talk(store, None, "量子纠缠 is in this message")
    payload = session_search(store, query="量子纠缠")
    assert [r["session_id"] for r in payload["results"]] == [named, other]
    assert payload["results"][0]["matched"] == "title"
    assert payload["results"][0]["snippet"] == f"title: {MATCH_START}量子纠缠{MATCH_END}实验"


def test_a_spaced_star_is_a_prefix_and_words_side_by_side_bind_tighter_than_not(
    store: Store,
) -> None:
    deploying = _talk(store, None, "deploying the service")
    _talk(store, None, "alpha beta here")
    alpha = _talk(store, None, "alpha alone")
    _talk(store, None, "beta alone")

    def found(query: str) -> set[str]:
        payload = session_search(store, query=query)
        assert "error" not in payload, payload
        return {r["session_id"] for r in payload["results"]}

    assert found("deploy *") == found("deploy*") == {deploying}
    assert found("alpha NOT beta alpha") == {alpha}  # alpha NOT (beta alpha)
    assert found("alpha NOT alpha beta") == {alpha}  # alpha NOT (alpha beta)


def test_snippets_mark_a_phrase_as_one_span_and_only_what_matched(store: Store) -> None:
    dated = _talk(store, None, "released on 2024-01-05 at noon, 2024 was a good year")
    phrase = _talk(store, None, "compose something else, then compose up again")
    either = _talk(store, None, "beta and gamma only")

    def snippet_of(query: str, session_id: str) -> str:
        payload = session_search(store, query=query)
        [result] = [r for r in payload["results"] if r["session_id"] == session_id]
        return str(result["snippet"])

    marked = f"{MATCH_START}2024-01-05{MATCH_END}"
    assert marked in snippet_of("2024-01-05", dated)
    assert snippet_of("2024-01-05", dated).count(MATCH_START) == 1  # 2024 alone is no match
    assert snippet_of('"compose up"', phrase).count(MATCH_START) == 1
    assert f"{MATCH_START}compose up{MATCH_END}" in snippet_of('"compose up"', phrase)
    assert snippet_of("alpha beta OR gamma", either) == f"beta and {MATCH_START}gamma{MATCH_END} only"


def test_a_phrase_of_no_words_drops_out_beside_words_and_matches_nothing_alone(
    store: Store,
) -> None:
    deploy = _talk(store, None, "deploy the rocket 🚀 now")
    _talk(store, None, "nothing else")
    for query in ("deploy 🚀", 'deploy " "', 'deploy OR "-"', 'deploy NOT " "'):
        payload = session_search(store, query=query)
        assert [r["session_id"] for r in payload["results"]] == [deploy], query
        assert "interpreted_as" not in payload, query  # read as typed, not retried
    for query in ('deploy AND " "', '" " NOT deploy'):
        payload = session_search(store, query=query)
        assert payload["results"] == [] and "interpreted_as" not in payload, query


def test_accents_are_folded_in_the_text_and_in_the_query(store: Store) -> None:
    cv = _talk(store, None, "my Résumé for the café in Zürich")
    _talk(store, None, "nothing else here")
    for query in ("resume", "RÉSUMÉ", "cafe", "café", "zurich", "zür*", '"resume for"'):
        payload = session_search(store, query=query)
        assert [r["session_id"] for r in payload["results"]] == [cv], query
    [result] = session_search(store, query="resume")["results"]
    assert f"{MATCH_START}Résumé{MATCH_END}" in result["snippet"]
