"""``hermes sessions list`` laid out for the terminal (SPEC C1): the seed's layout at 80 columns
and on a pipe, wider terminals giving the room to the title first, imported sessions told
apart, cells measured in terminal cells (CJK, emoji) — through CliRunner on ``build_app``."""

from __future__ import annotations

import json
import time
from pathlib import Path

import hermes_import_claude.plugin
import pytest
from hermes_hookspecs import Message
from typer.testing import CliRunner

from hermes_core.cli.app import build_app
from hermes_core.cli.formatting import display_width
from hermes_core.plugins import PluginHost
from hermes_core.store import SessionStore

runner = CliRunner()

# The seed's own listings (docs: "Listar sessões"), ids left out: ours are full on a pipe.
SEED_TITLED_HEADER = (
    "Title                  Preview                                  Last Active   ID"
)
SEED_TITLED_ROWS = [
    "refactoring auth       Help me refactor the auth module please   2h ago        ",
    "my project #3          Can you check the test failures?          yesterday     ",
    "—                      What's the weather in Las Vegas?          3d ago        ",
]
SEED_PLAIN_HEADER = "Preview                                            Last Active   Src    ID"
SEED_PLAIN_ROWS = [
    "Help me refactor the auth module please             2h ago        cli    ",
    "What's the weather in Las Vegas?                    3d ago        tele   ",
]
LEXER = "Why does the lexer choke on tabs? It fails on line 3."


@pytest.fixture
def host() -> PluginHost:
    """The core plus the real Claude Code plugin (its ``claude`` short label)."""
    return PluginHost(
        load_entry_points=False,
        extra_plugins=[("hermes-import-claude", hermes_import_claude.plugin)],
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def add(
    home: Path, text: str, *, ago: float, source: str = "cli", title: str | None = None, **fields
) -> str:
    with SessionStore.open(home) as store:
        started = time.time() - ago
        session = store.create_session(
            source, title=title, started_at=started, gateway=source == "telegram", **fields
        )
        store.append_messages(session.id, [Message("user", text, timestamp=started + 1)])
        return session.id


def add_imported(home: Path, prompt: str, *, ago: float) -> str:
    """A session as the Claude Code importer stores one (title and title source)."""
    return add(
        home,
        prompt,
        ago=ago,
        source="claude-code",
        title=f"Imported from Claude Code: {prompt}",
        title_source="import",
    )


def seed_sessions(home: Path, *, titled: bool = True) -> list[str]:
    """The seed's example sessions, newest first."""
    if titled:
        return [
            add(
                home, "Help me refactor the auth module please", ago=7300, title="refactoring auth"
            ),
            add(home, "Can you check the test failures?", ago=86400 * 1.2, title="my project #3"),
            add(home, "What's the weather in Las Vegas?", ago=3 * 86400 + 100),
        ]
    return [
        add(home, "Help me refactor the auth module please", ago=7300),
        add(home, "What's the weather in Las Vegas?", ago=3 * 86400 + 100, source="telegram"),
    ]


def listing(host: PluginHost, home: Path, columns: int | None, *args: str) -> list[str]:
    """The listing's lines; ``columns=None`` is a pipe without ``$COLUMNS``."""
    env = {"COLUMNS": str(columns) if columns else None}
    result = runner.invoke(
        build_app(host), ["--home", str(home), "sessions", "list", *args], env=env
    )
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def column(line: str, start: int, width: int) -> str:
    """The text between display columns ``start`` and ``start + width`` of ``line`` (measured
    on prefixes, so an emoji sequence counts as the one glyph it is)."""
    edges = [display_width(line[:index]) for index in range(len(line) + 1)]
    first = next(index for index, edge in enumerate(edges) if edge >= start)
    last = max(index for index, edge in enumerate(edges) if edge <= start + width)
    return line[first:last]


def test_at_80_columns_the_titled_layout_is_the_seeds(host, home):
    ids = seed_sessions(home)
    lines = listing(host, home, 80)
    # The id is whole (it is what people copy): the preview gives way.
    assert lines == [
        "Title                  Preview              Last Active   ID",
        "─" * 80,
        "refactoring auth       Help me refactor t…  2h ago        " + ids[0],
        "my project #3          Can you check the …  yesterday     " + ids[1],
        "—                      What's the weather…  3d ago        " + ids[2],
    ]


def test_at_80_columns_the_layout_without_titles_is_the_seeds(host, home):
    ids = seed_sessions(home, titled=False)
    lines = listing(host, home, 80)
    # A gateway id (24 characters) is shown whole: the preview gives way (33 columns).
    assert lines == [
        "Preview                            Last Active   Src    ID",
        "─" * 80,
        "Help me refactor the auth module…  2h ago        cli    " + ids[0],
        "What's the weather in Las Vegas?   3d ago        tele   " + ids[1],
    ]


@pytest.mark.parametrize("columns", [None, "wide"])
def test_a_pipe_gets_the_seeds_fixed_layout_with_full_ids(host, home, columns):
    ids = seed_sessions(home)
    env = {"COLUMNS": columns}
    result = runner.invoke(build_app(host), ["--home", str(home), "sessions", "list"], env=env)
    lines = result.output.splitlines()
    assert lines[2:] == [row + id_ for row, id_ in zip(SEED_TITLED_ROWS, ids, strict=True)]
    assert lines[0].split() == SEED_TITLED_HEADER.split()
    assert [lines[0].index(word) for word in ("Preview", "Last Active", "ID")] == [
        SEED_TITLED_ROWS[0].index("Help"),
        SEED_TITLED_ROWS[0].index("2h ago"),
        len(SEED_TITLED_ROWS[0]),
    ]
    assert lines[1] == "─" * len(lines[2])


def test_a_pipe_gets_the_seeds_fixed_layout_without_titles_too(host, home):
    ids = seed_sessions(home, titled=False)
    lines = listing(host, home, None)
    assert lines[2:] == [row + id_ for row, id_ in zip(SEED_PLAIN_ROWS, ids, strict=True)]
    assert lines[0].split() == SEED_PLAIN_HEADER.split()
    assert [lines[0].index(word) for word in ("Last Active", "Src", "ID")] == [
        SEED_PLAIN_ROWS[0].index("2h ago"),
        SEED_PLAIN_ROWS[0].index("cli"),
        len(SEED_PLAIN_ROWS[0]),
    ]


def test_imported_sessions_are_told_apart_at_80_columns(host, home):
    add_imported(home, LEXER, ago=100)
    add_imported(home, "Write the README for the parser", ago=200)
    add(home, "hello", ago=300, title="Imported from Mars: a note")  # a person's own title
    lines = listing(host, home, 80)
    titles = [column(line, 0, 22) for line in lines[2:]]
    assert titles == ["claude: Why does the …", "claude: Write the REA…", "Imported from Mars: a…"]
    stored = json.loads("\n".join(listing(host, home, 80, "--json")))
    assert stored[0]["title"] == f"Imported from Claude Code: {LEXER}"  # --json unchanged


def test_at_120_columns_the_title_takes_the_room_first(host, home):
    add_imported(home, LEXER, ago=100)
    native = add(
        home, "Help me refactor the auth module please", ago=7300, title="refactoring auth"
    )
    lines = listing(host, home, 120)
    header = lines[0]
    # 120 - (40 preview + 13 + 22 id + 4 separators) = 41 for the title.
    assert header.index("Preview") == 42
    assert header.index("Last Active") == 42 + 40 + 2
    assert lines[1] == "─" * 120
    assert lines[2].startswith("claude: Why does the lexer choke on tabs… Why does the lexer")
    assert lines[3].startswith(
        "refactoring auth" + " " * 26 + "Help me refactor the auth module please"
    )
    assert lines[3].endswith(native)  # full ids again
    assert all(display_width(line) <= 120 for line in lines)


def test_at_200_columns_titles_and_previews_show_whole(host, home):
    lexer = add_imported(home, LEXER, ago=100)
    add(home, "Help me refactor the auth module please", ago=7300, title="refactoring auth")
    lines = listing(host, home, 200)
    title = f"claude: {LEXER}"
    assert lines[0].index("Preview") == len(title) + 1  # as wide as the longest title
    assert lines[2] == f"{title} {LEXER}  1m ago        {lexer}"
    assert display_width(lines[1]) == len(lines[2]) < 200  # no padding past what is needed


def test_short_titles_leave_the_room_to_the_preview(host, home):
    long_text = "Please look at the flaky integration test in the payments service " * 3
    add(home, long_text, ago=100, title="flaky test")
    lines = listing(host, home, 200)
    assert lines[0].index("Preview") == 23  # the seed's title column
    preview = column(lines[2], 23, 200 - 22 - 1 - 2 - 13 - 1 - 22)  # all that is left
    assert preview.startswith(long_text[:100]) and preview.rstrip().endswith("…")
    assert display_width(lines[2]) == 200


def test_without_titles_a_wide_terminal_widens_the_preview(host, home):
    long_text = "Deploy the staging cluster and then run the smoke tests against it, twice " * 2
    only = add(home, long_text, ago=100)
    lines = listing(host, home, 150)
    assert lines[0].index("Last Active") == 150 - 13 - 6 - 22 - 4 + 2
    assert lines[2].endswith(f"1m ago        cli    {only}")


@pytest.mark.parametrize("columns", [70, 60, 50])
@pytest.mark.parametrize("titled", [True, False])
def test_a_narrow_terminal_never_cuts_the_id(host, home, columns, titled):
    ids = seed_sessions(home, titled=titled)
    lines = listing(host, home, columns)
    for line, session_id in zip(lines[2:], ids, strict=True):
        assert line.endswith(" " + session_id), line
    if titled and columns == 70:  # title and preview shrink together
        assert lines[2].startswith("refactoring auth  Help me refac…")
        assert all(display_width(line) <= 70 for line in lines)


@pytest.mark.parametrize("columns", [80, 120, 200])
def test_wide_characters_keep_the_columns_aligned(host, home, columns):
    titles = [
        "量子纠缠的研究笔记与实验记录，包括测量结果和讨论",
        "🚀 launch plan 👩‍💻 for the release ✨",
        "会議メモ",
        "plain ascii title",
    ]
    for ago, title in enumerate(titles, 1):
        add(home, f"{title} — first message 한국어 텍스트", ago=ago * 60, title=title)
    lines = listing(host, home, columns)
    header = lines[0]
    id_column = display_width(header[: header.index(" ID") + 1])
    preview_column = display_width(header[: header.index("Preview")])
    for line in lines[2:]:
        before_id = line[: line.rindex(" ") + 1]
        assert display_width(before_id) == id_column, line
        assert column(line, preview_column - 1, 1) == " ", line  # the gap before Preview
    assert all(display_width(line) <= columns for line in lines)
    cjk_cell = column(lines[2], 0, preview_column - 1)  # the newest: the CJK title
    assert cjk_cell.rstrip().endswith("…") == (display_width(titles[0]) > preview_column - 1)
