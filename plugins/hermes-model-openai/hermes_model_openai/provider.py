"""The ``openai`` provider: Chat Completions through the official SDK.

A call sends ``stream=True`` with ``stream_options={"include_usage": True}``. Text and
reasoning deltas (``reasoning_content`` or ``reasoning``, as llama.cpp, vLLM, Ollama and
DeepSeek-style endpoints stream it) are yielded as they arrive; tool calls are assembled from
their fragments and yielded whole when the answer ends; then one ``TokenUsage``. An endpoint
that sends no usage gets an estimate (4 characters per token of the request and the answer).

A request with ``stream=False`` (nobody shows the answer as it arrives: a gateway reply sent
whole, an automatic title) is one non-streamed call instead — one JSON answer to read rather
than a stream of chunks — yielding the same events: the reasoning, the text, each tool call,
the usage.

Timeouts are ``settings.timeout_seconds``; the SDK retries rate limits (429), server errors
(5xx), timeouts and dropped connections ``settings.max_retries`` times with exponential
back-off (honouring ``Retry-After``). Every failure is a one-line ``ModelError``.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import (
    ModelError,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    ReasoningDelta,
    TextDelta,
    TokenUsage,
    ToolCall,
)

from .assembling import ToolCallAssembler
from .errors import model_error
from .messages import chat_messages, chat_tools, request_chars

if TYPE_CHECKING:
    import openai

CHARS_PER_TOKEN = 4
NO_KEY = "no-key"
"""Sent as the key when none is configured: local servers (llama.cpp, Ollama) need none, and
the SDK would otherwise read ``OPENAI_API_KEY`` behind our back."""


class OpenAIProvider:
    """Any OpenAI-compatible Chat Completions endpoint, by ``model.base_url``."""

    name = "openai"
    description = (
        "OpenAI-compatible endpoints (OpenAI, llama.cpp server, Ollama, vLLM) via the openai SDK"
    )

    def __init__(self) -> None:
        self._clients: dict[tuple[Any, ...], openai.OpenAI] = {}
        self._lock = threading.Lock()

    def _client(self, settings: ModelSettings) -> openai.OpenAI:
        key = (settings.base_url, settings.api_key, settings.timeout_seconds, settings.max_retries)
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                import openai

                client = openai.OpenAI(
                    base_url=settings.base_url,
                    api_key=settings.api_key or NO_KEY,
                    timeout=settings.timeout_seconds,
                    max_retries=settings.max_retries,
                )
                self._clients[key] = client
            return client

    def stream(self, request: ModelRequest, settings: ModelSettings) -> Iterator[ModelEvent]:
        """Call the endpoint and yield the answer as it streams, or at once when
        ``request.stream`` is False (see the module docstring)."""
        if not settings.model:
            raise ModelError(
                "no model name is configured: set model.name in config.yaml or HERMES_MODEL"
            )
        parameters: dict[str, Any] = {"model": settings.model, "messages": chat_messages(request)}
        if request.tools:
            parameters["tools"] = chat_tools(request)
        if request.max_output_tokens is not None:
            parameters["max_tokens"] = request.max_output_tokens
        if not request.stream:
            yield from self._complete(request, settings, parameters)
            return
        parameters["stream"] = True
        parameters["stream_options"] = {"include_usage": True}
        yield from self._stream(request, settings, parameters)

    def _complete(
        self, request: ModelRequest, settings: ModelSettings, parameters: dict[str, Any]
    ) -> Iterator[ModelEvent]:
        """One non-streamed call; its events, all at once (raises before yielding any)."""
        try:
            answer = _create_completion(self._client(settings), parameters)
        except Exception as error:
            raise model_error(error, settings) from None
        try:
            events = _completion_events(answer)
        except ValueError as error:
            raise model_error(error, settings) from None
        answer_chars = 0
        for event in events:
            if isinstance(event, TextDelta):
                answer_chars += len(event.text)
            elif isinstance(event, ToolCall):
                _check_named(event, settings)
                answer_chars += len(event.arguments)
            yield event
        counts = answer.get("usage")
        if isinstance(counts, Mapping):
            yield TokenUsage(
                _count(counts.get("prompt_tokens")), _count(counts.get("completion_tokens"))
            )
        else:
            yield TokenUsage(_estimate(request_chars(request)), _estimate(answer_chars))

    def _stream(
        self, request: ModelRequest, settings: ModelSettings, parameters: dict[str, Any]
    ) -> Iterator[ModelEvent]:
        """One streamed call; its events as they arrive."""
        try:
            chunks = _create_stream(self._client(settings), parameters)
        except Exception as error:
            raise model_error(error, settings) from None
        calls = ToolCallAssembler()
        usage: TokenUsage | None = None
        answer_chars = 0
        started = False
        try:
            with chunks:
                for chunk in chunks:
                    started = True
                    if not isinstance(chunk, Mapping):
                        raise ValueError("a streamed chunk is not a JSON object")
                    counts = chunk.get("usage")
                    if isinstance(counts, Mapping):
                        usage = TokenUsage(
                            _count(counts.get("prompt_tokens")),
                            _count(counts.get("completion_tokens")),
                        )
                    choices = chunk.get("choices") or ()
                    if not isinstance(choices, list | tuple):
                        raise ValueError("a streamed chunk's choices are not a list")
                    for choice in choices:
                        delta = choice.get("delta") if isinstance(choice, Mapping) else None
                        if not isinstance(delta, Mapping):
                            continue
                        reasoning = _reasoning_of(delta)
                        if reasoning:
                            yield ReasoningDelta(reasoning)
                        content = delta.get("content")
                        if isinstance(content, str) and content:
                            answer_chars += len(content)
                            yield TextDelta(content)
                        for fragment in delta.get("tool_calls") or ():
                            calls.add(fragment)
        except Exception as error:
            raise model_error(error, settings, mid_answer=started) from None
        for call in calls.finish():
            _check_named(call, settings)
            answer_chars += len(call.arguments)
            yield call
        if usage is None:
            usage = TokenUsage(_estimate(request_chars(request)), _estimate(answer_chars))
        yield usage


def _check_named(call: ToolCall, settings: ModelSettings) -> None:
    if not call.name:
        raise ModelError(
            f"the model endpoint {settings.base_url or 'api.openai.com'} sent a tool "
            "call without a name (a malformed answer)"
        )


def _create_completion(client: openai.OpenAI, parameters: dict[str, Any]) -> Mapping[str, Any]:
    """``POST /chat/completions`` not streamed, through ``client.post`` as
    :func:`_create_stream` does; the answer comes as the JSON object the endpoint sent
    (``cast_to=object``). Retries, timeouts and errors are the SDK's."""
    answer = client.post("/chat/completions", body=parameters, cast_to=object)
    if not isinstance(answer, Mapping):
        raise ValueError("the answer is not a JSON object")
    return answer


def _completion_events(answer: Mapping[str, Any]) -> list[ModelEvent]:
    """The reasoning, text and tool calls of a non-streamed answer's first choice, in the
    order a stream gives them; ValueError when its shape is not a chat completion's."""
    choices = answer.get("choices")
    if not isinstance(choices, list | tuple) or not choices:
        raise ValueError("the answer has no choices")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, Mapping) else None
    if not isinstance(message, Mapping):
        raise ValueError("the answer's choice has no message")
    events: list[ModelEvent] = []
    reasoning = _reasoning_of(message)
    if reasoning:
        events.append(ReasoningDelta(reasoning))
    content = message.get("content")
    if isinstance(content, str) and content:
        events.append(TextDelta(content))
    calls = message.get("tool_calls") or ()
    if not isinstance(calls, list | tuple):
        raise ValueError("the answer's tool calls are not a list")
    assembler = ToolCallAssembler()
    for index, call in enumerate(calls):
        if not isinstance(call, Mapping):
            raise ValueError("a tool call is not an object")
        assembler.add({**call, "index": index})
    events.extend(assembler.finish())
    return events


def _create_stream(client: openai.OpenAI, parameters: dict[str, Any]) -> Any:
    """``POST /chat/completions`` streamed, through the SDK's documented ``client.post`` (its
    way to send a body as it is): ``chat.completions.create`` would first walk every message of
    the history through the SDK's type-driven transform — the costliest step of a gateway turn
    (most of its CPU time with a long history), and a no-op for the plain JSON objects
    :func:`.messages.chat_messages` builds. Each chunk comes as the JSON object the endpoint
    sent (``cast_to=object``), read with ``.get`` by :meth:`OpenAIProvider.stream`: building
    the SDK's typed chunk objects cost more CPU than the rest of reading the stream. Retries,
    timeouts and errors are the SDK's as with ``create``."""
    from openai.types.chat import ChatCompletion

    return client.post(
        "/chat/completions",
        body=parameters,
        cast_to=ChatCompletion,
        stream=True,
        stream_cls=_reusing_stream_class()[object],
    )


@functools.cache
def _reusing_stream_class() -> Any:
    """``openai.Stream`` that reads the rest of the HTTP body when ``[DONE]`` arrives, so the
    connection goes back to the pool: the synchronous SDK closes the response right after
    ``[DONE]`` with the chunked body's last bytes unread, which closes the connection, and
    every model call of a busy gateway paid a new TCP (for a remote endpoint, TLS) handshake.
    The SDK's asynchronous stream does the same draining."""
    from typing import TypeVar

    import openai

    chunk = TypeVar("chunk")

    class ReusingStream(openai.Stream[chunk]):
        def _iter_events(self) -> Iterator[Any]:
            for event in super()._iter_events():
                if event.data.startswith("[DONE]") and self.response.http_version == "HTTP/1.1":
                    with contextlib.suppress(Exception):  # only a courtesy to the pool
                        for _ in self.response.stream:  # type: ignore[union-attr]
                            pass
                yield event

    return ReusingStream


def _reasoning_of(delta: Mapping[str, Any]) -> str | None:
    for name in ("reasoning_content", "reasoning"):
        value = delta.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _count(value: Any) -> int:
    """A token count of the usage object (0 when missing or not a whole number)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _estimate(chars: int) -> int:
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
