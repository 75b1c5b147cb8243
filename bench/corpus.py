"""A deterministic synthetic corpus of agent sessions, following the corpus profile of
``../shared/reference/anchor-figures.md`` so our figures sit beside the seed system's.

Profile: 100 messages per session; roles user → assistant → (tool → assistant)* with tool
rounds geometric (p = 0.3); lengths log-uniform (user 20–400 chars, assistant 200–3000, tool
500–20,000, as code, logs, JSON, listings or prose); a 40k-word vocabulary with Zipf (s = 1)
frequencies; about 5 % of messages carry a CJK passage; session starts spread over one year
with seconds-to-minutes gaps between messages. Probe terms are planted at known rates (per
100k messages): a rare term in 70 messages, a medium term in 1 %, a 4-character CJK term in
50 messages.

The same seed always gives the same corpus.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

MESSAGES_PER_SESSION = 100
VOCABULARY_SIZE = 40_000
RARE_TERM = "zyqoxlattice"
MEDIUM_TERM = "quorvantide"
CJK_TERM = "量子纠缠"
CJK_SHORT_TERM = "纠缠"
RARE_RATE = 70 / 100_000
MEDIUM_RATE = 0.01
CJK_PASSAGE_RATE = 0.05
CJK_TERM_RATE = 50 / 100_000
YEAR_SECONDS = 365 * 24 * 3600
CORPUS_EPOCH = 1_735_689_600.0  # 2025-01-01T00:00:00Z
_POOL_SIZE = 1 << 21

_SYLLABLES = [
    c + v
    for c in ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w"]
    for v in ["a", "e", "i", "o", "u", "ai", "ou"]
]
_ENGLISH_HEAD = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "that",
    "it",
    "for",
    "you",
    "with",
    "on",
    "as",
    "this",
    "be",
    "are",
    "not",
    "or",
    "have",
    "from",
    "by",
    "at",
    "but",
    "can",
    "we",
    "an",
    "if",
    "will",
    "all",
    "what",
    "your",
    "do",
    "there",
    "which",
    "use",
    "file",
    "function",
    "error",
    "when",
    "test",
    "code",
    "run",
    "so",
    "more",
    "one",
    "new",
    "time",
    "data",
    "should",
    "need",
    "like",
    "would",
    "about",
    "make",
    "then",
    "value",
    "out",
    "also",
]
_CJK_CHARS = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可也你说"
_KANA = (
    "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん"
)


def _build_vocabulary(rng: random.Random) -> list[str]:
    words = list(_ENGLISH_HEAD)
    seen = set(words)
    while len(words) < VOCABULARY_SIZE:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in seen and word not in (RARE_TERM, MEDIUM_TERM):
            seen.add(word)
            words.append(word)
    return words


@dataclass(frozen=True, slots=True)
class CorpusMessage:
    """One generated message."""

    role: str
    content: str
    timestamp: float
    tool_name: str | None = None


@dataclass(slots=True)
class CorpusSession:
    """One generated session with its messages."""

    index: int
    source: str
    started_at: float
    title: str | None
    cwd: str
    model: str
    messages: list[CorpusMessage] = field(default_factory=list)

    @property
    def text_bytes(self) -> int:
        return sum(len(m.content.encode()) for m in self.messages)


class CorpusGenerator:
    """Generates sessions one at a time (constant memory), deterministically from ``seed``."""

    def __init__(self, seed: int = 1) -> None:
        self.seed = seed
        vocabulary_rng = random.Random(seed)
        self.vocabulary = _build_vocabulary(vocabulary_rng)
        weights = [1.0 / rank for rank in range(1, VOCABULARY_SIZE + 1)]
        cumulative = list(itertools.accumulate(weights))
        # Sampling word by word is the slow part of generation; draw one large Zipf-distributed
        # pool once and hand out slices of it at random offsets.
        self._pool = vocabulary_rng.choices(self.vocabulary, cum_weights=cumulative, k=_POOL_SIZE)

    def words(self, rng: random.Random, count: int) -> list[str]:
        start = rng.randrange(_POOL_SIZE - count) if count < _POOL_SIZE else 0
        return self._pool[start : start + count]

    def word_at_rank(self, rank: int) -> str:
        """The word of Zipf rank ``rank`` (1 = most frequent)."""
        return self.vocabulary[rank - 1]

    def sessions(self, count: int, start: int = 0) -> Iterator[CorpusSession]:
        """Sessions ``start`` .. ``start + count - 1``; each depends only on the seed and index."""
        for index in range(start, start + count):
            yield self.session(index)

    def session(self, index: int) -> CorpusSession:
        rng = random.Random(f"{self.seed}:{index}")
        started_at = CORPUS_EPOCH + rng.random() * YEAR_SECONDS
        sources = ["cli"] * 6 + ["telegram", "discord", "slack", "cron"]
        session = CorpusSession(
            index=index,
            source=rng.choice(sources),
            started_at=started_at,
            title=(
                f"Session {index} " + " ".join(self.words(rng, 3)) if rng.random() < 0.6 else None
            ),
            cwd=f"/home/dev/projects/{rng.choice(['atlas', 'hermes', 'orion', 'vega'])}",
            model=rng.choice(["gpt-5", "claude-sonnet-4", "qwen3-coder", "gemini-2.5-pro"]),
        )
        clock = started_at
        role_cycle = self._roles(rng)
        for _ in range(MESSAGES_PER_SESSION):
            role = next(role_cycle)
            clock += rng.uniform(2, 240)
            content = self._content(rng, role)
            tool_name = None
            if role == "tool":
                tool_name = rng.choice(["terminal", "read_file", "web_search", "patch"])
            session.messages.append(CorpusMessage(role, content, clock, tool_name))
        return session

    @staticmethod
    def _roles(rng: random.Random) -> Iterator[str]:
        while True:
            yield "user"
            yield "assistant"
            while rng.random() < 0.3:
                yield "tool"
                yield "assistant"

    def _content(self, rng: random.Random, role: str) -> str:
        low, high = {"user": (20, 400), "assistant": (200, 3000), "tool": (500, 20_000)}[role]
        target = int(math.exp(rng.uniform(math.log(low), math.log(high))))
        text = self._tool_output(rng, target) if role == "tool" else self._prose(rng, target)
        planted = []
        if rng.random() < RARE_RATE:
            planted.append(RARE_TERM)
        if rng.random() < MEDIUM_RATE:
            planted.append(MEDIUM_TERM)
        if rng.random() < CJK_PASSAGE_RATE:
            planted.append(self._cjk_passage(rng))
        if planted:
            cut = text.find(" ", rng.randrange(max(1, len(text))))
            cut = len(text) if cut < 0 else cut
            text = text[:cut] + " " + " ".join(planted) + " " + text[cut:]
        return text

    def _prose(self, rng: random.Random, target: int) -> str:
        # Draw all words at once (one call is far cheaper than one per sentence).
        words = self.words(rng, target // 5 + 4)
        parts: list[str] = []
        position = 0
        while position < len(words):
            length = rng.randint(5, 18)
            sentence = words[position : position + length]
            position += length
            parts.append(" ".join(sentence).capitalize() + rng.choice(".....?:"))
        return " ".join(parts)[:target].rstrip()

    def _tool_output(self, rng: random.Random, target: int) -> str:
        kind = rng.choice(["code", "log", "json", "listing", "prose"])
        if kind == "prose":
            return self._prose(rng, target)
        pool = self.words(rng, target // 6 + 12)
        lines: list[str] = []
        size = 0
        number = 0
        while size < target:
            w = pool[(number * 4) % (len(pool) - 4) :][:4]
            number += 1
            if kind == "code":
                line = f"    {w[0]}_{w[1]} = {w[2]}({w[3]}, {number})"
            elif kind == "log":
                line = f"2025-06-{number % 28 + 1:02d}T12:{number % 60:02d}:00Z INFO {' '.join(w)}"
            elif kind == "json":
                line = f'  "{w[0]}_{number}": {{"{w[1]}": "{w[2]} {w[3]}", "n": {number}}},'
            else:
                line = f"-rw-r--r-- 1 dev dev {number * 137:>8} {w[0]}/{w[1]}_{w[2]}.py"
            lines.append(line)
            size += len(line) + 1
        return "\n".join(lines)[:target]

    @staticmethod
    def _cjk_passage(rng: random.Random) -> str:
        chinese = "".join(rng.choice(_CJK_CHARS) for _ in range(rng.randint(6, 20)))
        kana = "".join(rng.choice(_KANA) for _ in range(rng.randint(4, 12)))
        passage = f"{chinese}、{kana}。"
        if rng.random() < CJK_TERM_RATE / CJK_PASSAGE_RATE:
            passage = chinese[:3] + CJK_TERM + chinese[3:] + f"、{kana}。"
        return passage
