"""Figure (c): ``hermes sessions list`` start-up wall time against a bare typer hello-world.

Both commands run as fresh processes, alternating (one warm-up each first), so the ratio of
the medians is measured side by side under the same machine load. They run as a user's do:
with Python's bytecode cache, whatever ``PYTHONDONTWRITEBYTECODE`` the bench itself runs
under (set, every start would compile every module from source, the larger program far more).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HELLO_OUTPUT = "hello"
HELLO_APP = """import typer

app = typer.Typer()


@app.command()
def hello() -> None:
    print("hello")


app()
"""


@dataclass(frozen=True, slots=True)
class StartupResult:
    baseline_ms: list[float]
    command_ms: list[float]

    @property
    def baseline_median(self) -> float:
        return statistics.median(self.baseline_ms)

    @property
    def command_median(self) -> float:
        return statistics.median(self.command_ms)

    @property
    def ratio(self) -> float:
        return self.command_median / self.baseline_median


class CommandFailed(Exception):
    """The command under test did not run successfully."""


def write_hello_app(directory: Path) -> Path:
    path = directory / "typer_hello.py"
    path.write_text(HELLO_APP)
    return path


def hermes_command() -> list[str]:
    """The installed ``hermes`` console script, or the module as a fallback."""
    found = shutil.which("hermes") or shutil.which("hermes", path=str(Path(sys.executable).parent))
    if found:
        return [found]
    return [sys.executable, "-m", "hermes_core.cli.main"]


_USER_ENVIRONMENT = {
    name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"
}
"""The bench's environment, bytecode caching allowed (the warm-up run writes the caches)."""


def _run_once(command: Sequence[str]) -> float:
    started = time.perf_counter()
    completed = subprocess.run(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
        env=_USER_ENVIRONMENT,
    )
    elapsed = (time.perf_counter() - started) * 1000.0
    if completed.returncode != 0:
        lines = completed.stderr.decode(errors="replace").strip().splitlines()
        reason = lines[-1] if lines else "no error output"
        raise CommandFailed(f"`{' '.join(command)}` exited {completed.returncode}: {reason}")
    return elapsed


def time_alternating(baseline: Sequence[str], command: Sequence[str], runs: int) -> StartupResult:
    """Median-friendly samples of both commands, alternating which goes first."""
    _run_once(baseline)
    _run_once(command)
    baseline_ms: list[float] = []
    command_ms: list[float] = []
    for number in range(runs):
        if number % 2:
            command_ms.append(_run_once(command))
            baseline_ms.append(_run_once(baseline))
        else:
            baseline_ms.append(_run_once(baseline))
            command_ms.append(_run_once(command))
    return StartupResult(baseline_ms, command_ms)


def run_startup(workdir: Path, home: Path, runs: int) -> StartupResult:
    """Raises ``CommandFailed`` when ``hermes sessions list`` does not work (yet)."""
    hello = write_hello_app(workdir)
    baseline = [sys.executable, str(hello)]
    command = [*hermes_command(), "--home", str(home), "sessions", "list"]
    return time_alternating(baseline, command, runs)
