"""``hermes serve`` in real headless Chromium (Debian's ``chromium``, no download), against
the installed server run as a separate process: search as you type, session pages and their
lineage links, paging, live updates from another process, the keyboard, and hostile text in
every field executing and fetching nothing.

Skipped with a reason when no chromium is installed locally; under ``CI=true`` a missing
browser is a failure, since CI installs it with apt.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from debian_chromium import WATCH_SCRIPT, launched_browser
from web_archive import (
    ATTACK_HOST,
    HOSTILE_WORD,
    SOURCE_HOSTILE,
    Archive,
    Served,
    append_from_another_process,
    build_archive,
)

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

LONG_MESSAGES = 450



@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launched_browser()


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Archive:
    return build_archive(tmp_path_factory.mktemp("web") / "home", long_messages=LONG_MESSAGES)


@pytest.fixture(scope="module")
def served(archive: Archive) -> Iterator[Served]:
    server = Served(archive.home)
    yield server
    server.stop()


class Visit:
    """A browser page signed in through the printed address, recording every request,
    dialog and policy violation."""

    def __init__(self, browser: Any, server: Served) -> None:
        self.context = browser.new_context()
        self.page = self.context.new_page()
        self.server = server
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("dialog", self._dialog)
        self.page.add_init_script(WATCH_SCRIPT)
        self.page.goto(server.url)
        self.page.wait_for_load_state("load")

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def open(self, path: str) -> None:
        self.page.goto(self.server.base + path)
        self.page.wait_for_load_state("load")

    def foreign_requests(self) -> list[str]:
        return [url for url in self.requests if not url.startswith(self.server.base + "/")]

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def visit(browser: Any, served: Served) -> Iterator[Visit]:
    opened = Visit(browser, served)
    yield opened
    opened.close()


def test_the_address_signs_in_and_leaves_no_token_in_the_url(visit: Visit) -> None:
    assert visit.page.url == visit.server.base + "/"
    expect(visit.page.locator("li.row", has_text="Quokka migration plan")).to_be_visible()
    # Pinned first; archived hidden by default.
    assert "Pinned penguin notes" in visit.page.locator("li.row").first.inner_text()
    expect(visit.page.locator("li.row", has_text="Archived albatross")).to_have_count(0)


def test_search_as_you_type_finds_the_planted_session(visit: Visit, archive: Archive) -> None:
    page = visit.page
    page.locator("#q").press_sequentially("quokka encl", delay=60)
    hit = page.locator("li.row.hit", has_text="Quokka migration plan")
    expect(hit).to_be_visible()
    expect(hit.locator("mark").first).to_have_text(re.compile("quokka", re.IGNORECASE))
    assert hit.get_attribute("data-id") == archive.ids["planted"]
    # One result per lineage: the heron parent and its continuation are one family.
    page.locator("#q").fill("heron pipeline")
    expect(page.locator("#status")).to_have_text(re.compile(r"^1 matching session$"))
    # Roles: only tool output holds no quokka.
    page.locator("#q").fill("quokka")
    expect(page.locator("li.row.hit")).to_have_count(1)
    page.locator('input[name="role"][value="user"]').uncheck()
    page.locator('input[name="role"][value="assistant"]').uncheck()
    page.locator('input[name="role"][value="tool"]').check()
    expect(page.locator("#status")).to_have_text("0 matching sessions")


def test_filters_narrow_the_list(visit: Visit) -> None:
    page = visit.page
    page.locator("#f-archived").select_option("only")
    expect(page.locator("li.row")).to_have_count(1)
    expect(page.locator("li.row")).to_contain_text("Archived albatross")
    page.locator("#f-archived").select_option("hide")
    page.locator("#f-source").select_option("telegram")
    expect(page.locator("li.row")).to_have_count(1)
    expect(page.locator("li.row")).to_contain_text("Deploy settings")
    page.locator("#f-source").select_option("")
    page.locator("#f-workspace").fill("zoo")
    page.locator("#f-workspace").dispatch_event("change")
    expect(page.locator("li.row")).to_have_count(1)
    expect(page.locator("li.row")).to_contain_text("Quokka")
    page.locator("#f-workspace").fill("")
    page.locator("#f-workspace").dispatch_event("change")
    page.locator("#f-pinned").check()
    expect(page.locator("li.row")).to_have_count(1)
    expect(page.locator("li.row")).to_contain_text("Pinned penguin")


def test_keyboard_search_move_and_open(visit: Visit, archive: Archive) -> None:
    page = visit.page
    page.keyboard.press("/")
    expect(page.locator("#q")).to_be_focused()
    page.keyboard.type("quokka")
    expect(page.locator("li.row.hit")).to_have_count(1)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(re.escape(archive.ids["planted"]) + "$"))
    expect(page.get_by_text("copy the quokka enclosure rows with the mover script")).to_be_visible()
    page.keyboard.press("j")
    expect(page.locator("article.bubble.selected")).to_have_count(1)
    page.keyboard.press("u")
    page.wait_for_url(visit.server.base + "/")
    page.keyboard.press("j")
    page.keyboard.press("j")
    second = page.locator("li.row").nth(1)
    expect(second).to_have_class(re.compile("selected"))
    target = second.get_attribute("data-id")
    page.keyboard.press("k")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(re.escape(target or "?") + "$"))


def test_a_session_page_renders_and_its_lineage_links_work(visit: Visit, archive: Archive) -> None:
    page = visit.page
    visit.open(f"/session/{archive.ids['parent']}")
    expect(page.locator("article.bubble.user")).to_contain_text("build the heron pipeline")
    expect(page.locator("section.session h2")).to_have_text("Heron pipeline")
    page.locator('.lineage [data-kind="compression"] a').click()
    page.wait_for_url(re.compile(archive.ids["continuation"] + "$"))
    expect(page.get_by_text("heron pipeline part two")).to_be_visible()
    page.locator('.lineage [data-kind="delegate"] a').click()
    page.wait_for_url(re.compile(archive.ids["delegate"] + "$"))
    expect(page.get_by_text("helper task for the heron")).to_be_visible()
    page.locator('.lineage [data-kind="parent"] a').click()
    page.wait_for_url(re.compile(archive.ids["continuation"] + "$"))
    page.locator('.lineage [data-kind="parent"] a').click()
    page.wait_for_url(re.compile(archive.ids["parent"] + "$"))
    page.locator('.lineage [data-kind="branch"] a').click()
    page.wait_for_url(re.compile(archive.ids["branch"] + "$"))
    expect(page.get_by_text("try the heron side road")).to_be_visible()
    assert visit.foreign_requests() == []


def test_a_long_session_loads_in_pages(visit: Visit, archive: Archive) -> None:
    page = visit.page
    visit.open(f"/session/{archive.ids['long']}")
    bubbles = page.locator("article.bubble")
    assert bubbles.count() == 200  # the first page only, not all 450
    assert "llama line 00199" in bubbles.nth(199).inner_text()
    for _ in range(10):
        if bubbles.count() == LONG_MESSAGES:
            break
        page.locator("#more").scroll_into_view_if_needed()
        page.mouse.wheel(0, 100_000)
        page.wait_for_timeout(300)
    expect(bubbles).to_have_count(LONG_MESSAGES)
    texts = [t.split("\n")[-1].strip() for t in bubbles.all_inner_texts()]
    assert texts == [f"llama line {i:05d}" for i in range(LONG_MESSAGES)]
    expect(page.locator("#more")).to_be_hidden()


def test_a_message_appended_by_another_process_appears(visit: Visit, archive: Archive) -> None:
    page = visit.page
    visit.open(f"/session/{archive.ids['planted']}")
    expect(page.locator("article.bubble")).to_have_count(2)
    append_from_another_process(archive.home, archive.ids["planted"], "a live kangaroo reply")
    expect(page.get_by_text("a live kangaroo reply")).to_be_visible(timeout=15_000)
    expect(page.locator("article.bubble")).to_have_count(3)
    append_from_another_process(archive.home, archive.ids["planted"], "and a second one")
    expect(page.locator("article.bubble")).to_have_count(4, timeout=15_000)
    assert page.locator("article.bubble").last.inner_text().endswith("and a second one")


def test_the_list_shows_a_new_session_without_a_reload(visit: Visit, archive: Archive) -> None:
    page = visit.page
    page.evaluate("window.__same_document = true")
    append_from_another_process(archive.home, "new", "Brand new wombat session")
    expect(page.locator("li.row", has_text="Brand new wombat session")).to_be_visible(
        timeout=15_000
    )
    assert page.evaluate("window.__same_document") is True


def test_hostile_text_in_every_field_runs_and_fetches_nothing(
    visit: Visit, archive: Archive
) -> None:
    page = visit.page
    hostile = archive.ids["hostile"]
    expect(page.locator("li.row", has_text=HOSTILE_WORD)).to_be_visible()
    page.locator("#q").fill(HOSTILE_WORD)
    expect(page.locator("li.row.hit", has_text=HOSTILE_WORD)).to_be_visible()
    expect(page.locator("li.row.hit .snippet mark").first).to_be_visible()
    _assert_harmless(visit)
    visit.open(f"/session/{hostile}")
    expect(page.locator("section.session h2")).to_contain_text("<script>")
    for details in page.locator("details").all():
        details.evaluate("element => element.open = true")
    expect(page.locator("details.tool-output pre")).to_contain_text("<iframe")
    assert page.locator("article.bubble").count() == 3
    _assert_harmless(visit)
    visit.open("/?source=" + quote(SOURCE_HOSTILE) + "&archived=include")
    expect(page.locator("li.row", has_text=HOSTILE_WORD)).to_be_visible()
    _assert_harmless(visit)
    visit.open(f"/api/session/{hostile}/page?offset=0")
    _assert_harmless(visit)
    visit.open("/insights")
    expect(page.locator("h1")).to_have_text("Hermes insights")
    _assert_harmless(visit)


def _assert_harmless(visit: Visit) -> None:
    page = visit.page
    page.wait_for_timeout(300)
    assert page.evaluate("window.__xss") is None
    assert visit.dialogs == []
    assert visit.foreign_requests() == []
    assert not any(urlsplit(url).hostname == ATTACK_HOST for url in visit.requests)
    for tag in ("script:not([nonce])", "iframe", "img", "base", "meta[http-equiv=refresh]"):
        assert page.locator(tag).count() == 0, tag
    handlers = page.evaluate(
        "Array.from(document.querySelectorAll('*')).flatMap(e => Array.from(e.attributes))"
        ".filter(a => a.name.startsWith('on') || a.value.trim().startsWith('javascript:'))"
        ".length"
    )
    assert handlers == 0


def test_with_allow_writes_the_buttons_pin_and_rename(browser: Any, tmp_path: Path) -> None:
    archive = build_archive(tmp_path / "home", long_messages=4)
    server = Served(archive.home, "--allow-writes")
    visit = Visit(browser, server)
    try:
        page = visit.page
        row = page.locator(f'li.row[data-id="{archive.ids["planted"]}"]')
        row.locator('button[data-act="pin"]').click()
        expect(page.locator("li.row").first).to_have_attribute("data-id", archive.ids["planted"])
        expect(page.locator("li.row").first).to_contain_text("📌 Quokka migration plan")
        page.once("dialog", lambda dialog: dialog.accept("Quokka plan, renamed"))
        visit.dialogs.clear()
        page.remove_listener("dialog", visit._dialog)
        page.locator("li.row").first.locator('button[data-act="rename"]').click()
        expect(page.locator("li.row").first).to_contain_text("Quokka plan, renamed")
    finally:
        visit.close()
        server.stop()
