"""A STAND-IN for an OpenAI-compatible Chat Completions endpoint, for tests only.

It is not OpenAI, llama.cpp, Ollama or vLLM: it is written from the public Chat Completions
API documentation (``POST /v1/chat/completions`` with ``stream: true`` answered as server-sent
events, chunked on a kept-alive connection — ``data: {chat.completion.chunk}`` lines ending with ``data: [DONE]``, tool calls
streamed in fragments by ``index``, a final usage chunk with empty ``choices`` when
``stream_options.include_usage`` is set; errors as ``{"error": {"message", "type", "code"}}``)
and answers only what a test scripted. It binds 127.0.0.1 only.

In a test::

    from standins.openai_server import OpenAIStandIn, Reply, ScriptedToolCall

    with OpenAIStandIn(api_key="sk-test") as server:       # serves on a free port
        server.add(Reply(text="Hello there", usage=(12, 3)))
        server.add(Reply(tool_calls=[ScriptedToolCall("session_search", '{"query": "docker"}')]))
        server.add(Reply.failure(429, times=3))           # three 429s, then the next reply
        server.add(Reply.hang(5.0))                       # sleeps past the client's timeout
        ... point the openai SDK (or hermes) at server.base_url ("http://127.0.0.1:N/v1") ...
        server.requests                                   # every request body received, in order
        server.wait_for_requests(2)                       # block until two have arrived

Replies are answered in the order added; a reply with ``match`` is kept for the first request
whose JSON body contains that text and skipped by the others. A reply with ``times=N`` answers
N requests (``None``: every request from then on). With no reply left, a request gets HTTP 400
"the stand-in has no scripted reply left" (never retried).

Hermes asks for an automatic title in the background after a session's first exchange (a
request holding :data:`TITLE_REQUEST_MARK`, the start of its title prompt). Such a request only
takes a reply scripted for it — ``Reply(text="Docker networking basics",
match=TITLE_REQUEST_MARK)``, or ``--title`` on the command line — and otherwise gets the 400,
so the model-free fallback titles the session; it never steals the next turn's reply.

:class:`Reply` fields (the same keys in a script file's JSON objects):

- ``text`` — the answer, streamed in pieces of ``chunk_chars`` characters; ``reasoning`` the
  same as ``reasoning_content`` deltas before it.
- ``tool_calls`` — ``[{"name", "arguments", "id"}]``, each streamed as a first fragment (id,
  name) and its arguments in three pieces; ``arguments`` may be anything (malformed JSON too).
- ``usage`` — ``[prompt_tokens, completion_tokens]``; ``true`` (default) computes 4-characters
  per token figures; ``false``/``null`` sends no usage chunk.
- ``status`` — answer with this HTTP error instead (429 and 5xx carry ``retry-after-ms:
  retry_after_ms`` so the SDK's retries are quick); ``error_message`` its text.
- ``hang_seconds`` — wait this long before answering anything (a hung endpoint).
- ``hold`` (tests only: a ``threading.Event``) with ``hold_after_chunks`` — after that many
  text chunks, wait until the event is set (or the server stops) before going on; a request
  that is not streamed waits before its whole answer.
- ``malformed`` — after the first text chunk, send a ``data:`` line that is not JSON (not
  streamed: a body that is not JSON).

A request without ``stream: true`` gets the whole ``chat.completion`` object: ``message``
with ``content``, ``reasoning_content`` (when ``reasoning`` is set) and ``tool_calls``, and
``usage`` as above.
- ``match``, ``times`` — see above.

A request with a wrong ``Authorization: Bearer`` key gets HTTP 401 (when ``api_key`` is set).
Control endpoints: ``POST /_standin/replies`` (a JSON list of reply objects to add) and
``GET /_standin/requests`` (the bodies received).

From a shell or a subprocess test (``tests`` on ``PYTHONPATH``)::

    python -m standins.openai_server --port 0 --script replies.json [--api-key K] \\
        [--record requests.jsonl] [--port-file port.txt] [--title "Docker networking basics"]

prints ``stand-in OpenAI endpoint: http://127.0.0.1:N/v1`` once it listens, appends each
request body to ``--record`` as a JSON line, and serves until SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CHARS_PER_TOKEN = 4
MODEL_NAME = "standin-model"
TITLE_REQUEST_MARK = "Write a short descriptive title"
"""The start of Hermes' title prompt (hermes_core.builtins.model_titles.TITLE_PROMPT)."""


@dataclass(frozen=True)
class ScriptedToolCall:
    """A tool call the stand-in's model makes."""

    name: str
    arguments: str = "{}"
    id: str | None = None


@dataclass
class Reply:
    """One scripted answer (see the module docstring for each field)."""

    text: str = ""
    tool_calls: Sequence[ScriptedToolCall] = ()
    reasoning: str = ""
    usage: tuple[int, int] | bool | None = True
    chunk_chars: int = 4
    status: int | None = None
    error_message: str | None = None
    retry_after_ms: int = 10
    hang_seconds: float = 0.0
    hold: threading.Event | None = None
    hold_after_chunks: int = 0
    malformed: bool = False
    match: str | None = None
    times: int | None = 1

    @classmethod
    def failure(
        cls,
        status: int,
        *,
        times: int | None = 1,
        message: str | None = None,
        match: str | None = None,
    ) -> Reply:
        """Answer ``times`` requests (None: all) with HTTP ``status``."""
        return cls(status=status, times=times, error_message=message, match=match)

    @classmethod
    def hang(cls, seconds: float, *, times: int | None = 1, match: str | None = None) -> Reply:
        """Say nothing for ``seconds`` (past the client's timeout), ``times`` requests."""
        return cls(hang_seconds=seconds, times=times, match=match)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Reply:
        """A reply from a script file's object."""
        known = {
            "text", "reasoning", "chunk_chars", "status", "error_message", "retry_after_ms",
            "hang_seconds", "hold_after_chunks", "malformed", "match", "times",
        }  # fmt: skip
        unknown = set(data) - known - {"tool_calls", "usage"}
        if unknown:
            raise ValueError(f"unknown reply keys: {', '.join(sorted(unknown))}")
        usage = data.get("usage", True)
        return cls(
            **{key: data[key] for key in known if key in data},
            tool_calls=[ScriptedToolCall(**call) for call in data.get("tool_calls", [])],
            usage=tuple(usage) if isinstance(usage, list) else usage,  # type: ignore[arg-type]
        )


@dataclass
class _State:
    api_key: str | None
    replies: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    record: Path | None = None
    lock: threading.Condition = field(default_factory=threading.Condition)
    stopping: threading.Event = field(default_factory=threading.Event)

    def take(self, body_text: str) -> Reply | None:
        with self.lock:
            chosen = next(
                (r for r in self.replies if r.match is not None and r.match in body_text), None
            )
            if chosen is None and TITLE_REQUEST_MARK not in body_text:
                chosen = next((r for r in self.replies if r.match is None), None)
            if chosen is not None and chosen.times is not None:
                chosen.times -= 1
                if chosen.times <= 0:
                    self.replies.remove(chosen)
            return chosen

    def remember(self, body: dict[str, Any]) -> None:
        with self.lock:
            self.requests.append(body)
            if self.record is not None:
                with self.record.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(body) + "\n")
            self.lock.notify_all()


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    # Headers and body are written separately: without TCP_NODELAY a kept-alive connection
    # waits for the client's delayed ACK (about 40 ms) before each answer's body.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    # ------------------------------------------------------------------ plumbing

    def _send_json(self, status: int, payload: Any, headers: Mapping[str, str] = {}) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, kind: str, headers: Mapping[str, str] = {}) -> None:
        self._send_json(
            status, {"error": {"message": message, "type": kind, "code": None}}, headers
        )

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    # ------------------------------------------------------------------ routes

    def do_GET(self) -> None:
        state = self.server.state
        if self.path == "/_standin/requests":
            with state.lock:
                self._send_json(200, list(state.requests))
        elif self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [
                {"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "standin"}
            ]})  # fmt: skip
        else:
            self._error(404, f"no route {self.path}", "invalid_request_error")

    def do_POST(self) -> None:
        state = self.server.state
        raw = self._body()
        if self.path == "/_standin/replies":
            with state.lock:
                state.replies.extend(Reply.from_json(item) for item in json.loads(raw))
            self._send_json(200, {"ok": True})
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._error(404, f"no route {self.path}", "invalid_request_error")
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._error(400, "the request body is not JSON", "invalid_request_error")
            return
        state.remember(body)
        if state.api_key is not None:
            sent = self.headers.get("Authorization", "")
            if sent != f"Bearer {state.api_key}":
                self._error(401, "Incorrect API key provided.", "invalid_request_error")
                return
        reply = state.take(raw.decode("utf-8", "replace"))
        if reply is None:
            self._error(400, "the stand-in has no scripted reply left", "invalid_request_error")
            return
        # A client that went away (a cancel, a timeout) needs to be told nothing.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._answer(body, reply)

    def _answer(self, body: dict[str, Any], reply: Reply) -> None:
        state = self.server.state
        if reply.hang_seconds:
            state.stopping.wait(reply.hang_seconds)
            self.close_connection = True
            return
        if reply.status is not None:
            headers = {}
            if reply.status == 429 or reply.status >= 500:
                headers["retry-after-ms"] = str(reply.retry_after_ms)
            kind = "rate_limit_error" if reply.status == 429 else "server_error"
            self._error(reply.status, reply.error_message or f"stand-in error {reply.status}",
                        kind, headers)  # fmt: skip
            return
        if body.get("stream"):
            self._stream(body, reply)
            return
        _wait_for_release(reply, state)
        if reply.malformed:
            data = b'{"id": "chatcmpl-standin", "choices": [{this is not json'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self._send_json(200, _completion(body, reply))

    def _stream(self, body: dict[str, Any], reply: Reply) -> None:
        # Chunked, and the connection kept for the next request, as the API serves streams.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        for line in _events(body, reply, include_usage, self.server.state):
            data = line.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-standin",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": MODEL_NAME,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        **extra,
    }


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _usage(body: dict[str, Any], reply: Reply) -> dict[str, int] | None:
    if reply.usage is None or reply.usage is False:
        return None
    if reply.usage is True:
        prompt = len(json.dumps(body.get("messages", []))) // CHARS_PER_TOKEN
        answer = len(reply.text) + sum(len(c.arguments) for c in reply.tool_calls)
        completion = answer // CHARS_PER_TOKEN + 1
    else:
        prompt, completion = reply.usage
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}  # fmt: skip


def _events(
    body: dict[str, Any], reply: Reply, include_usage: bool, state: _State
) -> Iterator[str]:
    def data(payload: Any) -> str:
        return f"data: {json.dumps(payload)}\n\n"

    def wait_for_release() -> None:
        _wait_for_release(reply, state)

    yield data(_chunk({"role": "assistant", "content": ""}))
    for piece in _pieces(reply.reasoning, reply.chunk_chars):
        yield data(_chunk({"reasoning_content": piece}))
    pieces = _pieces(reply.text, reply.chunk_chars)
    for number, piece in enumerate(pieces):
        if number == reply.hold_after_chunks:
            wait_for_release()
        yield data(_chunk({"content": piece}))
        if reply.malformed and number == 0:
            yield "data: {this is not json\n\n"
    if reply.hold_after_chunks >= len(pieces):
        wait_for_release()
    for index, call in enumerate(reply.tool_calls):
        call_id = call.id or f"call_standin_{index}"
        yield data(_chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                           "function": {"name": call.name, "arguments": ""}}]}))  # fmt: skip
        third = max(1, -(-len(call.arguments) // 3))
        for piece in _pieces(call.arguments, third):
            yield data(_chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    if reply.malformed and not reply.text:
        yield "data: {this is not json\n\n"
    yield data(_chunk({}, "tool_calls" if reply.tool_calls else "stop"))
    usage = _usage(body, reply)
    if include_usage and usage is not None:
        final = _chunk({}, usage=usage)
        final["choices"] = []
        yield data(final)
    yield "data: [DONE]\n\n"


def _wait_for_release(reply: Reply, state: _State) -> None:
    while reply.hold is not None and not reply.hold.wait(0.05):
        if state.stopping.is_set():
            return


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": call.id or f"call_standin_{i}", "type": "function",
             "function": {"name": call.name, "arguments": call.arguments}}
            for i, call in enumerate(reply.tool_calls)
        ]  # fmt: skip
    answer: dict[str, Any] = {
        "id": "chatcmpl-standin",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL_NAME,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
    }  # fmt: skip
    usage = _usage(body, reply)
    if usage is not None:
        answer["usage"] = usage
    return answer


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # many clients connecting at once are not refused (the default: 5)

    def __init__(self, port: int, state: _State) -> None:
        self.state = state
        super().__init__(("127.0.0.1", port), _Handler)


class OpenAIStandIn:
    """The stand-in server, run in a background thread (see the module docstring)."""

    def __init__(
        self, *, api_key: str | None = None, port: int = 0, record: Path | None = None
    ) -> None:
        self._state = _State(api_key=api_key, record=record)
        self._server = _Server(port, self._state)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """What to give the SDK as ``base_url`` (``model.base_url``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def api_key(self) -> str | None:
        """The key it accepts (None: any)."""
        return self._state.api_key

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every chat-completions request body received so far, in order."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def pending_replies(self) -> int:
        """How many scripted replies are still waiting for a request."""
        with self._state.lock:
            return len(self._state.replies)

    def add(self, *replies: Reply) -> None:
        """Queue replies, answered in order."""
        with self._state.lock:
            self._state.replies.extend(replies)

    def wait_for_requests(self, count: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Block until ``count`` requests arrived (AssertionError after ``timeout``)."""
        deadline = time.monotonic() + timeout
        with self._state.lock:
            while len(self._state.requests) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"the stand-in got {len(self._state.requests)} requests, not {count}"
                    )
                self._state.lock.wait(left)
            return list(self._state.requests)

    def start(self) -> OpenAIStandIn:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="openai-standin", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Wake every held or hanging answer, stop serving and close the socket."""
        self._state.stopping.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(5)
        self._server.server_close()

    def __enter__(self) -> OpenAIStandIn:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> None:
    """The command-line mode (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m standins.openai_server",
                                     description="A STAND-IN OpenAI-compatible endpoint for tests.")  # fmt: skip
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", type=Path, help="a JSON list of reply objects")
    parser.add_argument("--api-key", default=None, help="the only key accepted (default: any)")
    parser.add_argument("--record", type=Path, help="append each request body here (JSON lines)")
    parser.add_argument("--port-file", type=Path, help="write the port here once listening")
    parser.add_argument("--title", help="answer every automatic-title request with this title")
    options = parser.parse_args(argv)
    server = OpenAIStandIn(api_key=options.api_key, port=options.port, record=options.record)
    if options.title is not None:
        server.add(Reply(text=options.title, match=TITLE_REQUEST_MARK, times=None))
    if options.script is not None:
        server.add(*(Reply.from_json(item) for item in json.loads(options.script.read_text())))
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    server.start()
    if options.port_file is not None:
        options.port_file.write_text(str(server.port))
    print(f"stand-in OpenAI endpoint: {server.base_url}", flush=True)
    try:
        while not stopped.wait(0.2):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    sys.exit(0)


if __name__ == "__main__":
    main()
