"""``hermes demo``: fill a throwaway home with sample sessions and show what the tool does."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from .context import cli_context
from .echo import echo
from .errors import fail, handle_user_errors


def register(app: typer.Typer) -> None:
    @app.command("demo")
    @handle_user_errors
    def demo(
        ctx: typer.Context,
        into: Annotated[
            Path | None,
            typer.Option(
                "--into", help="Directory to use as the demo's Hermes home (must be empty or new)."
            ),
        ] = None,
    ) -> None:
        """Create sample sessions in a throwaway home, then list them and show one."""
        import tempfile

        from hermes_core.demo import fill_demo_store
        from hermes_core.plugins import PluginHost
        from hermes_core.store import SessionStore
        from hermes_core.store.backends import default_url

        from .app import build_app

        root = cli_context(ctx)
        home = into if into is not None else Path(tempfile.mkdtemp(prefix="hermes-demo-"))
        if home.exists() and any(home.iterdir()):
            raise fail(f"{home} is not empty; the demo only writes into a new or empty directory")
        host = root.host_override or PluginHost()
        with SessionStore.open(home, events=host) as store:
            ids = fill_demo_store(store)
        echo(f"Demo home with {len(ids)} sample sessions: {home}\n")
        app = build_app(host, with_plugin_commands=False)
        for title, args in (
            ("hermes sessions list", ["sessions", "list"]),
            ("hermes sessions stats", ["sessions", "stats"]),
            ("hermes sessions show 'refactoring auth'", ["sessions", "show", "refactoring auth"]),
        ):
            echo(f"$ {title}")
            # The demo store is the SQLite file of the demo home, whatever store.url says.
            with contextlib.suppress(SystemExit), _store_url(default_url(home)):
                app(["--home", str(home), *args], prog_name="hermes", standalone_mode=False)
            echo("")
        echo("Try more against the demo home:")
        echo(f"  hermes --home {home} sessions list --all")
        echo(f"  hermes --home {home} sessions show 'my project'     # newest of its lineage")
        echo(f"  hermes --home {home} sessions pinned")
        echo(f"  hermes --home {home} sessions search retry        # highlighted matches")
        echo(f"  hermes --home {home} sessions browse               # search as you type")
        echo(
            f"  hermes --home {home} sessions export {home}/all.html --format html"
            "   # one self-contained page"
        )


@contextlib.contextmanager
def _store_url(url: str) -> Iterator[None]:
    """``HERMES_STORE_URL`` set to ``url`` for the duration of the block."""
    import os

    from hermes_core.store.backends import STORE_URL_ENV

    before = os.environ.get(STORE_URL_ENV)
    os.environ[STORE_URL_ENV] = url
    try:
        yield
    finally:
        if before is None:
            del os.environ[STORE_URL_ENV]
        else:
            os.environ[STORE_URL_ENV] = before
