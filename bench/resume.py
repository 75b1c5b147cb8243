"""Figure (u): resuming a long session, and ``hermes -c`` start-up.

- ``resume_in_process_*``: in one process, what ``hermes -c`` does between opening the store and
  showing the prompt — resolve the bare ``-c`` (crumb, else the most recent CLI session), reopen
  the session, build the recap from its 10,000 stored messages, draw the panel (into a buffer),
  and build the prompt_toolkit prompt — the chat's own modules, timed per repeat.
- ``resume_to_prompt_*``: the installed ``hermes -c`` in a pseudo-terminal (pexpect), from spawn
  until the prompt mark is drawn, on the home holding that session; ``fresh_to_prompt`` the same
  on an empty home, so their difference is what the resume costs end to end.
- ``startup_continue_ratio``: ``hermes -c`` spawn → prompt against a bare typer hello-world
  spawn → exit, both through the same pseudo-terminal, alternating, medians (target ≤ 1.25):
  each until the terminal is ready for the person's next input (the hello-world's shell prompt
  comes back when it exits). ``startup_continue_ratio_first_output`` (context) divides by the
  hello-world's spawn → "hello" shown instead, which leaves its interpreter shutdown out.

Both run from cached bytecode, as an installed program does: ``PYTHONDONTWRITEBYTECODE`` is
removed from their environment (as in figure (i)) and the dropped warm-up round writes the
caches. With it set, every start compiles every module it imports from source, which charges
each side for the size of its code rather than for what it does at start.

No model is contacted: the chat only needs one configured (an unused local address).
"""

from __future__ import annotations

import io
import os
import shutil
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from hermes_hookspecs import Message

from bench.corpusfile import CorpusFile
from bench.importing import UNSET
from bench.ingest import corpus_messages, fresh_home
from bench.startup import HELLO_APP, HELLO_OUTPUT
from hermes_core.store.store import SessionStore

RESUME_MESSAGES = 10_000
PROMPT_MARK = "›"
UNUSED_ENDPOINT = "http://127.0.0.1:9/v1"
"""Never contacted: nothing is sent at the prompt."""


@dataclass(frozen=True, slots=True)
class ResumeResult:
    messages: int
    in_process_ms: list[float]
    resume_to_prompt_ms: list[float]
    fresh_to_prompt_ms: list[float]
    hello_ms: list[float]
    """The hello-world, spawn → exit."""
    hello_output_ms: list[float]
    """The hello-world, spawn → its output shown."""

    @staticmethod
    def median(samples: Sequence[float]) -> float:
        return statistics.median(samples)

    @staticmethod
    def p95(samples: Sequence[float]) -> float:
        ordered = sorted(samples)
        return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]

    @property
    def startup_ratio(self) -> float:
        return self.median(self.resume_to_prompt_ms) / self.median(self.hello_ms)

    @property
    def first_output_ratio(self) -> float:
        return self.median(self.resume_to_prompt_ms) / self.median(self.hello_output_ms)


def _messages(corpus: CorpusFile, wanted: int) -> Iterator[Message]:
    given = 0
    sessions = max(1, wanted // 100 + 1)
    for chunk in corpus.chunks(sessions, sessions):
        for session in chunk:
            for message in corpus_messages(session):
                if given == wanted:
                    return
                given += 1
                yield message


def build_resume_home(corpus: CorpusFile, home: Path, messages: int) -> str:
    """A home holding one CLI session of ``messages`` corpus messages; its id."""
    fresh_home(home)
    with SessionStore.open(home) as store:
        session = store.create_session("cli", title="bench resume", cwd=str(home))
        batch: list[Message] = []
        for message in _messages(corpus, messages):
            batch.append(message)
            if len(batch) == 1000:
                store.append_messages(session.id, batch)
                batch = []
        store.append_messages(session.id, batch)
        store.end_session(session.id, "user_exit")
        return session.id


def time_in_process(home: Path, repeats: int) -> list[float]:
    """The resume path of the chat, timed in this process (see the module docstring)."""
    from prompt_toolkit import PromptSession, print_formatted_text
    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput
    from prompt_toolkit.output.vt100 import Vt100_Output

    from hermes_core.chat.crumbs import CrumbJar
    from hermes_core.chat.recap import recap_of_session, recap_panel
    from hermes_core.chat.repl import PROMPT
    from hermes_core.chat.resume import ResumeRequest, resolve_resume

    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        with SessionStore.open(home) as store:
            choice = resolve_resume(
                store, ResumeRequest(continue_=""), crumbs=CrumbJar(home), terminal="bench"
            )
            assert choice.session_id is not None
            store.reopen_session(choice.session_id)
            session = store.get_session(choice.session_id)
            recap = recap_of_session(store, session.id)
            drawn = Vt100_Output(io.StringIO(), lambda: Size(rows=40, columns=120))
            print_formatted_text(recap_panel(session, recap, 120), output=drawn)
            with create_pipe_input() as pipe:
                PromptSession(PROMPT, input=pipe, output=DummyOutput())
        samples.append((time.perf_counter() - started) * 1000.0)
    return samples


def _environment(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HERMES_", "TMUX")) and k not in UNSET
    }
    env.update(
        HERMES_HOME=str(home),
        HERMES_MODEL_BASE_URL=UNUSED_ENDPOINT,
        HERMES_MODEL="bench",
        PROMPT_TOOLKIT_NO_CPR="1",
        TERM="xterm-256color",
    )
    return env


def _hermes() -> str:
    found = shutil.which("hermes", path=str(Path(sys.executable).parent)) or shutil.which("hermes")
    if found is None:
        raise RuntimeError("the hermes console script is not installed")
    return found


def _to_prompt(command: str, args: list[str], env: dict[str, str]) -> float:
    import pexpect

    started = time.perf_counter()
    child = pexpect.spawn(command, args, env=env, encoding="utf-8", timeout=60)
    child.expect_exact(PROMPT_MARK)
    elapsed = (time.perf_counter() - started) * 1000.0
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    return elapsed


def _hello(script: Path, env: dict[str, str]) -> tuple[float, float]:
    """The hello-world's (spawn → output shown, spawn → exit) in milliseconds."""
    import pexpect

    started = time.perf_counter()
    child = pexpect.spawn(sys.executable, [str(script)], env=env, encoding="utf-8", timeout=60)
    child.expect_exact(HELLO_OUTPUT)
    shown = (time.perf_counter() - started) * 1000.0
    child.expect(pexpect.EOF)
    elapsed = (time.perf_counter() - started) * 1000.0
    child.close()
    if child.exitstatus != 0:
        raise RuntimeError("the typer hello-world failed")
    return shown, elapsed


def run_resume(corpus: CorpusFile, workdir: Path, runs: int, repeats: int) -> ResumeResult:
    """Build the homes (untimed), then take every figure."""
    home = workdir / "resume-home"
    empty = fresh_home(workdir / "resume-empty-home")
    build_resume_home(corpus, home, RESUME_MESSAGES)
    in_process = time_in_process(home, repeats)
    hello = workdir / "typer_hello.py"
    hello.write_text(HELLO_APP)
    hermes = _hermes()
    resumed, fresh, baseline, baseline_output = [], [], [], []
    # The first round warms the caches up (the OS's, and the bytecode caches) and is dropped.
    for number in range(runs + 1):
        order = [0, 1, 2] if number % 2 else [2, 1, 0]
        taken: dict[int, float] = {}
        for which in order:
            if which == 0:
                taken[0] = _to_prompt(hermes, ["-c"], _environment(home))
            elif which == 1:
                taken[1] = _to_prompt(hermes, ["chat"], _environment(empty))
            else:
                taken[3], taken[2] = _hello(hello, _environment(empty))
        if number:
            resumed.append(taken[0])
            fresh.append(taken[1])
            baseline.append(taken[2])
            baseline_output.append(taken[3])
    return ResumeResult(RESUME_MESSAGES, in_process, resumed, fresh, baseline, baseline_output)
