"""Links and images from messages are neutralised in md and qmd exports (issue 23; DESIGN §9):
no ``javascript:``/``vbscript:``/``data:`` link, however disguised, and no image a viewer would
fetch, and no raw HTML — the text stays and the URL shows as code, as the HTML export shows
message text and never a link or image. Exported with the installed ``hermes``, then
rendered by a real Markdown renderer that passes raw HTML through (as Quarto does)."""

from __future__ import annotations

import re

import pytest
from hermes_hookspecs import Message
from installed_hermes import run_hermes_in
from markdown_it import MarkdownIt

from hermes_core.store import SessionStore

HOSTILE = [
    "plain [click me](javascript:alert(1)) here",
    "[upper](JaVaScRiPt:alert(2))",
    "[tab](java\tscript:alert(3))",
    "[entity](&#106;avascript:alert(4))",
    "[hex entity](&#x6A;avascript&#58;alert(5))",
    "[escaped](javascript\\:alert(6))",
    "[angle](<javascript:alert(7)>)",
    "[vb](vbscript:msgbox(8))",
    "[data](data:text/html;base64,PHNjcmlwdD4=)",
    "[split\nover two lines](javascript:alert(9))",
    "[ref][evil]\n\n[evil]: javascript:alert(10)",
    "![](http://tracker.example/pixel.png)",
    '![logo](https://tracker.example/logo.png "title")',
    "![proto](//tracker.example/p.png)",
    "![ref image][pic]\n\n[pic]: http://tracker.example/ref.png",
    '<img src="http://tracker.example/raw.png">',
    "<a href=javascript:alert(11)>raw link</a>",
    "<script>alert(12)</script>",
    "a fine [web page](https://example.com/docs) stays a link",
]


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The md and qmd exports of one session holding every hostile message."""
    home = tmp_path_factory.mktemp("home")
    with SessionStore.open(home) as store:
        session = store.create_session("cli", title="hostile links", started_at=1_700_000_000)
        store.append_messages(
            session.id,
            [
                Message("user" if n % 2 == 0 else "assistant", text, timestamp=1_700_000_001 + n)
                for n, text in enumerate(HOSTILE)
            ],
        )
        store.end_session(session.id, "user_exit")
    texts = {}
    for extension in ("md", "qmd"):
        folder = home / f"out-{extension}"
        result = run_hermes_in(
            home, "sessions", "export", "--format", extension, "--source", "cli", str(folder)
        )
        assert result.returncode == 0, result.stdout + result.stderr
        [written] = [p for p in folder.glob(f"*.{extension}")]
        texts[extension] = written.read_text(encoding="utf-8")
    return texts


@pytest.mark.parametrize("extension", ["md", "qmd"])
def test_no_script_link_image_or_raw_html_reaches_a_renderer(
    exports: dict[str, str], extension: str
) -> None:
    page = MarkdownIt("commonmark", {"html": True}).render(exports[extension])
    hrefs = re.findall(r'href="([^"]*)"', page)
    # Web links stay links (a reference image's definition is left as a plain link to it:
    # clicked, never fetched); nothing else is one.
    assert "https://example.com/docs" in hrefs
    assert all(href.startswith(("https://", "http://")) for href in hrefs), hrefs
    assert "<img" not in page and "<script" not in page
    assert "<a href=javascript" not in page


@pytest.mark.parametrize("extension", ["md", "qmd"])
def test_the_text_stays_and_the_url_shows_as_code(exports: dict[str, str], extension: str) -> None:
    text = exports[extension]
    assert "plain click me (`javascript:alert(1)`) here" in text
    assert "entity (`&#106;avascript:alert(4)`)" in text
    assert "image (`http://tracker.example/pixel.png`)" in text
    assert "proto (`//tracker.example/p.png`)" in text
    assert "a fine [web page](https://example.com/docs) stays a link" in text
    assert "&lt;script>alert(12)&lt;/script>" in text
