"""The routes of ``hermes serve`` (Starlette), behind :class:`~.guard.Guard`.

Pages: ``/`` (the list, search as you type), ``/session/{ref}`` (one session, paged),
``/insights``. The page script asks ``/api/…`` for escaped HTML fragments: the list and its
changes, search results, the next page of a session, the messages stored since it last
looked. Writes (``POST /api/session/{id}/rename|pin|archive``) pass the guard only with
``--allow-writes`` and the page's CSRF value.

Store calls are quick reads made on the event loop's thread, where the store was opened
(one connection, as every other command has).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

from hermes_export_html import new_nonce
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from hermes_core.store.errors import InvalidTitle, SessionNotFound, StoreError

from . import pages
from .archive import BadRequest, ListFilters, WebArchive
from .guard import Guard
from .settings import ServeSettings

Handler = Callable[[Request], Awaitable[Response]]


def build_app(archive: WebArchive, settings: ServeSettings) -> Guard:
    """The whole ASGI app: routes over ``archive``, behind the guard."""
    views = _Views(archive, settings)
    routes = [
        Route("/", views.home, methods=["GET"]),
        Route("/session/{reference:path}", views.session, methods=["GET"]),
        Route("/insights", views.insights, methods=["GET"]),
        Route("/api/list", views.list_rows, methods=["GET"]),
        Route("/api/search", views.search, methods=["GET"]),
        Route("/api/session/{session_id}/page", views.page, methods=["GET"]),
        Route("/api/session/{session_id}/after", views.after, methods=["GET"]),
        Route("/api/session/{session_id}/{action}", views.write, methods=["POST"]),
    ]
    app = Starlette(routes=routes, exception_handlers={404: _not_found, 405: _not_allowed})
    return Guard(app, settings)


async def _not_found(_request: Request, _error: Exception) -> Response:
    return JSONResponse({"error": "not found"}, status_code=404)


async def _not_allowed(_request: Request, _error: Exception) -> Response:
    return JSONResponse({"error": "method not allowed"}, status_code=405)


def _failing_softly(handler: Handler) -> Handler:
    """A bad parameter is a 400 and a store failure a 503, each with one line."""

    async def guarded(request: Request) -> Response:
        try:
            return await handler(request)
        except BadRequest as error:
            return JSONResponse({"error": str(error)}, status_code=400)
        except SessionNotFound as error:
            return JSONResponse({"error": str(error)}, status_code=404)
        except StoreError as error:
            return JSONResponse({"error": " ".join(str(error).split())}, status_code=503)

    return guarded


class _Views:
    def __init__(self, archive: WebArchive, settings: ServeSettings) -> None:
        self._archive = archive
        self._settings = settings
        self.home = _failing_softly(self._home)
        self.session = _failing_softly(self._session)
        self.insights = _failing_softly(self._insights)
        self.list_rows = _failing_softly(self._list_rows)
        self.search = _failing_softly(self._search)
        self.page = _failing_softly(self._page)
        self.after = _failing_softly(self._after)
        self.write = _failing_softly(self._write)

    # ------------------------------------------------------------------ pages

    def _page_response(self, title: str, body: str, kind: str, status: int = 200) -> Response:
        nonce = new_nonce()
        html = pages.shell(
            title,
            body,
            nonce,
            csrf=self._settings.csrf,
            writes=self._settings.allow_writes,
            redacted=self._settings.redact,
            kind=kind,
        )
        return HTMLResponse(
            html,
            status_code=status,
            headers={"Content-Security-Policy": pages.page_policy(nonce)},
        )

    async def _home(self, request: Request) -> Response:
        try:
            filters = ListFilters.from_query(request.query_params)
            rows, total = self._archive.listing(filters)
        except BadRequest as error:
            filters, rows, total = ListFilters(), [], 0
            status = str(error)
        else:
            status = _count_line(len(rows), total)
        body = pages.list_body(
            filters,
            self._archive.sources(),
            pages.list_rows(rows, self._settings.allow_writes),
            status,
        )
        return self._page_response("Hermes sessions", body, "list-page")

    async def _session(self, request: Request) -> Response:
        reference = request.path_params["reference"]
        try:
            session = self._archive.session(reference)
        except StoreError as error:
            body = pages.message_page(" ".join(str(error).split()))
            return self._page_response("Not found", body, "missing", status=404)
        record, total = self._archive.page(session, 0)
        body = pages.session_body(
            record,
            self._archive.lineage(session),
            total,
            len(record.messages),
            self._settings.allow_writes,
        )
        return self._page_response(pages.session_title(record.session), body, "session-page")

    async def _insights(self, _request: Request) -> Response:
        from hermes_core.insights.html_page import content_security_policy, render_page

        nonce = new_nonce()
        html = render_page(self._archive.insights(), nonce=nonce)
        policy = content_security_policy(nonce) + "; frame-ancestors 'none'"
        return HTMLResponse(html, headers={"Content-Security-Policy": policy})

    # ------------------------------------------------------------------ fragments

    async def _list_rows(self, request: Request) -> Response:
        filters = ListFilters.from_query(request.query_params)
        rows, total = self._archive.listing(filters)
        fingerprint = hashlib.sha256(
            json.dumps(
                [
                    (
                        r.session.id,
                        r.session.last_active_at,
                        r.session.message_count,
                        r.session.pinned,
                        r.session.archived,
                        r.session.title,
                        r.preview,
                    )
                    for r in rows
                ]
            ).encode()
        ).hexdigest()[:16]
        if request.query_params.get("known") == fingerprint:
            return JSONResponse({"unchanged": True, "fingerprint": fingerprint})
        return JSONResponse(
            {
                "html": pages.list_rows(rows, self._settings.allow_writes),
                "status": _count_line(len(rows), total),
                "fingerprint": fingerprint,
            }
        )

    async def _search(self, request: Request) -> Response:
        query = request.query_params.get("q", "")
        roles = request.query_params.getlist("role") or ["user", "assistant"]
        filters = ListFilters.from_query(request.query_params)
        found, problem = self._archive.search(query, roles, filters)
        status = problem or f"{len(found)} matching session{'s' if len(found) != 1 else ''}"
        return JSONResponse({"html": pages.search_rows(found), "status": status})

    async def _page(self, request: Request) -> Response:
        session = self._archive.session(request.path_params["session_id"])
        offset = _integer(request, "offset")
        record, total = self._archive.page(session, offset)
        last = record.messages[-1].id if record.messages else None
        return JSONResponse(
            {
                "html": pages.bubbles(record),
                "offset": offset + len(record.messages),
                "total": total,
                "last": last,
            }
        )

    async def _after(self, request: Request) -> Response:
        session = self._archive.session(request.path_params["session_id"])
        last = _integer(request, "last")
        record, total = self._archive.after(session, last)
        newest = record.messages[-1].id if record.messages else last
        return JSONResponse(
            {
                "html": pages.bubbles(record),
                "count": len(record.messages),
                "total": total,
                "last": newest,
            }
        )

    # ------------------------------------------------------------------ writes

    async def _write(self, request: Request) -> Response:
        session = self._archive.session(request.path_params["session_id"])
        try:
            given: Any = json.loads(await request.body() or b"{}")
        except ValueError:
            raise BadRequest("send a JSON object") from None
        if not isinstance(given, dict):
            raise BadRequest("send a JSON object")
        action = request.path_params["action"]
        if action == "rename":
            title = given.get("title")
            if not isinstance(title, str) or not title.strip():
                raise BadRequest("title: give a non-empty text")
            try:
                renamed = self._archive.rename(session.id, title.strip())
            except InvalidTitle as error:
                raise BadRequest(str(error)) from None
            return JSONResponse({"session_id": session.id, "title": renamed.title})
        value = given.get("value")
        if not isinstance(value, bool):
            raise BadRequest("value: give true or false")
        if action == "pin":
            self._archive.pin(session.id, value)
            return JSONResponse({"session_id": session.id, "pinned": value})
        if action == "archive":
            self._archive.archive(session.id, value)
            return JSONResponse({"session_id": session.id, "archived": value})
        return JSONResponse({"error": f"unknown action {action[:40]!r}"}, status_code=404)


def _integer(request: Request, name: str) -> int:
    raw = request.query_params.get(name, "0")
    if not raw.isdigit() or len(raw) > 18:
        raise BadRequest(f"{name}: give a whole number, 0 or more")
    return int(raw)


def _count_line(shown: int, total: int) -> str:
    if shown == total:
        return f"{total} session{'s' if total != 1 else ''}"
    return f"{shown} of {total} sessions (narrow with the filters)"
