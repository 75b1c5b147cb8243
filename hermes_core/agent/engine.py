"""The turn engine: one user message in, the model's answer (and its tool calls) stored.

Every step is in the store as soon as it happens: the user turn before the model is called,
then each model call's assistant message (text, tool calls, reasoning, token count) and usage,
then each tool result. A failure or a cancel leaves all of that in place.

An interrupted answer (cancel, Ctrl-C, or a model failure mid-stream) is stored with the text
that arrived, followed by a blank line and :data:`INTERRUPTED_MARK`; tool calls it had not
finished are dropped.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from hermes_hookspecs import (
    Message,
    ModelError,
    ModelProvider,
    ModelRequest,
    ModelSettings,
    Session,
    TokenUsage,
    ToolCall,
)

from .compression import COMPRESSION_THRESHOLD, summary_message, summary_request
from .history import conversation_for_model, estimate_history_tokens, system_prompt_with_context
from .listener import TurnListener, TurnResult
from .streaming import CallOutcome, call_model
from .tools import Toolbox

if TYPE_CHECKING:
    from hermes_core.store.protocol import Store

MAX_TOOL_ROUNDS = 8
"""Model calls in one turn at most: the model may chain tool calls this many times."""
INTERRUPTED_MARK = "[interrupted]"
BRANCH_COPY_BATCH = 5000
"""A branch copies its parent's history in one transaction, read in batches of this size."""
_SILENT = TurnListener()


class TurnEngine:
    """Runs turns of a conversation against one store and one model."""

    def __init__(
        self,
        store: Store,
        provider: ModelProvider,
        settings: ModelSettings,
        *,
        system_prompt: str | None = None,
        tools: Toolbox | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.provider = provider
        self.settings = settings
        self.system_prompt = system_prompt
        self.tools = tools if tools is not None else Toolbox.default(store)
        self._clock = clock

    # ------------------------------------------------------------------ turns

    def run_turn(
        self,
        session_id: str,
        text: str,
        *,
        listener: TurnListener | None = None,
        cancel: threading.Event | None = None,
        platform_message_id: str | None = None,
        answer: bool = True,
        stream: bool = True,
    ) -> TurnResult:
        """Store ``text`` as the user's turn, then call the model (and the tools it asks for)
        until it answers without tool calls. Model failures come back in ``error``; a set
        ``cancel`` (or Ctrl-C) ends the turn with what arrived stored. ``platform_message_id``
        (the gateway's) is stored on the user turn, in the same write, so a platform that
        re-sends the message is recognised even when the process died right after storing it.
        ``answer=False`` stores the user's turn and stops there (a message too old to answer).
        ``stream=False``: nobody shows the answer as it arrives (a gateway reply sent whole),
        so the model may be asked for it in one piece (``ModelRequest.stream``); the listener
        then gets its text at once."""
        listener = listener or _SILENT
        user_turn = Message(
            role="user",
            content=text,
            timestamp=self._clock(),
            platform_message_id=platform_message_id,
        )
        self.store.append_message(session_id, user_turn)
        listener.on_user_turn(session_id)
        totals = TokenUsage(0, 0)
        if not answer:
            return TurnResult(session_id, "", (), totals)
        calls: list[ToolCall] = []
        history = self.store.messages(session_id)
        if self._over_budget(history):
            try:
                continuation = self._compress(session_id, history[:-1], listener)
            except ModelError as error:
                return TurnResult(session_id, "", (), totals, error=str(error))
            session_id = continuation.id
            self.store.append_message(session_id, user_turn)
            history = self.store.messages(session_id)
        for _ in range(MAX_TOOL_ROUNDS):
            outcome = call_model(
                self.provider, self._request(history, stream), self.settings, listener, cancel
            )
            stored = self._store_answer(session_id, outcome, listener)
            if outcome.usage is not None:
                totals = TokenUsage(
                    totals.input_tokens + outcome.usage.input_tokens,
                    totals.output_tokens + outcome.usage.output_tokens,
                )
            if stored is not None:
                history.append(stored)
            if outcome.error is not None or outcome.interrupted or not outcome.tool_calls:
                return TurnResult(
                    session_id,
                    outcome.answer,
                    tuple(calls),
                    totals,
                    error=outcome.error,
                    interrupted=outcome.interrupted,
                )
            calls.extend(outcome.tool_calls)
            for call in outcome.tool_calls:
                output = self.tools.run(call)
                result = Message(
                    role="tool",
                    content=output,
                    tool_call_id=call.id,
                    tool_name=call.name,
                    timestamp=self._clock(),
                )
                self.store.append_message(session_id, result)
                history.append(result)
                listener.on_tool_result(call, output)
            if cancel is not None and cancel.is_set():
                return TurnResult(session_id, "", tuple(calls), totals, interrupted=True)
        return TurnResult(
            session_id,
            "",
            tuple(calls),
            totals,
            error=f"the model was still calling tools after {MAX_TOOL_ROUNDS} rounds; "
            "the turn was stopped",
        )

    def _request(self, history: list[Message], stream: bool = True) -> ModelRequest:
        return ModelRequest(
            messages=conversation_for_model(history),
            system_prompt=system_prompt_with_context(self.system_prompt, history),
            tools=self.tools.definitions(),
            stream=stream,
        )

    def _store_answer(
        self, session_id: str, outcome: CallOutcome, listener: TurnListener
    ) -> Message | None:
        """Store what one model call produced and its usage (one transaction when there is a
        message); the stored message, if any."""
        usage = outcome.usage or TokenUsage(0, 0)
        unfinished = outcome.interrupted or outcome.error is not None
        text = outcome.answer
        if unfinished:
            outcome.tool_calls.clear()  # never run a call the person stopped or that broke off
            if text:
                text = f"{text}\n\n{INTERRUPTED_MARK}"
        if not text and not outcome.tool_calls:
            if outcome.usage is not None:
                self.store.record_usage(
                    session_id, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens
                )
                listener.on_usage(outcome.usage)
            return None
        calls = tuple(
            call if call.id else replace(call, id=f"call_{index}_{int(self._clock() * 1000)}")
            for index, call in enumerate(outcome.tool_calls)
        )
        outcome.tool_calls[:] = calls
        message = Message(
            role="assistant",
            content=text,
            tool_calls=calls,
            reasoning="".join(outcome.reasoning) or None,
            token_count=outcome.usage.output_tokens if outcome.usage is not None else None,
            timestamp=self._clock(),
        )
        message.id = self.store.append_message(
            session_id,
            message,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
        )
        message.session_id = session_id
        if outcome.usage is not None:
            listener.on_usage(outcome.usage)
        for call in calls:
            listener.on_tool_call(call)
        return message

    def _over_budget(self, history: list[Message]) -> bool:
        limit = self.settings.context_tokens
        return (
            limit is not None and estimate_history_tokens(history) > limit * COMPRESSION_THRESHOLD
        )

    # ------------------------------------------------------------------ compression

    def compress(self, session_id: str, *, listener: TurnListener | None = None) -> Session:
        """Summarise the session with the model and continue it in a new session (SPEC S6):
        the parent keeps its messages and is ended with reason ``compression``; a titled parent
        gives ``title #2``, ``#3``…; the summary seeds the continuation as a ``system``
        message. Returns the continuation. A ``ModelError`` leaves everything as it was."""
        return self._compress(session_id, self.store.messages(session_id), listener or _SILENT)

    def _compress(self, session_id: str, history: list[Message], listener: TurnListener) -> Session:
        summary = ""
        if history:
            outcome = call_model(
                self.provider,
                summary_request(history, self.settings.context_tokens),
                self.settings,
                _SILENT,
                None,
            )
            if outcome.error is not None:
                raise ModelError(outcome.error)
            if outcome.usage is not None:
                self.store.record_usage(
                    session_id,
                    input_tokens=outcome.usage.input_tokens,
                    output_tokens=outcome.usage.output_tokens,
                )
            summary = outcome.answer.strip()
            if not summary:
                raise ModelError("the model returned an empty summary; nothing was compressed")
        continuation = self.store.continue_after_compression(session_id)
        if summary:
            self.store.append_message(
                continuation.id, summary_message(session_id, summary, self._clock())
            )
            continuation = self.store.get_session(continuation.id)
        listener.on_compressed(self.store.get_session(session_id), continuation)
        return continuation

    # ------------------------------------------------------------------ branches

    def branch(self, session_id: str) -> Session:
        """A child session (``parent_kind`` branch; same source, workspace and model) holding a
        copy of the history so far. The original is left as it is."""
        original = self.store.get_session(session_id)
        child = self.store.create_session(
            original.source,
            gateway=len(original.id.rsplit("_", 1)[-1]) == 8,
            system_prompt=original.system_prompt,
            model_config=original.model_config,
            parent_session_id=original.id,
            parent_kind="branch",
            user_id=original.user_id,
            model=original.model,
            cwd=original.cwd,
            git_branch=original.git_branch,
            git_repo_root=original.git_repo_root,
            billing_provider=original.billing_provider,
        )
        copies = [
            replace(message, id=None, session_id=None)
            for message in self.store.iter_messages(session_id, batch=BRANCH_COPY_BATCH)
        ]
        self.store.append_messages(child.id, copies)
        return self.store.get_session(child.id)
