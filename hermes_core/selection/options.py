"""The bulk filter options (SPEC F1) as the command line offers them.

Commands that select sessions in bulk (``export``, ``prune``, ``archive``, and ``list`` for
the options it shares) declare the whole option set once with :func:`bulk_filter_options`
and turn the raw values into a :class:`SessionFilter` with :func:`filter_from_options`, which
parses and checks every value and raises :class:`FilterError` (one line, naming the flags).
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, TypeVar

import typer

from .filters import SessionFilter
from .timespec import FilterError, parse_time_value

__all__ = [
    "FILTERS_PANEL",
    "FILTER_OPTIONS",
    "FilterError",
    "FilterOption",
    "bulk_filter_options",
    "filter_from_options",
]

FILTERS_PANEL = "Filters"
"""The rich help panel every filter option is listed under."""

_WHEN = "a duration back from now (5h, 30m, 2d, 1w), a number of days, or a date (2026-07-05, "
_WHEN += "2026-07-05 14:30; local time unless a zone such as Z or +02:00 follows)"


@dataclass(frozen=True, slots=True)
class FilterOption:
    """One command-line filter option: its parameter name, flag, value type and help."""

    name: str
    flag: str
    kind: type[str] | type[int] | type[float]
    metavar: str
    help: str


def _bounds(
    measure: str, kind: type[int] | type[float], metavar: str, template: str
) -> list[FilterOption]:
    """The ``--min-…``/``--max-…`` pair; ``template`` has a ``{bound}`` such as "at least"."""
    flag = measure.replace("_", "-")
    return [
        FilterOption(
            f"{prefix}_{measure}", f"--{prefix}-{flag}", kind, metavar, template.format(bound=bound)
        )
        for prefix, bound in (("min", "at least"), ("max", "at most"))
    ]


FILTER_OPTIONS: tuple[FilterOption, ...] = (
    FilterOption(
        "older_than",
        "--older-than",
        str,
        "WHEN",
        f"Last activity (start, for empty sessions) before WHEN: {_WHEN}.",
    ),
    FilterOption(
        "newer_than",
        "--newer-than",
        str,
        "WHEN",
        "Last activity (start, for empty sessions) at or after WHEN.",
    ),
    FilterOption("before", "--before", str, "WHEN", "Started before WHEN."),
    FilterOption("after", "--after", str, "WHEN", "Started at or after WHEN."),
    FilterOption("source", "--source", str, "SOURCE", "Platform, exactly (cli, telegram, cron…)."),
    FilterOption("end_reason", "--end-reason", str, "REASON", "Why the session ended, exactly."),
    FilterOption("user", "--user", str, "USER_ID", "Messaging user id, exactly."),
    FilterOption("chat_id", "--chat-id", str, "CHAT_ID", "Messaging chat id, exactly."),
    FilterOption("chat_type", "--chat-type", str, "TYPE", "Chat type, exactly (dm, group…)."),
    FilterOption("provider", "--provider", str, "PROVIDER", "Billing provider, exactly."),
    FilterOption("title", "--title", str, "TEXT", "Part of the title (any case)."),
    FilterOption("model", "--model", str, "TEXT", "Part of the model name (any case)."),
    FilterOption("branch", "--branch", str, "TEXT", "Part of the git branch (any case)."),
    FilterOption("cwd", "--cwd", str, "DIR", "Working directory DIR or any folder below it."),
    *_bounds("messages", int, "N", "With {bound} N messages (inclusive)."),
    *_bounds("tokens", int, "N", "With {bound} N tokens, input plus output (inclusive)."),
    *_bounds(
        "cost", float, "USD", "Costing {bound} USD dollars, actual cost else estimated (inclusive)."
    ),
    *_bounds("tool_calls", int, "N", "With {bound} N tool calls (inclusive)."),
)
"""Every F1 option, in the order ``--help`` lists them."""

_TIME_WINDOWS = (
    ("newer_than", "older_than", "be active"),
    ("after", "before", "have started"),
)
"""(lower bound, upper bound, what a session must do in the window) for each time pair."""

_TEXT_FILTERS = (
    "source",
    "end_reason",
    "user",
    "chat_id",
    "chat_type",
    "provider",
    "title",
    "model",
    "branch",
)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def filter_from_options(
    *,
    older_than: str | None = None,
    newer_than: str | None = None,
    before: str | None = None,
    after: str | None = None,
    source: str | None = None,
    end_reason: str | None = None,
    user: str | None = None,
    chat_id: str | None = None,
    chat_type: str | None = None,
    provider: str | None = None,
    title: str | None = None,
    model: str | None = None,
    branch: str | None = None,
    cwd: str | None = None,
    workspace: str | None = None,
    min_messages: int | None = None,
    max_messages: int | None = None,
    min_tokens: int | None = None,
    max_tokens: int | None = None,
    min_cost: float | None = None,
    max_cost: float | None = None,
    min_tool_calls: int | None = None,
    max_tool_calls: int | None = None,
    ended_only: bool = False,
    include_archived: bool = True,
    include_delegates: bool = True,
    now: float | None = None,
) -> SessionFilter:
    """A checked :class:`SessionFilter` from raw option values.

    Time values are parsed against one ``now`` (default: the current time); ``cwd`` and
    ``workspace`` get ``~`` expanded, and a relative ``cwd`` is taken from the current
    directory. Raises :class:`FilterError` for an unparsable time, an empty text value, a
    negative or non-finite number, and for pairs that leave nothing to match (``--newer-than``
    not earlier than ``--older-than``, ``--after`` not earlier than ``--before``, a minimum
    above its maximum).
    """
    moment = time.time() if now is None else now
    raw_times = {
        "older_than": older_than,
        "newer_than": newer_than,
        "before": before,
        "after": after,
    }
    times = {
        name: None if raw is None else parse_time_value(raw, _flag(name), now=moment)
        for name, raw in raw_times.items()
    }
    for lower, upper, verb in _TIME_WINDOWS:
        low, high = times[lower], times[upper]
        if low is not None and high is not None and low >= high:
            raise FilterError(
                f"{_flag(lower)} {raw_times[lower]} and {_flag(upper)} {raw_times[upper]} leave an "
                f"empty window: no session can {verb} at or after {_local(low)} and before "
                f"{_local(high)} ({_flag(lower)} must be the earlier time)"
            )
    texts = {
        "source": source,
        "end_reason": end_reason,
        "user": user,
        "chat_id": chat_id,
        "chat_type": chat_type,
        "provider": provider,
        "title": title,
        "model": model,
        "branch": branch,
    }
    for name in _TEXT_FILTERS:
        _check_not_blank(texts[name], _flag(name))
    _check_not_blank(cwd, "--cwd")
    _check_not_blank(workspace, "--workspace")
    bounds: dict[str, int | float | None] = {
        "min_messages": min_messages,
        "max_messages": max_messages,
        "min_tokens": min_tokens,
        "max_tokens": max_tokens,
        "min_cost": min_cost,
        "max_cost": max_cost,
        "min_tool_calls": min_tool_calls,
        "max_tool_calls": max_tool_calls,
    }
    _check_bounds(bounds)
    return SessionFilter(
        older_than=times["older_than"],
        newer_than=times["newer_than"],
        before=times["before"],
        after=times["after"],
        source=source,
        end_reason=end_reason,
        user=user,
        chat_id=chat_id,
        chat_type=chat_type,
        provider=provider,
        title=title,
        model=model,
        branch=branch,
        cwd=None if cwd is None else os.path.abspath(os.path.expanduser(cwd)),
        workspace=None if workspace is None else os.path.expanduser(workspace),
        min_messages=min_messages,
        max_messages=max_messages,
        min_tokens=min_tokens,
        max_tokens=max_tokens,
        min_cost=min_cost,
        max_cost=max_cost,
        min_tool_calls=min_tool_calls,
        max_tool_calls=max_tool_calls,
        ended_only=ended_only,
        include_archived=include_archived,
        include_delegates=include_delegates,
    )


def _local(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S")


def _check_not_blank(value: str | None, flag: str) -> None:
    if value is not None and not value.strip():
        raise FilterError(f"{flag}: the value is empty")


def _check_bounds(bounds: dict[str, int | float | None]) -> None:
    for name, value in bounds.items():
        if value is None:
            continue
        if not math.isfinite(value):
            raise FilterError(f"{_flag(name)}: {value} is not a finite number")
        if value < 0:
            raise FilterError(f"{_flag(name)}: {value} is negative")
    for name, low in bounds.items():
        if not name.startswith("min_"):
            continue
        upper = "max_" + name.removeprefix("min_")
        high = bounds[upper]
        if low is not None and high is not None and low > high:
            raise FilterError(
                f"{_flag(name)} {low} and {_flag(upper)} {high} leave an empty range: "
                f"the minimum is above the maximum"
            )


_Result = TypeVar("_Result")


def bulk_filter_options(command: Callable[..., _Result]) -> Callable[..., _Result]:
    """Give a typer command every F1 filter option, collected into ``filter_options``.

    ``command`` must take a keyword parameter ``filter_options: dict[str, object]``; it
    receives ``{name: value}`` for every option of :data:`FILTER_OPTIONS` (``None`` when not
    given), ready for ``filter_from_options(**filter_options, ...)``. The options are shown
    in the "Filters" help panel.
    """
    signature = inspect.signature(command, eval_str=True)
    if "filter_options" not in signature.parameters:
        raise TypeError(f"{command.__qualname__} has no 'filter_options' parameter")
    clashes = {option.name for option in FILTER_OPTIONS} & set(signature.parameters)
    if clashes:
        raise TypeError(f"{command.__qualname__} already has {', '.join(sorted(clashes))}")
    kept = [p for p in signature.parameters.values() if p.name != "filter_options"]
    variadic = [p for p in kept if p.kind is inspect.Parameter.VAR_KEYWORD]
    regular = [p for p in kept if p.kind is not inspect.Parameter.VAR_KEYWORD]
    parameters = [*regular, *(_parameter(option) for option in FILTER_OPTIONS), *variadic]

    @functools.wraps(command)
    def with_filter_options(*args: Any, **kwargs: Any) -> _Result:
        filter_options = {option.name: kwargs.pop(option.name, None) for option in FILTER_OPTIONS}
        return command(*args, filter_options=filter_options, **kwargs)

    with_filter_options.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=parameters
    )
    with_filter_options.__annotations__ = {
        p.name: p.annotation for p in parameters if p.annotation is not inspect.Parameter.empty
    }
    if signature.return_annotation is not inspect.Signature.empty:
        with_filter_options.__annotations__["return"] = signature.return_annotation
    return with_filter_options


def _parameter(option: FilterOption) -> inspect.Parameter:
    typer_option = typer.Option(
        option.flag,
        help=option.help,
        metavar=option.metavar,
        rich_help_panel=FILTERS_PANEL,
        show_default=False,
    )
    return inspect.Parameter(
        option.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[option.kind | None, typer_option],
    )
