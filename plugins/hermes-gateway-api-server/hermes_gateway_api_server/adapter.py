"""The ``api-server`` adapter: ``POST /v1/chat/completions`` (streaming and not) and ``GET
/v1/models``, so any OpenAI client talks to the agent.

Settings (``gateway.platforms.api-server`` in config.yaml):

- ``api_key`` (or ``api_key_env``, the name of an environment variable holding it) — the bearer
  key clients send; required.
- ``host`` (``127.0.0.1``), ``port`` (``8645``; ``0`` picks a free one).
- ``model_name`` (``hermes``) — what ``/v1/models`` lists and answers carry.
- ``max_body_bytes`` (1048576).

A conversation is one session: the ``X-Hermes-Conversation`` header names it (else the
request's ``user`` field; with neither, each request is a conversation of its own: its session
is kept, but no routing row, so such requests do not grow the routing table; the answer's
``X-Hermes-Conversation`` names it should the client want to go on). Only the
last user message of a request is the new turn — the session holds the history. Every answer
carries ``X-Hermes-Session`` (the session id). A streamed answer starts (HTTP 200) only once the
user turn is stored.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import (
    RETRY_AFTER_SECONDS,
    SHUTDOWN_GRACE_SECONDS,
    BodyRefused,
    ChatType,
    Deliver,
    DeliveryRefused,
    GatewayReply,
    PlatformEvent,
    UserFacingError,
    build_session_key,
    read_body,
)

from .completions import (
    BadRequest,
    chunk,
    completion,
    completion_id,
    error_body,
    last_user_text,
    models_list,
    usage_chunk,
)

if TYPE_CHECKING:
    from aiohttp import web

log = logging.getLogger("hermes.gateway.api-server")

CONVERSATION_HEADER = "X-Hermes-Conversation"
SESSION_HEADER = "X-Hermes-Session"
DEFAULTS: Mapping[str, Any] = {
    "host": "127.0.0.1",
    "port": 8645,
    "model_name": "hermes",
    "max_body_bytes": 1 << 20,
}


class ApiServerAdapter:
    """An OpenAI-compatible endpoint over the gateway (aiohttp)."""

    name = "api-server"
    label = "API server requests"
    short_label = "api"
    interactive = False
    gateway = True
    supports_threads = False
    reapable = True

    def __init__(self) -> None:
        self._settings: dict[str, Any] = dict(DEFAULTS)
        self._key = ""
        self._runner: web.AppRunner | None = None
        self.address: str | None = None

    # ------------------------------------------------------------------ PlatformAdapter

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take the settings (checked; the server starts in :meth:`start`)."""
        settings = {**DEFAULTS, **dict(config)}
        key = settings.get("api_key")
        if not key and settings.get("api_key_env"):
            key = os.environ.get(str(settings["api_key_env"]))
        if not isinstance(key, str) or not key:
            raise UserFacingError(
                "gateway.platforms.api-server.api_key is not set (or api_key_env names an "
                "empty variable): clients authenticate with it"
            )
        for name in ("port", "max_body_bytes"):
            value = settings[name]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise UserFacingError(f"gateway.platforms.api-server.{name} must be a whole number")
        self._key = key
        self._settings = settings

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """An HTTP endpoint only answers requests: it cannot send on its own."""
        raise UserFacingError("the api-server platform only answers requests")

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The G1 key of an api-server conversation (always a DM)."""
        return build_session_key("api-server", "dm", chat_id)

    def create_thread(self, chat_id: str, title: str) -> str | None:
        return None

    # ------------------------------------------------------------------ ReceivingAdapter

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Listen on ``host:port``."""
        from aiohttp import web

        self.connect(config)
        settings = self._settings
        app = web.Application(client_max_size=int(settings["max_body_bytes"]) + 1)
        app["deliver"] = deliver
        app.router.add_post("/v1/chat/completions", self._completions)
        app.router.add_get("/v1/models", self._models)
        runner = web.AppRunner(
            app, access_log=None, handle_signals=False, shutdown_timeout=SHUTDOWN_GRACE_SECONDS
        )
        await runner.setup()
        site = web.TCPSite(runner, str(settings["host"]), int(settings["port"]))
        try:
            await site.start()
        except OSError as error:
            await runner.cleanup()
            raise UserFacingError(
                f"cannot listen on {settings['host']}:{settings['port']} "
                f"({error.strerror or error})"
            ) from None
        self._runner = runner
        host, port = runner.addresses[0][:2]
        self.address = f"http://{host}:{port}/v1"
        log.info("api-server listening at %s", self.address)

    async def stop(self) -> None:
        """Stop listening; answers being streamed are finished first."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ------------------------------------------------------------------ requests

    def _authorised(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(token.strip(), self._key)

    async def _models(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        if not self._authorised(request):
            return self._refuse(request, 401, "invalid or missing API key", "invalid_api_key")
        return web.json_response(models_list(str(self._settings["model_name"])))

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        if not self._authorised(request):
            return self._refuse(request, 401, "invalid or missing API key", "invalid_api_key")
        try:
            body = json.loads(await read_body(request, int(self._settings["max_body_bytes"])))
        except BodyRefused as refused:
            code = "body_too_large" if refused.status == 413 else "body_timeout"
            return self._refuse(request, refused.status, refused.reason, code)
        except (ValueError, UnicodeDecodeError) as error:
            return self._refuse(request, 400, f"malformed JSON ({error})", "invalid_json")
        if not isinstance(body, dict):
            return self._refuse(request, 400, "the body must be a JSON object", "invalid_json")
        try:
            text = last_user_text(body)
        except BadRequest as error:
            return self._refuse(request, 400, str(error), "invalid_request")
        user = body.get("user") if isinstance(body.get("user"), str) else None
        named = request.headers.get(CONVERSATION_HEADER) or user
        conversation = named or uuid.uuid4().hex
        kind: ChatType = "dm"
        event = PlatformEvent(
            platform="api-server",
            chat_id=conversation,
            text=text,
            chat_type=kind,
            user_id=user,
            one_shot=named is None,
            # Only a streamed request reads the answer as it arrives; the others are answered
            # by one non-streamed model call.
            stream_answer=bool(body.get("stream")),
        )
        deliver: Deliver = request.app["deliver"]
        delivery = deliver(event)
        try:
            session_id = await delivery.stored()
        except DeliveryRefused as error:
            return self._refuse(
                request,
                503,
                str(error),
                "unavailable",
                headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
            )
        model = str(self._settings["model_name"])
        headers = {SESSION_HEADER: session_id or "", CONVERSATION_HEADER: conversation}
        identifier = completion_id()
        if body.get("stream"):
            return await self._stream(request, body, delivery, identifier, model, headers)
        try:
            reply = await delivery.reply()
        except DeliveryRefused as error:
            return self._refuse(request, 502, str(error), "server_error")
        if reply.error and not reply.command:
            return _model_failure(reply.error, headers)  # the gateway logged it (one line)
        return web.json_response(
            completion(identifier, model, reply.text, _token_counts(reply)), headers=headers
        )

    async def _stream(
        self,
        request: web.Request,
        body: Mapping[str, Any],
        delivery: Any,
        identifier: str,
        model: str,
        headers: Mapping[str, str],
    ) -> web.StreamResponse:
        """Stream the answer as server-sent chunks. The HTTP 200 is sent with the model's first
        piece of text (or its whole answer): a model that fails before saying anything gets the
        same 502 as a request that is not streamed."""
        from aiohttp import web

        deltas = delivery.text_deltas().__aiter__()
        first: str | None = None
        async for piece in deltas:
            first = piece
            break
        if first is None:
            try:
                reply = await delivery.reply()
            except DeliveryRefused as error:
                return self._refuse(request, 502, str(error), "server_error")
            if reply.error and not reply.command:
                return _model_failure(reply.error, headers)
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                **headers,
            }
        )
        await response.prepare(request)

        async def send(payload: Any) -> None:
            await response.write(f"data: {json.dumps(payload)}\n\n".encode())

        try:
            await send(chunk(identifier, model, {"role": "assistant", "content": ""}))
            if first is not None:
                await send(chunk(identifier, model, {"content": first}))
                async for piece in deltas:
                    await send(chunk(identifier, model, {"content": piece}))
            try:
                reply = await delivery.reply()
            except DeliveryRefused as error:
                await send(error_body(str(error), "server_error"))
            else:
                if reply.error and not reply.command:
                    # The answer broke off after it started: the stream can only say so.
                    await send(error_body(reply.error, "server_error", "model_unavailable"))
                elif first is None and reply.text:
                    await send(chunk(identifier, model, {"content": reply.text}))
                await send(chunk(identifier, model, {}, finish="stop"))
                options = body.get("stream_options")
                if isinstance(options, Mapping) and options.get("include_usage") is True:
                    await send(usage_chunk(identifier, model, _token_counts(reply)))
            await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
        except ConnectionResetError:
            # The client went away mid-answer: the turn is stored all the same.
            log.info("api-server: the client of %s left before the answer ended", identifier)
        return response

    def _refuse(
        self,
        request: web.Request,
        status: int,
        reason: str,
        code: str,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> web.StreamResponse:
        from aiohttp import web

        log.warning(
            "api-server refused a request from %s (HTTP %d): %s",
            request.remote or "?",
            status,
            reason,
        )
        kind = "invalid_request_error" if status < 500 else "server_error"
        return web.json_response(error_body(reason, kind, code), status=status, headers=headers)


def _token_counts(reply: GatewayReply) -> tuple[int, int]:
    """The model's (prompt, completion) tokens for the turn; 0/0 for a gateway command."""
    usage = reply.usage
    return (usage.input_tokens, usage.output_tokens) if usage is not None else (0, 0)


def _model_failure(error: str, headers: Mapping[str, str]) -> web.StreamResponse:
    """The 502 of a turn the model could not answer (the user turn is stored)."""
    from aiohttp import web

    return web.json_response(
        error_body(error, "server_error", "model_unavailable"), status=502, headers=headers
    )
