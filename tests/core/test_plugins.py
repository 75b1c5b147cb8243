"""Plugin loading (DESIGN §2): real entry points in a subprocess, and PluginHost in-process.

The subprocess tests install nothing into the shared environment: each fake plugin is a module
plus a ``<name>-<version>.dist-info`` folder (METADATA + entry_points.txt) in a temporary
directory put on ``PYTHONPATH``, which ``importlib.metadata`` and stevedore see as a real
installed distribution. ``HOME``/``XDG_CACHE_HOME`` point at temporary directories so
stevedore's entry-point cache and the session store stay isolated.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import typer
from hermes_hookspecs import Message, Session, SourceInfo, hookimpl
from installed_hermes import hermes_command
from plugin_folders import write_dist_info
from typer.testing import CliRunner

from hermes_core.cli.app import build_app
from hermes_core.plugins import DuplicateComponent, MissingComponent, PluginError, PluginHost

# ----------------------------------------------------------------------------- helpers


def write_distribution(
    site: Path,
    distribution: str,
    modules: Mapping[str, str],
    entry_points: Mapping[str, str],
    version: str = "0.1.0",
) -> None:
    """Make ``distribution`` look installed in ``site``: its modules and a dist-info folder."""
    site.mkdir(parents=True, exist_ok=True)
    for module_name, source in modules.items():
        (site / f"{module_name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    write_dist_info(site, distribution, version, {"hermes": entry_points})


def run_hermes(
    tmp_path: Path, args: Sequence[str], *, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``hermes args`` with the fake distributions of ``tmp_path/site`` installed."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    full_env.update(
        HOME=str(tmp_path / "user-home"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        HERMES_HOME=str(tmp_path / "hermes-home"),
        PYTHONPATH=str(tmp_path / "site"),
        COLUMNS="200",
    )
    full_env.update(env or {})
    return subprocess.run(
        [hermes_command(), *args],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def plugins_json(tmp_path: Path, env: Mapping[str, str] | None = None) -> dict[str, dict[str, Any]]:
    result = run_hermes(tmp_path, ["plugins", "--json"], env=env)
    assert result.returncode == 0, result.stderr
    return {record["name"]: record for record in json.loads(result.stdout)}


def add_untitled_session(tmp_path: Path) -> str:
    """A session without a title: ``sessions list`` then shows short origin labels, which
    needs the registered sources (so the plugins load)."""
    from hermes_core.store import SessionStore

    with SessionStore.open(tmp_path / "hermes-home") as store:
        return store.create_session("cli").id


def stderr_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


GOOD_PLUGIN = """
    from hermes_hookspecs import SourceInfo, hookimpl

    @hookimpl
    def hermes_register_sources(register):
        register(SourceInfo(name="goodsrc", label="Good source", short_label="good"))
"""

BROKEN_PLUGIN = """
    raise RuntimeError("this plugin is broken on purpose")
"""

MISSPELLED_PLUGIN = """
    from hermes_hookspecs import SourceInfo, hookimpl

    @hookimpl
    def hermes_register_sources(register):
        register(SourceInfo(name="typosrc", label="Typo source", short_label="typo"))

    @hookimpl
    def hermes_register_exprters(register):
        pass
"""


def duplicate_source_plugin(label: str) -> str:
    return f"""
    from hermes_hookspecs import SourceInfo, hookimpl

    @hookimpl
    def hermes_register_sources(register):
        register(SourceInfo(name="irc", label="{label}", short_label="irc"))
    """


@pytest.fixture
def good_and_broken(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    write_distribution(
        site, "hermes-good", {"hermes_good": GOOD_PLUGIN}, {"good": "hermes_good"}, "1.2.3"
    )
    write_distribution(
        site, "hermes-broken", {"hermes_broken": BROKEN_PLUGIN}, {"broken": "hermes_broken"}
    )
    return tmp_path


# ----------------------------------------------------------------------------- real entry points


def test_a_plugin_failing_to_import_is_reported_once_and_skipped(good_and_broken: Path) -> None:
    result = run_hermes(good_and_broken, ["plugins"])
    assert result.returncode == 0, result.stderr
    lines = stderr_lines(result)
    assert len(lines) == 1, result.stderr
    assert "'broken'" in lines[0]
    assert "hermes-broken" in lines[0]
    assert "this plugin is broken on purpose" in lines[0]
    assert "Traceback" not in result.stderr

    records = plugins_json(good_and_broken)
    assert "RuntimeError: this plugin is broken on purpose" in records["broken"]["error"]
    assert records["broken"]["distribution"] == "hermes-broken"
    assert records["good"]["error"] is None
    assert records["good"]["distribution"] == "hermes-good"
    assert records["good"]["version"] == "1.2.3"
    assert records["good"]["components"] == ["source:goodsrc"]


def test_sessions_list_still_works_with_a_broken_plugin(good_and_broken: Path) -> None:
    session_id = add_untitled_session(good_and_broken)
    as_json = run_hermes(good_and_broken, ["sessions", "list", "--json"])
    assert as_json.returncode == 0, as_json.stderr
    assert [row["id"] for row in json.loads(as_json.stdout)] == [session_id]

    # The untitled layout shows short origin labels, so this one loads the plugins.
    result = run_hermes(good_and_broken, ["sessions", "list"])
    assert result.returncode == 0, result.stderr
    assert session_id[:17] in result.stdout
    lines = stderr_lines(result)
    assert len(lines) == 1, result.stderr
    assert "hermes-broken" in lines[0]


def test_a_plugin_with_an_unknown_hook_is_unregistered_and_others_work(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_distribution(site, "hermes-good", {"hermes_good": GOOD_PLUGIN}, {"good": "hermes_good"})
    write_distribution(
        site, "hermes-typo", {"hermes_typo": MISSPELLED_PLUGIN}, {"typo": "hermes_typo"}
    )
    result = run_hermes(tmp_path, ["plugins", "--json"])
    assert result.returncode == 0, result.stderr
    lines = stderr_lines(result)
    assert len(lines) == 1, result.stderr
    assert "'typo'" in lines[0] and "hermes-typo" in lines[0]
    assert "hermes_register_exprters" in lines[0]

    records = {r["name"]: r for r in json.loads(result.stdout)}
    assert "hermes_register_exprters" in records["typo"]["error"]
    # Unregistered: its valid hook registered nothing either.
    assert records["typo"]["components"] == []
    assert records["good"]["error"] is None
    assert records["good"]["components"] == ["source:goodsrc"]


def test_strict_mode_turns_a_broken_plugin_into_a_failing_command(good_and_broken: Path) -> None:
    strict = {"HERMES_STRICT_PLUGINS": "1"}
    add_untitled_session(good_and_broken)
    for args in (["plugins"], ["sessions", "list"]):
        result = run_hermes(good_and_broken, args, env=strict)
        assert result.returncode != 0, (args, result.stdout)
        assert "hermes-broken" in result.stderr
        assert "this plugin is broken on purpose" in result.stderr


def test_hermes_plugins_selects_distributions_or_entry_point_names(good_and_broken: Path) -> None:
    for selection in ("hermes-good", "good", "HERMES_GOOD"):
        result = run_hermes(
            good_and_broken, ["plugins", "--json"], env={"HERMES_PLUGINS": selection}
        )
        assert result.returncode == 0, result.stderr
        assert [r["name"] for r in json.loads(result.stdout)] == ["good"], selection
        assert result.stderr.strip() == "", selection  # the broken one was never imported

    both = plugins_json(good_and_broken, env={"HERMES_PLUGINS": "hermes-good, broken"})
    assert sorted(both) == ["broken", "good"]


def test_empty_hermes_plugins_loads_none(good_and_broken: Path) -> None:
    result = run_hermes(good_and_broken, ["plugins", "--json"], env={"HERMES_PLUGINS": ""})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
    assert result.stderr.strip() == ""
    with_builtins = run_hermes(
        good_and_broken, ["plugins", "--json", "--all"], env={"HERMES_PLUGINS": ""}
    )
    names = {r["name"] for r in json.loads(with_builtins.stdout)}
    assert names == {"sources", "model_titles", "titles", "store_sqlite", "batch"}


def test_two_distributions_registering_one_source_name_both_are_named(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_distribution(
        site,
        "hermes-irc-one",
        {"hermes_irc_one": duplicate_source_plugin("One")},
        {"one": "hermes_irc_one"},
    )
    write_distribution(
        site,
        "hermes-irc-two",
        {"hermes_irc_two": duplicate_source_plugin("Two")},
        {"two": "hermes_irc_two"},
    )
    listing = run_hermes(tmp_path, ["plugins"])
    assert listing.returncode == 0, listing.stderr
    lines = stderr_lines(listing)
    assert len(lines) == 1, listing.stderr
    assert "hermes-irc-one" in lines[0] and "hermes-irc-two" in lines[0]
    assert "'irc'" in lines[0]

    add_untitled_session(tmp_path)
    result = run_hermes(tmp_path, ["sessions", "list"])
    assert result.returncode == 1, result.stdout
    lines = stderr_lines(result)
    assert len(lines) == 1, result.stderr
    assert "hermes-irc-one" in lines[0] and "hermes-irc-two" in lines[0]
    assert "Traceback" not in result.stderr


# ----------------------------------------------------------------------------- in-process host


def host_with(*plugins: tuple[str, object], reports: list[str] | None = None) -> PluginHost:
    sink = reports if reports is not None else []
    return PluginHost(load_entry_points=False, extra_plugins=plugins, report=sink.append)


class TitlePlugin:
    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.calls = 0

    @hookimpl
    def hermes_generate_title(self, session: Session) -> str | None:  # opt-in: no messages
        self.calls += 1
        return self.answer


def a_session() -> Session:
    return Session(id="20250101_000000_abcdef", source="cli", started_at=0.0)


def test_the_core_registers_22_builtin_sources_with_short_labels() -> None:
    host = host_with()
    sources = host.sources()
    assert len(sources) == 22
    assert {"cli", "telegram", "discord", "cron", "api-server"} <= set(sources)
    assert host.short_label("cli") == "cli"
    assert host.short_label("telegram") == "tele"
    assert host.short_label("discord") == "disc"
    assert all(len(source.short_label) <= 6 for source in sources.values())
    assert sources["cli"].interactive and sources["cli"].reapable
    assert sources["telegram"].gateway and sources["telegram"].supports_threads


def test_the_short_label_of_an_unknown_source_is_its_raw_name() -> None:
    assert host_with().short_label("claude-code") == "claude-code"


def test_a_plugin_source_gets_listed_with_its_short_label() -> None:
    class Irc:
        @hookimpl
        def hermes_register_sources(self, register: Any) -> None:
            register(SourceInfo(name="irc", label="IRC", short_label="irc"))

    host = host_with(("irc", Irc()))
    assert host.short_label("irc") == "irc"
    assert len(host.sources()) == 23
    [record] = host.describe()
    assert record.components == ["source:irc"]


def test_a_missing_exporter_names_the_distribution_to_install() -> None:
    host = host_with()
    with pytest.raises(MissingComponent, match=r"pip install hermes-export-html"):
        host.exporter("html")
    with pytest.raises(MissingComponent, match=r"no exporter 'nosuch'"):
        host.exporter("nosuch")


def test_two_plugins_registering_one_source_name_is_a_duplicate_component() -> None:
    class Clash:
        @hookimpl
        def hermes_register_sources(self, register: Any) -> None:
            register(SourceInfo(name="cli", label="Another CLI", short_label="cli2"))

    host = host_with(("clash", Clash()))
    with pytest.raises(DuplicateComponent, match=r"source 'cli'") as raised:
        host.sources()
    assert "hermes-sessions (plugin 'sources')" in str(raised.value)
    assert "(in-process) (plugin 'clash')" in str(raised.value)


def test_a_title_plugin_answer_beats_the_builtin_fallback() -> None:
    plugin = TitlePlugin("Plugin title")
    host = host_with(("titler", plugin))
    messages = [Message(role="user", content="Refactor the auth module please.")]
    assert host.generate_title(a_session(), messages) == "Plugin title"
    assert plugin.calls == 1


def test_a_title_plugin_answering_none_falls_through_to_the_builtin() -> None:
    plugin = TitlePlugin(None)
    host = host_with(("titler", plugin))
    messages = [Message(role="user", content="Refactor the auth module please.")]
    assert host.generate_title(a_session(), messages) == "Refactor the auth module please"
    assert plugin.calls == 1


def test_a_plugin_raising_in_session_started_is_reported_not_raised() -> None:
    seen: list[str] = []

    class Exploding:
        @hookimpl
        def hermes_session_started(self, session: Session) -> None:
            raise ValueError("boom")

    class Listening:
        @hookimpl
        def hermes_session_started(self, session: Session) -> None:
            seen.append(session.id)

    reports: list[str] = []
    host = host_with(("exploding", Exploding()), ("listening", Listening()), reports=reports)
    host.session_started(a_session())
    assert seen == [a_session().id]
    assert len(reports) == 1
    assert "'exploding'" in reports[0] and "hermes_session_started" in reports[0]
    assert "boom" in reports[0]


def test_an_in_process_plugin_with_an_unknown_hook_is_not_registered() -> None:
    class Misspelled:
        @hookimpl
        def hermes_register_exprters(self, register: Any) -> None:
            raise AssertionError("never called")

    reports: list[str] = []
    host = host_with(("misspelled", Misspelled()), reports=reports)
    assert not host.pm.has_plugin("misspelled")
    assert len(reports) == 1 and "hermes_register_exprters" in reports[0]
    assert host.records["misspelled"].error is not None


def test_strict_mode_raises_for_an_unknown_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    class Misspelled:
        @hookimpl
        def hermes_register_exprters(self, register: Any) -> None:
            pass

    monkeypatch.setenv("HERMES_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match="hermes_register_exprters"):
        host_with(("misspelled", Misspelled()))


def test_register_commands_adds_a_plugin_command_to_the_app() -> None:
    class Hello:
        @hookimpl
        def hermes_register_commands(self, app: typer.Typer) -> None:
            @app.command("hello", rich_help_panel="Plugins")
            def hello(name: str = "world") -> None:
                """Say hello."""
                typer.echo(f"Hello, {name}!")

    class Broken:
        @hookimpl
        def hermes_register_commands(self, app: typer.Typer) -> None:
            raise RuntimeError("cannot add commands")

    reports: list[str] = []
    host = host_with(("hello", Hello()), ("broken", Broken()), reports=reports)
    app = build_app(host)
    result = CliRunner().invoke(app, ["hello", "--name", "Ana"])
    assert result.exit_code == 0, result.output
    assert result.output == "Hello, Ana!\n"
    assert len(reports) == 1 and "'broken'" in reports[0]
    assert host.records["broken"].error == "RuntimeError: cannot add commands"


def test_a_duplicate_is_reported_the_same_way_every_time_without_doubling_components() -> None:
    class Clash:
        @hookimpl
        def hermes_register_sources(self, register: Any) -> None:
            register(SourceInfo(name="cli", label="Another CLI", short_label="cli2"))

    host = host_with(("clash", Clash()))
    seen = []
    for _ in range(3):
        with pytest.raises(DuplicateComponent) as raised:
            host.sources()
        seen.append((str(raised.value), list(host.records["sources"].components)))
    assert seen[0] == seen[1] == seen[2]
    components = seen[0][1]
    assert len(components) == len(set(components))


def test_a_plugin_failing_half_way_through_registering_leaves_nothing_behind() -> None:
    class HalfWay:
        @hookimpl
        def hermes_register_sources(self, register: Any) -> None:
            register(SourceInfo(name="first", label="First", short_label="1st"))
            raise RuntimeError("boom after the first source")

    reports: list[str] = []
    host = host_with(("halfway", HalfWay()), reports=reports)
    assert "first" not in host.sources()
    assert host.records["halfway"].components == []
    assert host.records["halfway"].error is not None
    assert any("halfway" in line and "boom" in line for line in reports)


def test_entry_points_sharing_a_name_with_a_builtin_or_each_other_keep_their_own_names(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    write_distribution(site, "hermes-one", {"hermes_one": GOOD_PLUGIN}, {"sources": "hermes_one"})
    write_distribution(
        site,
        "hermes-two",
        {"hermes_two": duplicate_source_plugin("Two")},
        {"sources": "hermes_two"},
    )
    records = plugins_json(tmp_path)
    assert records["sources@hermes-one"]["distribution"] == "hermes-one"
    assert records["sources@hermes-two"]["distribution"] == "hermes-two"
    assert records["sources@hermes-one"]["error"] is None
    assert records["sources@hermes-two"]["components"] == ["source:irc"]


def test_a_plugin_commands_user_facing_error_is_one_line(tmp_path: Path) -> None:
    write_distribution(
        tmp_path / "site",
        "hermes-archiver",
        {
            "hermes_archiver": """
                from hermes_hookspecs import UserFacingError, hookimpl

                @hookimpl
                def hermes_register_commands(app):
                    @app.command()
                    def archive() -> None:
                        raise UserFacingError("ARCHIVER_TOKEN is not set")
            """
        },
        {"archiver": "hermes_archiver"},
    )
    result = run_hermes(tmp_path, ["archive"])
    assert result.returncode == 1
    assert result.stderr.strip() == "hermes: ARCHIVER_TOKEN is not set"
