"""What ``hermes batch`` shows: progress while it runs, the summary at the end.

On a terminal the progress is a ``rich`` bar; otherwise one plain line per finished prompt
(and nothing at all with ``--json``, whose stdout is the summary document alone). The summary
counts done, failed, malformed (with line numbers), answered before (``--resume``) and not run
(stopped), lists each prompt's session, and sums the tokens.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from hermes_core.cli.echo import echo, echo_json

from .prompts import BatchPrompt, Malformed
from .runner import Outcome


class Progress(Protocol):
    """Told about each prompt as it starts and ends (from worker threads)."""

    def started(self, prompt: BatchPrompt) -> None: ...
    def finished(self, outcome: Outcome) -> None: ...
    def close(self) -> None: ...


class SilentProgress:
    """Shows nothing (``--json``)."""

    def started(self, prompt: BatchPrompt) -> None:
        """Nothing."""

    def finished(self, outcome: Outcome) -> None:
        """Nothing."""

    def close(self) -> None:
        """Nothing."""


class PlainProgress:
    """One line per finished prompt, for a log or a pipe."""

    def __init__(self, total: int) -> None:
        self._total = total
        self._count = 0
        self._lock = threading.Lock()

    def started(self, prompt: BatchPrompt) -> None:
        """Nothing: the line comes when it ends."""

    def finished(self, outcome: Outcome) -> None:
        """``[3/10] line 4: done in 1a2b3c``."""
        with self._lock:
            self._count += 1
            echo(f"[{self._count}/{self._total}] {_outcome_line(outcome)}")

    def close(self) -> None:
        """Nothing."""


class BarProgress:
    """A ``rich`` progress bar on the terminal."""

    def __init__(self, total: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichProgress

        self._bar = RichProgress(
            TextColumn("[bold]batch"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed"),
            TimeElapsedColumn(),
            transient=True,
        )
        self._task = self._bar.add_task("batch", total=total, failed=0)
        self._failed = 0
        self._lock = threading.Lock()
        self._bar.start()

    def started(self, prompt: BatchPrompt) -> None:
        """Nothing: the bar moves when a prompt ends."""

    def finished(self, outcome: Outcome) -> None:
        """Advance the bar (and count a failure)."""
        with self._lock:
            self._failed += outcome.status == "failed"
            self._bar.update(self._task, advance=1, failed=self._failed)

    def close(self) -> None:
        """Take the bar away (the summary follows)."""
        self._bar.stop()


def _outcome_line(outcome: Outcome) -> str:
    where = f"line {outcome.prompt.line}"
    if outcome.prompt.item_id is not None:
        where += f" (id {outcome.prompt.item_id})"
    session = f" in {outcome.session_id}" if outcome.session_id else ""
    line = f"{where}: {outcome.status}{session}"
    if outcome.error:
        line += f" — {outcome.error}"
    if outcome.note:
        line += f" ({outcome.note})"
    return line


@dataclass
class BatchSummary:
    """Everything a batch run did, for people and for ``--json``."""

    file: str
    outcomes: list[Outcome] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)
    answered: list[tuple[BatchPrompt, str]] = field(default_factory=list)
    """Prompts skipped because an earlier run answered them (``--resume``), with that session."""
    not_run: list[BatchPrompt] = field(default_factory=list)
    stopped_by: str | None = None
    """The signal that stopped the run (``SIGTERM``), or ``--stop-on-error``."""

    @property
    def done(self) -> list[Outcome]:
        return [outcome for outcome in self.outcomes if outcome.status == "done"]

    @property
    def failed(self) -> list[Outcome]:
        return [outcome for outcome in self.outcomes if outcome.status == "failed"]

    def tokens(self) -> tuple[int, int]:
        """Input and output tokens over every prompt that ran."""
        return (
            sum(outcome.usage.input_tokens for outcome in self.outcomes),
            sum(outcome.usage.output_tokens for outcome in self.outcomes),
        )

    def exit_code(self, signal_number: int | None) -> int:
        """0 when every prompt ran and none failed; 1 when one failed; 128+N after signal N."""
        if signal_number is not None and self.not_run:
            return 128 + signal_number
        return 1 if self.failed or self.not_run else 0

    def as_json(self) -> dict[str, Any]:
        tokens_in, tokens_out = self.tokens()
        return {
            "file": self.file,
            "done": len(self.done),
            "failed": len(self.failed),
            "malformed": [{"line": m.line, "reason": m.reason} for m in self.malformed],
            "answered_before": [
                {"line": p.line, "id": p.item_id, "session_id": s} for p, s in self.answered
            ],
            "not_run": [{"line": p.line, "id": p.item_id} for p in self.not_run],
            "stopped_by": self.stopped_by,
            "tokens": {"input": tokens_in, "output": tokens_out},
            "prompts": [
                {
                    "line": o.prompt.line,
                    "id": o.prompt.item_id,
                    "status": o.status,
                    "session_id": o.session_id,
                    "error": o.error,
                    "note": o.note,
                    "tokens": {"input": o.usage.input_tokens, "output": o.usage.output_tokens},
                }
                for o in self.outcomes
            ],
        }

    def show(self, *, as_json: bool, listed: bool) -> None:
        """Print the summary; ``listed`` adds one line per prompt that ran (the plain progress
        already printed them)."""
        if as_json:
            echo_json(self.as_json())
            return
        if listed:
            for outcome in self.outcomes:
                echo(_outcome_line(outcome))
        parts = [f"{len(self.done)} done", f"{len(self.failed)} failed"]
        if self.malformed:
            lines = ", ".join(str(m.line) for m in self.malformed)
            parts.append(f"{len(self.malformed)} malformed line(s) skipped (line {lines})")
        if self.answered:
            parts.append(f"{len(self.answered)} answered before (skipped)")
        if self.not_run:
            parts.append(f"{len(self.not_run)} not run (stopped by {self.stopped_by})")
        tokens_in, tokens_out = self.tokens()
        echo(f"Batch {self.file}: " + ", ".join(parts) + ".")
        echo(f"Tokens: {tokens_in:,} in, {tokens_out:,} out.")
        for malformed in self.malformed:
            echo(f"  line {malformed.line}: skipped, {malformed.reason}")
        if self.done or self.failed:
            echo("See them with: hermes sessions list --source batch")
