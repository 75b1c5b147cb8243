"""The ``--html`` page read as text: one document, a Content-Security-Policy with a fresh
nonce, nothing that loads or runs, and every name from the store escaped."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from insights_samples import (
    HOSTILE_MODEL,
    HOSTILE_SOURCE,
    HOSTILE_TITLE,
    HOSTILE_TOOL,
    PRICES,
    UTC,
    build_sample,
    hostile_home,
)

from hermes_core.insights import build_report
from hermes_core.insights.html_page import render_page, write_page
from hermes_core.selection.filters import SessionFilter
from hermes_core.store import SessionStore

URL_ATTRIBUTES = {"src", "href", "xlink:href", "action", "formaction", "srcset", "poster", "data"}


class Page(HTMLParser):
    """Every start tag with its attributes, and the text of style elements."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.styles: list[str] = []
        self._in_style = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        (self.styles if self._in_style else self.text).append(data)

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


def page_of(home: Path, selection: SessionFilter | None = None) -> str:
    with SessionStore.open(home) as store:
        report = build_report(store.insight_rows(selection), PRICES, zone=UTC)
    return render_page(report)


def assert_loads_nothing(text: str) -> Page:
    page = Page(text)
    assert [tag for tag, _ in page.tags].count("html") == 1
    for tag, attrs in page.tags:
        assert tag not in {"script", "img", "iframe", "object", "embed", "link", "a", "image"}, tag
        assert not (URL_ATTRIBUTES & set(attrs)), (tag, attrs)
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert "style" not in attrs  # the policy would block it; the page needs none
    css = "".join(page.styles)
    assert "url(" not in css and "@import" not in css
    return page


def test_the_page_has_a_policy_with_a_fresh_nonce(tmp_path: Path) -> None:
    sample = build_sample(tmp_path / "home")
    first, second = page_of(sample.home), page_of(sample.home)
    policies = []
    for text in (first, second):
        page = assert_loads_nothing(text)
        [meta] = [m for m in page.named("meta") if m.get("http-equiv") == "Content-Security-Policy"]
        policy = meta["content"] or ""
        assert policy.startswith("default-src 'none'; ")
        assert "script-src 'none'" in policy
        [style] = page.named("style")
        assert f"'nonce-{style['nonce']}'" in policy
        policies.append(policy)
    assert policies[0] != policies[1]
    assert re.search(r"https?://", first) is None


def test_the_page_shows_the_figures(tmp_path: Path) -> None:
    sample = build_sample(tmp_path / "home")
    page = assert_loads_nothing(page_of(sample.home))
    text = " ".join(page.text)
    for figure in ("3,003,100", "701,050", "$10.92", "66.7 %", "read_file", "gpt-5-2025-08-07"):
        assert figure in text, figure
    assert "llama3" in text and "not counted" in text
    assert len(page.named("svg")) == 7  # day, hour, weekday, tool calls, failures, source, model
    assert page.named("rect")


def test_hostile_names_are_escaped(tmp_path: Path) -> None:
    text = page_of(hostile_home(tmp_path))
    page = assert_loads_nothing(text)
    shown = "".join(page.text)
    for name in (HOSTILE_TITLE, HOSTILE_MODEL, HOSTILE_SOURCE, HOSTILE_TOOL):
        assert name in shown, name  # as text, after the parser decoded the entities
    assert "<script" not in text and "<img" not in text and "<iframe" not in text
    [style] = page.styles
    assert "</style>" not in style and "onload" not in style


def test_an_empty_selection_is_a_page_that_says_so(tmp_path: Path) -> None:
    sample = build_sample(tmp_path / "home")
    page = assert_loads_nothing(page_of(sample.home, SessionFilter(source="nowhere")))
    assert "No sessions match" in " ".join(page.text)
    assert page.named("svg") == []


def test_writing_replaces_the_file_atomically(tmp_path: Path) -> None:
    sample = build_sample(tmp_path / "home")
    with SessionStore.open(sample.home) as store:
        report = build_report(store.insight_rows(), PRICES, zone=UTC)
    target = tmp_path / "out.html"
    target.write_text("old", encoding="utf-8")
    write_page(report, target)
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "out.html"]
