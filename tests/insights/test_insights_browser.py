"""The ``--html`` page in real headless Chromium (Debian's ``chromium``, never a download): it
renders visibly, its charts have size, its style sheet applies under its own policy, and it
makes no request and runs nothing — hostile names included.

Skipped with a reason when no chromium is installed locally; under ``CI=true`` a missing
browser is a failure, since CI installs it with apt.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from debian_chromium import WATCH_SCRIPT, launched_browser
from insights_samples import HOSTILE_TITLE, HOSTILE_TOOL, PRICES, UTC, build_sample, hostile_home
from png_pixels import distinct_colours

from hermes_core.insights import build_report
from hermes_core.insights.html_page import write_page
from hermes_core.store import SessionStore

playwright_api = pytest.importorskip("playwright.sync_api")




@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    yield from launched_browser()


def write(home: Path, target: Path) -> Path:
    with SessionStore.open(home) as store:
        report = build_report(store.insight_rows(), PRICES, zone=UTC)
    write_page(report, target)
    return target


class Opened:
    """A page on a written file, recording requests, dialogs and policy violations."""

    def __init__(self, browser: object, path: Path) -> None:
        self.context = browser.new_context(color_scheme="light")  # type: ignore[attr-defined]
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


def test_the_page_renders_its_charts(browser: object, tmp_path: Path) -> None:
    sample = build_sample(tmp_path / "home")
    opened = Opened(browser, write(sample.home, tmp_path / "insights.html"))
    page = opened.page
    try:
        screenshot = page.screenshot(full_page=True)
        assert distinct_colours(screenshot) > 50
        assert page.get_by_text("Hermes insights", exact=True).is_visible()
        assert page.locator("#tool-table").get_by_text("read_file").is_visible()
        # The nonced style sheet applied: the light background and card borders.
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(247, 248, 250)"
        charts = page.locator("svg.chart")
        assert charts.count() == 7
        for index in range(charts.count()):
            box = charts.nth(index).bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 20
        # The longest bar of "Calls per tool" (terminal, 3 calls) is three times read_file's.
        widths = (
            page.locator("#tools svg")
            .first.locator("rect")
            .evaluate_all("(rects) => rects.map((r) => r.getBoundingClientRect().width)")
        )
        assert len(widths) == 2 and widths[0] == pytest.approx(3 * widths[1], rel=0.01)
        assert page.evaluate("window.__violations") == []
        assert opened.requests == [opened.url]
    finally:
        opened.close()


def test_hostile_names_run_nothing(browser: object, tmp_path: Path) -> None:
    opened = Opened(browser, write(hostile_home(tmp_path), tmp_path / "hostile.html"))
    page = opened.page
    try:
        assert page.get_by_text(HOSTILE_TITLE).is_visible()
        assert page.locator("#tool-table").get_by_text(HOSTILE_TOOL).is_visible()
        assert page.evaluate("window.__pwned") is None
        assert page.evaluate("document.scripts.length") == 0
        assert page.evaluate("document.querySelectorAll('img, iframe, a, [onload]').length") == 0
        assert opened.dialogs == []
        assert opened.requests == [opened.url]
        assert page.evaluate("window.__violations") == []
    finally:
        opened.close()
