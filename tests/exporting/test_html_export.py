"""The ``html`` exporter's page, read as text (no browser): self-contained, escaped, themed."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hermes_export_html import HtmlExporter
from html_trace_samples import (
    HOSTILE_TEXTS,
    DirectorySink,
    chat_session,
    coding_session,
    hostile_session,
    options,
)

from hermes_core.plugins import PluginHost


class _Collector(HTMLParser):
    """Every start tag with its attributes, and the text outside ``<style>``/``<script>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self._raw: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in {"style", "script"}:
            self._raw = tag

    def handle_endtag(self, tag: str) -> None:
        if tag == self._raw:
            self._raw = None

    def handle_data(self, data: str) -> None:
        if self._raw is None:
            self.text.append(data)


def export_page(tmp_path: Path, *records: object, single: bool = False) -> str:
    sink = DirectorySink(tmp_path)
    result = HtmlExporter().export(iter(records), sink, options(single=single))  # type: ignore[arg-type]
    assert len(result.files) == 1
    return (tmp_path / result.files[0].path).read_text(encoding="utf-8")


def parse(page: str) -> _Collector:
    collector = _Collector()
    collector.feed(page)
    collector.close()
    return collector


def test_html_exporter_is_registered_through_its_entry_point() -> None:
    exporter = PluginHost().exporter("html")
    assert exporter.name == "html"
    assert exporter.redact_by_default is False


def test_page_has_no_remote_resource(tmp_path: Path) -> None:
    record = coding_session()
    record.messages[1].content = "See https://example.com/docs and http://cdn.example/x.js"
    page = export_page(tmp_path, record, chat_session())
    for tag, attrs in parse(page).tags:
        for name in ("src", "href", "action", "srcset", "poster", "data", "formaction"):
            value = attrs.get(name)
            assert value is None, f"<{tag} {name}={value!r}> in the page"
    assert not re.search(r"""url\(|@import|@font-face""", page)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*https?:""", page, re.IGNORECASE)
    # The URLs in the message are shown as text, not turned into links or resources.
    assert "See https://example.com/docs" in page


def test_csp_meta_allows_only_the_nonced_style_and_script(tmp_path: Path) -> None:
    tags = parse(export_page(tmp_path, coding_session())).tags
    policies = [
        attrs["content"]
        for tag, attrs in tags
        if tag == "meta" and (attrs.get("http-equiv") or "").lower() == "content-security-policy"
    ]
    assert len(policies) == 1
    policy = policies[0] or ""
    assert "default-src 'none'" in policy
    nonce = re.search(r"script-src 'nonce-([A-Za-z0-9_-]+)'", policy)
    assert nonce is not None
    assert f"style-src 'nonce-{nonce.group(1)}'" in policy
    styles = [attrs for tag, attrs in tags if tag == "style"]
    scripts = [attrs for tag, attrs in tags if tag == "script"]
    assert styles == [{"nonce": nonce.group(1)}]
    assert scripts == [{"nonce": nonce.group(1)}]
    # The policy comes before anything it governs.
    names = [tag for tag, _ in tags]
    assert names.index("meta") < names.index("style")


def test_every_export_gets_a_new_nonce(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = export_page(tmp_path / "a", coding_session())
    second = export_page(tmp_path / "b", coding_session())
    nonce = re.compile(r"'nonce-([A-Za-z0-9_-]+)'")
    assert nonce.findall(first)[0] != nonce.findall(second)[0]
    assert len(nonce.findall(first)[0]) >= 16


def test_every_session_field_is_escaped(tmp_path: Path) -> None:
    page = export_page(tmp_path, hostile_session(), chat_session())
    collector = parse(page)
    # Exactly the page's own elements: nothing from the session became a tag or attribute.
    tag_names = {tag for tag, _ in collector.tags}
    assert not tag_names & {"img", "svg", "a", "iframe", "textarea", "object", "embed"}
    assert [tag for tag, _ in collector.tags].count("script") == 1
    assert [tag for tag, _ in collector.tags].count("style") == 1
    for _, attrs in collector.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), name
            assert "javascript:" not in (value or "").lower()
    # ...and every hostile text is there, as text, in each field that carried it.
    shown = "".join(collector.text)
    for evil in HOSTILE_TEXTS:
        assert evil in shown
    for field in ("evil<script>1", "cli<b>"):
        assert field in shown
        assert html.escape(field) in page


def test_single_session_page_has_no_sidebar(tmp_path: Path) -> None:
    page = export_page(tmp_path, coding_session(), single=True)
    assert 'id="sidebar"' not in page
    assert '<body class="single">' in page
    assert "Why does the parser fail on empty files?" in page


def test_multi_session_page_has_a_sidebar_entry_per_session(tmp_path: Path) -> None:
    page = export_page(tmp_path, coding_session(), chat_session(), hostile_session())
    tags = parse(page).tags
    picks = [
        attrs["data-target"] for tag, attrs in tags if tag == "button" and "data-target" in attrs
    ]
    sections = [attrs["id"] for tag, attrs in tags if tag == "section"]
    assert picks == sections == ["s1", "s2", "s3"]
    assert any(tag == "input" and attrs.get("type") == "search" for tag, attrs in tags)


def test_tool_calls_and_output_are_collapsible(tmp_path: Path) -> None:
    page = export_page(tmp_path, coding_session())
    assert page.count('<details class="tool-call">') == 2
    assert page.count('<details class="tool-output">') == 2
    assert page.count('<details class="reasoning">') == 1
    assert "pytest -q" in page
    assert "1 failed, 3 passed" in page
    for role in ("user", "assistant", "tool", "system"):
        assert f'class="bubble {role}"' in page


def test_light_and_dark_themes_are_both_styled(tmp_path: Path) -> None:
    page = export_page(tmp_path, coding_session())
    assert "@media (prefers-color-scheme: dark)" in page
    assert ':root[data-theme="dark"]' in page
    assert 'id="theme-toggle"' in page
    assert "font-family" in page and "system-ui" in page


def test_result_reports_the_file_with_its_hash(tmp_path: Path) -> None:
    import hashlib

    sink = DirectorySink(tmp_path)
    records = [coding_session(), chat_session()]
    result = HtmlExporter().export(iter(records), sink, options())
    assert result.sessions_written == 2
    (written,) = result.files
    assert written.path == Path("sessions.html")
    assert written.session_ids == ("20260101_090000_a1b2c3", "a1b2c3d4")
    assert written.message_count == 10
    assert written.sha256 == hashlib.sha256((tmp_path / written.path).read_bytes()).hexdigest()


def test_one_session_is_named_after_its_id(tmp_path: Path) -> None:
    sink = DirectorySink(tmp_path)
    HtmlExporter().export(iter([chat_session()]), sink, options(single=True))
    assert sink.names == ["a1b2c3d4.html"]


@pytest.mark.parametrize("text", ["\udcff lone surrogate", "nul \x00 and bell \x07"])
def test_odd_characters_never_break_the_export(tmp_path: Path, text: str) -> None:
    record = chat_session()
    record.messages[0].content = text
    page = export_page(tmp_path, record)
    assert "</html>" in page


def test_an_empty_selection_still_gives_a_valid_page(tmp_path: Path) -> None:
    page = export_page(tmp_path)
    assert "No sessions were selected." in page
    assert page.rstrip().endswith("</html>")


def test_a_logical_lineage_marks_where_each_continuation_starts(tmp_path: Path) -> None:
    record = chat_session()
    record.lineage = ("a1b2c3d4", "a1b2c3d4-2")
    record.messages[0].session_id = "a1b2c3d4"
    record.messages[1].session_id = "a1b2c3d4-2"
    page = export_page(tmp_path, record)
    assert "a1b2c3d4 → a1b2c3d4-2" in page
    assert page.count('class="segment muted"') == 1
    assert page.index("Suggest a hike") < page.index("continued in session a1b2c3d4-2")


def test_a_long_sidebar_spills_to_disk_and_keeps_every_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_export_html import exporter as html_exporter

    monkeypatch.setattr(html_exporter, "SIDEBAR_SPOOL_BYTES", 512)
    records = [chat_session(session_id=f"chat-{n}", title=f"Trip {n} \udcff") for n in range(40)]
    page = export_page(tmp_path, *records)
    tags = parse(page).tags
    picks = [
        attrs["data-target"] for tag, attrs in tags if tag == "button" and "data-target" in attrs
    ]
    assert picks == [f"s{n + 1}" for n in range(40)]
    assert page.count("Trip 39") == 2  # the heading and the sidebar entry
