"""The ``html`` export opened in real headless Chromium (Debian's ``chromium``, no download).

Skipped with a reason when no chromium is installed locally; under ``CI=true`` a missing
browser is a failure, since CI installs it with apt.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from debian_chromium import WATCH_SCRIPT, launched_browser
from hermes_export_html import HtmlExporter
from html_trace_samples import (
    DirectorySink,
    chat_session,
    coding_session,
    hostile_session,
    options,
)
from png_pixels import distinct_colours

playwright_api = pytest.importorskip("playwright.sync_api")




@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    yield from launched_browser()


class OpenedPage:
    """A page on an exported file, recording requests, dialogs and policy violations."""

    def __init__(self, browser: object, path: Path, color_scheme: str = "light") -> None:
        self.context = browser.new_context(color_scheme=color_scheme)  # type: ignore[attr-defined]
        self.page = self.context.new_page()
        self.url = path.as_uri()
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("dialog", self._dialog)
        self.page.add_init_script(WATCH_SCRIPT)
        self.page.goto(self.url)
        self.page.wait_for_load_state("load")

    def _dialog(self, dialog: object) -> None:
        self.dialogs.append(dialog.message)  # type: ignore[attr-defined]
        dialog.dismiss()  # type: ignore[attr-defined]

    def close(self) -> None:
        self.context.close()


def export(tmp_path: Path, *records: object) -> Path:
    result = HtmlExporter().export(iter(records), DirectorySink(tmp_path), options())  # type: ignore[arg-type]
    return tmp_path / result.files[0].path


def test_page_renders_something_visible(browser: object, tmp_path: Path) -> None:
    opened = OpenedPage(browser, export(tmp_path, coding_session(), chat_session()))
    try:
        screenshot = opened.page.screenshot(full_page=False)
        assert distinct_colours(screenshot) > 50
        assert opened.page.get_by_text("Why does the parser fail on empty files?").is_visible()
        assert opened.page.evaluate("window.__violations") == []
    finally:
        opened.close()


def test_sidebar_switches_sessions(browser: object, tmp_path: Path) -> None:
    opened = OpenedPage(browser, export(tmp_path, coding_session(), chat_session()))
    page = opened.page
    try:
        first = page.get_by_text("Why does the parser fail on empty files?")
        second = page.get_by_text("Try the trail from Azenhas do Mar to Praia da Ursa.")
        assert first.is_visible()
        assert not second.is_visible()
        page.locator("button.pick", has_text="Weekend plans").click()
        assert second.is_visible()
        assert not first.is_visible()
        page.locator("button.pick", has_text="Fix the parser").click()
        assert first.is_visible()
        assert not second.is_visible()
    finally:
        opened.close()


def test_sidebar_search_filters_by_session_text(browser: object, tmp_path: Path) -> None:
    opened = OpenedPage(browser, export(tmp_path, coding_session(), chat_session()))
    page = opened.page
    try:
        page.locator("#search").fill("sintra")
        assert page.locator("button.pick", has_text="Weekend plans").is_visible()
        assert not page.locator("button.pick", has_text="Fix the parser").is_visible()
        page.locator("#search").fill("")
        assert page.locator("button.pick", has_text="Fix the parser").is_visible()
    finally:
        opened.close()


def test_hostile_messages_execute_nothing(browser: object, tmp_path: Path) -> None:
    path = export(tmp_path, hostile_session(), chat_session())
    opened = OpenedPage(browser, path)
    page = opened.page
    try:
        # Open every collapsed part and click every bubble of the hostile session.
        page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
        for bubble in page.locator("section.active article").all():
            bubble.click()
        page.locator("button.pick").nth(1).click()
        page.locator("button.pick").nth(0).click()
        assert opened.dialogs == []
        assert page.evaluate("window.__pwned") is None
        assert page.evaluate("document.querySelectorAll('[href], [src], img, svg, a').length") == 0
        handlers = page.evaluate(
            "Array.from(document.querySelectorAll('*')).flatMap((el) => "
            "Array.from(el.attributes).map((a) => a.name)).filter((n) => n.startsWith('on'))"
        )
        assert handlers == []
        assert page.evaluate("document.scripts.length") == 1
        assert "<script>window.__pwned" in page.locator("section.active").inner_text()
        assert opened.dialogs == []
        assert page.evaluate("window.__pwned") is None
    finally:
        opened.close()


def test_no_request_leaves_the_page(browser: object, tmp_path: Path) -> None:
    record = coding_session()
    record.messages[1].content = "Look at https://example.com/logo.png and //cdn.example/x.js"
    opened = OpenedPage(browser, export(tmp_path, record, hostile_session(), chat_session()))
    page = opened.page
    try:
        for pick in page.locator("button.pick").all():
            pick.click()
        page.locator("#theme-toggle").click()
        page.locator("#search").fill("sintra")
        assert opened.requests == [opened.url]
    finally:
        opened.close()


def test_csp_nonce_differs_between_two_exports(browser: object, tmp_path: Path) -> None:
    policies = []
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        opened = OpenedPage(browser, export(tmp_path / name, chat_session()))
        try:
            policies.append(
                opened.page.evaluate(
                    "document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]').content"
                )
            )
            # The nonced style applied (bubbles have a border radius) and the script ran.
            assert opened.page.evaluate("document.documentElement.classList.contains('js')")
            radius = opened.page.locator("article.bubble").first.evaluate(
                "(el) => getComputedStyle(el).borderTopLeftRadius"
            )
            assert radius == "12px"
        finally:
            opened.close()
    assert all("default-src 'none'" in policy for policy in policies)
    assert policies[0] != policies[1]


def test_dark_scheme_and_the_theme_toggle(browser: object, tmp_path: Path) -> None:
    path = export(tmp_path, coding_session(), chat_session())
    background = "getComputedStyle(document.body).backgroundColor"
    light = OpenedPage(browser, path, color_scheme="light")
    dark = OpenedPage(browser, path, color_scheme="dark")
    try:
        light_colour = light.page.evaluate(background)
        dark_colour = dark.page.evaluate(background)
        assert light_colour != dark_colour
        toggle = dark.page.locator("#theme-toggle")
        toggle.click()  # auto → light
        assert dark.page.evaluate(background) == light_colour
        toggle.click()  # light → dark
        assert dark.page.evaluate(background) == dark_colour
    finally:
        light.close()
        dark.close()
