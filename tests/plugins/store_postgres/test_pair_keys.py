"""The phrase pair keys the client writes (schema 11) hold every pair PostgreSQL itself sees as
adjacent, whatever the text: a missing key would make a phrase search skip that message. Each
text is stored through the store, and the pairs are read back off the server's own
``tsvector`` positions; every pair of plain ASCII words (the only ones a query looks up) must
have its key in the message's ``pair_keys``. Texts from strangers are hostile: mixed scripts,
letters whose lowercase is ASCII, marks, joiners, words longer than ``to_tsvector`` keeps,
broken surrogates."""

from __future__ import annotations

import random
import re

import psycopg
from hermes_hookspecs import Message
from hermes_store_postgres.pair_keys import LONGEST_WORD_BYTES, pair_key

from hermes_core.plugins import PluginHost
from hermes_core.search import session_search
from hermes_core.store.backends import open_url

HOSTILE = [
    "the deploy will roll back tonight",
    "İstanbul foo\u212abar x",  # capital dotted I and the Kelvin sign lowercase to ASCII
    "ＦＵＬＬ width ｗｏｒｄｓ and١٢٣digits x١y",
    "cafe\u0301 re\u0301sume\u0301 a\u0301\u0302b double marks",
    "zero\u200bwidth join\u200dner soft\u00adhyphen",
    "emoji 🚀 between 👩\u200d💻 words",
    "中文mixed中文 latin 日本語 text",
    "a" * 3000 + " left " + "b" * 2047 + " middle " + "c" * 2046 + " right",
    "before " + "a" * 1500 + "ø" + "b" * 1500 + " after",
    "before " + "ø" * 1100 + " after",
    "abc123def 123abc 1e5 0x1F v1.2.3 3.14159",
    "foo_bar don't it's http://example.com/path?q=1 user@example.com",
    "straße ﬁnance ǅungla ΣΊΣΥΦΟΣ ıi",
    "тест mixed раураl latin",
    "tabs\tand\nnew\r\nlines",
    "broken \ud800 surrogate here",
    "العربية mixed with english words",
]


def _random_texts(count: int) -> list[str]:
    alphabet = "abcxyz019 ÉéøßİıK\u212a\u0301\u200bー中_-.'１😀\t"
    chooser = random.Random(11)
    return ["".join(chooser.choice(alphabet) for _ in range(60)) for _ in range(count)]


_PAIRABLE = re.compile(r"[a-z0-9]+")


def _adjacent_pairs(db: psycopg.Connection[tuple[object, ...]]) -> dict[int, list[str]]:
    """Every message's pairs of words at adjacent positions, as the server sees them."""
    rows = db.execute(
        "SELECT id, array(SELECT pair FROM (SELECT lag(w.lexeme) OVER (ORDER BY p) || ' ' "
        "|| w.lexeme AS pair, p - lag(p) OVER (ORDER BY p) AS gap "
        "FROM unnest(search_words) w, unnest(w.positions) p) x WHERE gap = 1) FROM messages"
    ).fetchall()
    return {int(row[0]): list(row[1]) for row in rows}  # type: ignore[call-overload]


def test_every_pair_the_server_sees_has_its_key(postgres_url: str) -> None:
    texts = HOSTILE + _random_texts(300)
    store = open_url(postgres_url, host=PluginHost())
    try:
        session = store.create_session("cli")
        store.append_messages(session.id, [Message("user", text) for text in texts])
        with psycopg.connect(postgres_url) as db:
            stored = {
                int(row[0]): set(row[1])  # type: ignore[call-overload]
                for row in db.execute("SELECT id, pair_keys FROM messages").fetchall()
            }
            seen = _adjacent_pairs(db)
        missing = [
            (message_id, pair)
            for message_id, pairs in seen.items()
            for pair in pairs
            if all(_PAIRABLE.fullmatch(word) for word in pair.split(" "))
            and pair_key(pair) not in stored[message_id]
        ]
        assert missing == []
        assert sum(len(pairs) for pairs in seen.values()) > 1000  # the check had pairs to check
        # The words around one too long to keep are neighbours, to the server and the keys;
        # a word one byte shorter is kept and stands between its neighbours.
        assert len("b" * 2047) > LONGEST_WORD_BYTES >= len("c" * 2046)
        assert session_search(store, query='"left middle"')["count"] == 1
        assert session_search(store, query='"middle right"')["count"] == 0
        assert session_search(store, query='"istanbul fookbar x"')["count"] == 1
    finally:
        store.close()


def test_an_edited_message_gets_the_keys_of_its_new_text(postgres_url: str) -> None:
    store = open_url(postgres_url, host=PluginHost())
    try:
        session = store.create_session("cli")
        store.append_message(session.id, Message("user", "please roll back the canary"))
        message = store.messages(session.id)[0]
        assert message.id is not None
        store.update_message_content(message.id, "now ship the canary")
        assert session_search(store, query='"roll back"')["count"] == 0
        assert session_search(store, query='"ship the canary"')["count"] == 1
    finally:
        store.close()
