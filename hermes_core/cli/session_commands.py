"""``hermes sessions list|show|rename|delete|pin|unpin|pinned`` (SPEC C1, C3, C4)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .context import CliContext, cli_context
from .echo import confirm, echo, echo_json
from .errors import UserError, handle_user_errors
from .formatting import iso_local, relative_time
from .listing import list_as_json, render_list, session_tokens


def register(sessions: typer.Typer) -> None:
    """Add the everyday session commands to the ``sessions`` group."""

    @sessions.command("list")
    @handle_user_errors
    def list_sessions(
        ctx: typer.Context,
        source: Annotated[
            str | None,
            typer.Option(help="Only this origin (cli, telegram…).", autocompletion=complete_source),
        ] = None,
        limit: Annotated[int, typer.Option(min=1, help="How many sessions to show.")] = 20,
        workspace: Annotated[
            str | None,
            typer.Option(
                help="Part of the workspace path (git repo root or cwd), or its folder name."
            ),
        ] = None,
        all_sessions: Annotated[
            bool, typer.Option("--all", help="Also show delegate/subagent sessions.")
        ] = False,
        as_json: Annotated[
            bool, typer.Option("--json", help="Print JSON (see docs/cli.md).")
        ] = False,
    ) -> None:
        """List recent sessions (archived ones hidden, pinned ones always shown)."""
        list_command(
            cli_context(ctx),
            source=source,
            limit=limit,
            workspace=workspace,
            all_sessions=all_sessions,
            as_json=as_json,
        )

    @sessions.command("show")
    @handle_user_errors
    def show(
        ctx: typer.Context,
        session: Annotated[str, typer.Argument(help="Session id, unique prefix or title.")],
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """Show a session and its conversation."""
        store = cli_context(ctx).store
        found = store.get_session(store.resolve(session))
        if as_json:
            payload = list_as_json([found], store.previews([found.id]))[0]
            payload["tokens"] = session_tokens(found)
            payload["messages"] = [
                {
                    "id": m.id,
                    "role": m.role,
                    "content": m.content,
                    "timestamp": iso_local(m.timestamp),
                    "tool_calls": [c.name for c in m.tool_calls],
                    "tool_name": m.tool_name,
                }
                for m in store.iter_messages(found.id)
            ]
            echo_json(payload)
            return
        echo(f"{found.title or '(untitled)'}")
        echo(f"  id: {found.id}   source: {found.source}   messages: {found.message_count}")
        state = f"ended ({found.end_reason})" if found.ended_at else "active"
        echo(
            f"  started: {iso_local(found.started_at)}   last active: "
            f"{relative_time(found.last_active_at or found.started_at)}   {state}"
        )
        if found.workspace or found.model:
            echo(f"  workspace: {found.workspace or '—'}   model: {found.model or '—'}")
        if found.parent_session_id:
            echo(f"  parent: {found.parent_session_id} ({found.parent_kind})")
        tokens = session_tokens(found)
        if any(tokens.values()):
            echo(
                f"  tokens: input {tokens['input']:,}   cache read {tokens['cache_read']:,}   "
                f"cache write {tokens['cache_write']:,}   output {tokens['output']:,}"
            )
        echo("")
        for message in store.iter_messages(found.id):
            echo(
                _render_message(
                    message.role,
                    message.content,
                    [c.name for c in message.tool_calls],
                    message.tool_name,
                )
            )

    @sessions.command("rename")
    @handle_user_errors
    def rename(
        ctx: typer.Context,
        session: Annotated[str, typer.Argument(help="Session id, unique prefix or title.")],
        title: Annotated[
            list[str], typer.Argument(help="The new title; several words need no quotes.")
        ],
    ) -> None:
        """Set or change a session's title (unique, at most 100 characters)."""
        store = cli_context(ctx).store
        session_id = store.resolve(session)
        renamed = store.set_title(session_id, " ".join(title))
        echo(f"Renamed {session_id} to '{renamed.title}'.")

    @sessions.command("delete")
    @handle_user_errors
    def delete(
        ctx: typer.Context,
        session: Annotated[str, typer.Argument(help="Session id, unique prefix or title.")],
        yes: Annotated[
            bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")
        ] = False,
    ) -> None:
        """Delete a session, its messages and its delegate/subagent sessions."""
        store = cli_context(ctx).store
        target = store.get_session(store.resolve(session))
        label = f"{target.id}" + (f" ('{target.title}')" if target.title else "")
        question = f"Delete session {label} and its {target.message_count} messages?"
        if not yes and not confirm(question):
            raise UserError("nothing deleted")
        deleted = store.delete_session(target.id)
        extra = f" and {len(deleted) - 1} delegate session(s)" if len(deleted) > 1 else ""
        echo(f"Deleted {label}{extra}.")

    @sessions.command("pin")
    @handle_user_errors
    def pin(
        ctx: typer.Context,
        sessions_: Annotated[
            list[str], typer.Argument(metavar="SESSION...", help="Ids, unique prefixes or titles.")
        ],
    ) -> None:
        """Pin sessions: always listed, never pruned or auto-archived."""
        _set_pins(cli_context(ctx), sessions_, True)

    @sessions.command("unpin")
    @handle_user_errors
    def unpin(
        ctx: typer.Context,
        sessions_: Annotated[
            list[str], typer.Argument(metavar="SESSION...", help="Ids, unique prefixes or titles.")
        ],
    ) -> None:
        """Remove the pin from sessions."""
        _set_pins(cli_context(ctx), sessions_, False)

    @sessions.command("pinned")
    @handle_user_errors
    def pinned(
        ctx: typer.Context,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """List pinned sessions."""
        context = cli_context(ctx)
        store = context.store
        found = [s for s in store.list_sessions(limit=0) if s.pinned]
        previews = store.previews([s.id for s in found])
        if as_json:
            echo_json(list_as_json(found, previews))
        elif not found:
            echo("No pinned sessions.")
        else:
            echo(render_list(found, previews, lambda name: context.host.short_label(name)))


def list_command(
    context: CliContext,
    *,
    source: str | None = None,
    limit: int = 20,
    workspace: str | None = None,
    all_sessions: bool = False,
    as_json: bool = False,
) -> None:
    """``hermes sessions list``, its options parsed (by typer, or by
    :mod:`~hermes_core.cli.list_fast_path`)."""
    from hermes_core.selection.filters import SessionFilter

    selection = SessionFilter(
        source=source,
        workspace=str(Path(workspace).expanduser())
        if workspace and workspace.startswith("~")
        else workspace,
        include_archived=False,
        include_delegates=all_sessions,
    )
    store = context.store
    found = store.list_sessions(selection, limit=limit)
    previews = store.previews([s.id for s in found])
    if as_json:
        echo_json(list_as_json(found, previews))
        return
    if not found:
        echo("No sessions found." if source or workspace else "No sessions yet.")
        return
    echo(render_list(found, previews, lambda name: context.host.short_label(name)))


def complete_source(incomplete: str) -> list[str]:
    """Shell completion for ``--source``: the registered origins."""
    from hermes_core.plugins import PluginHost

    names = PluginHost(report=lambda _line: None).sources()
    return sorted(name for name in names if name.startswith(incomplete))


def _set_pins(context: CliContext, references: list[str], pinned: bool) -> None:
    store = context.store
    ids = [store.resolve(reference) for reference in references]  # all resolve before any change
    store.set_pinned(ids, pinned)
    verb = "Pinned" if pinned else "Unpinned"
    for session_id in dict.fromkeys(ids):
        echo(f"{verb} {session_id}")


def _render_message(role: str, content: str, tool_calls: list[str], tool_name: str | None) -> str:
    if role == "tool":
        first = content.strip().splitlines()[0] if content.strip() else ""
        more = content.count("\n")
        suffix = f" (+{more} lines)" if more else ""
        return f"  ⎿ {tool_name or 'tool'} output: {first[:100]}{suffix}\n"
    marker = {"user": "●", "assistant": "◆"}.get(role, "·")
    text = content.strip()
    if tool_calls:
        calls = f"[{len(tool_calls)} tool call{'s' if len(tool_calls) != 1 else ''}: {', '.join(tool_calls)}]"
        text = f"{text}\n{calls}" if text else calls
    return f"{marker} {role}\n{_indent(text)}\n"


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())
