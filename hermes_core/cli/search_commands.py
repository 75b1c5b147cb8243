"""``hermes sessions search`` and ``hermes sessions browse`` (SPEC Q1–Q2, C2).

``search`` runs the agent's ``session_search`` discovery form and prints it for people (title,
when, origin, highlighted snippet, id); ``--json`` prints the tool's payload unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.core

from hermes_core.terminal_text import terminal_line, terminal_safe

from .context import CliContext, cli_context
from .echo import echo, echo_json
from .errors import UserError, handle_user_errors
from .formatting import relative_time
from .session_commands import complete_source

if TYPE_CHECKING:
    from .picker import PickerRow

SEARCH_DEFAULT_LIMIT = 10
BROWSE_SHOW_KEY = "tab"
"""In ``sessions browse``, Enter resumes the highlighted session; this key shows it."""


def register(sessions: typer.Typer) -> None:
    """Add ``search`` and ``browse`` to the ``sessions`` group."""

    @sessions.command("search")
    @handle_user_errors
    def search(
        ctx: typer.Context,
        query: Annotated[
            list[str],
            typer.Argument(
                metavar="QUERY...",
                help='What to look for (FTS5: words AND-ed, "phrase", OR, NOT, prefix*).',
            ),
        ],
        limit: Annotated[
            int, typer.Option(min=1, help="How many sessions (one per lineage; at most 10).")
        ] = SEARCH_DEFAULT_LIMIT,
        source: Annotated[
            str | None,
            typer.Option(help="Only this origin (cli, telegram…).", autocompletion=complete_source),
        ] = None,
        sort: Annotated[
            str | None,
            typer.Option(
                help="newest or oldest first instead of by relevance.",
                autocompletion=lambda: ["newest", "oldest"],
            ),
        ] = None,
        role: Annotated[
            str,
            typer.Option(
                help="Comma-separated roles to search: user, assistant, tool (tool output).",
            ),
        ] = "user,assistant",
        as_json: Annotated[
            bool, typer.Option("--json", help="Print the session_search payload as JSON.")
        ] = False,
    ) -> None:
        """Search every past conversation (archived ones included)."""
        from hermes_core.search import run_search

        text = " ".join(query).strip()
        if not text:
            raise UserError("give some words to search for")
        arguments: dict[str, Any] = {"query": text, "limit": limit, "role_filter": role}
        if source:
            arguments["source"] = source
        if sort:
            arguments["sort"] = sort
        payload = run_search(cli_context(ctx).store, arguments)
        if "error" in payload:
            message = str(payload["error"])
            for argument, option in (("role_filter", "--role"), ("sort", "--sort")):
                if message.startswith(argument):
                    message = option + message[len(argument) :]
            raise UserError(message)
        if as_json:
            echo_json(payload)
            return
        render_results(payload)

    @sessions.command("browse")
    @handle_user_errors
    def browse(ctx: typer.Context) -> None:
        """Pick a session interactively: type to search titles and messages; Enter resumes it
        in the chat, Tab shows it."""
        from .picker import is_interactive, pick_action

        if not is_interactive():
            raise UserError(
                "browse needs a terminal; use 'hermes sessions list' or "
                "'hermes sessions search QUERY' instead"
            )
        context = cli_context(ctx)
        chosen = pick_action(
            browse_source(context),
            title="Sessions — type to search",
            header=("Title", "Last Active", "Src", "Preview / match"),
            enter_label="resume",
            actions={BROWSE_SHOW_KEY: "show"},
        )
        if chosen is None:
            echo("Nothing chosen.")
            return
        session_id, action = chosen
        if action is None:
            from .chat_start import ChatOptions, start_chat

            start_chat(context, ChatOptions(resume=session_id))
            return
        parent = ctx.parent
        assert parent is not None and isinstance(parent.command, typer.core.TyperGroup)
        show = parent.command.get_command(parent, "show")
        assert show is not None
        with show.make_context("show", [session_id], parent=parent) as show_context:
            show.invoke(show_context)


def browse_source(context: CliContext) -> Callable[[str], list[PickerRow]]:
    """The picker's rows for what has been typed so far (see ``hermes_core.search.typeahead``)."""
    from hermes_core.search.typeahead import browse_rows

    from .picker import PickerRow

    def rows(typed: str) -> list[PickerRow]:
        now = time.time()
        return [
            PickerRow(
                row.session_id,
                (
                    row.title or "—",
                    relative_time(row.last_active_at, now),
                    context.host.short_label(row.source),
                    strip_markers(row.text),
                ),
            )
            for row in browse_rows(context.store, typed)
        ]

    return rows


def strip_markers(snippet: str) -> str:
    """A snippet without its ``>>>``/``<<<`` match markers."""
    from hermes_core.search import MATCH_END, MATCH_START

    return snippet.replace(MATCH_START, "").replace(MATCH_END, "")


def render_results(payload: dict[str, Any], *, now: float | None = None) -> None:
    """The human view of a discovery payload: one block per session, matches highlighted;
    stored text is never read as rich markup and shows its control characters as ``^[``…"""
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=True)
    results = payload["results"]
    if not results:
        console.print(terminal_safe(f"No sessions match {payload['query']!r}."), markup=False)
        return
    if payload.get("interpreted_as"):
        console.print(
            terminal_safe(f"(searched as {payload['interpreted_as']})"), style="dim", markup=False
        )
    moment = time.time() if now is None else now
    for number, result in enumerate(results, 1):
        console.print(_headline(number, result, moment))
        console.print(_snippet_text(result["snippet"]))
        console.print("")
    console.print("Show one with: hermes sessions show <id>", style="dim", markup=False)


def _headline(number: int, result: dict[str, Any], now: float) -> Any:
    import datetime as _dt

    from rich.text import Text

    when = result.get("last_active") or result.get("when")
    ago = relative_time(_dt.datetime.fromisoformat(when).timestamp(), now) if when else "—"
    line = Text(f"{number}. ")
    line.append(terminal_line(result.get("title") or "(untitled)"), style="bold")
    extras = [ago, terminal_line(result["source"])]
    if result.get("archived"):
        extras.append("archived")
    line.append("  " + " · ".join(extras), style="dim")
    line.append(f"  {terminal_line(result['session_id'])}", style="cyan")
    return line


def _snippet_text(snippet: str) -> Any:
    """The snippet with ``>>>match<<<`` turned into highlighting (markers gone), its control
    characters shown as ``^[``…"""
    from rich.text import Text

    from hermes_core.search import MATCH_END, MATCH_START

    text = Text("   ")
    rest = terminal_safe(snippet)
    while MATCH_START in rest:
        before, _, after = rest.partition(MATCH_START)
        match, found, tail = after.partition(MATCH_END)
        text.append(before)
        text.append(match, style="bold yellow")
        rest = tail if found else ""
    text.append(rest)
    return text
