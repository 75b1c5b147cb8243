"""Small pieces every platform adapter needs, written once: what is left in an adapter is what
is specific to its platform.

Functions and plain objects, never a base class (an adapter subclasses nothing)::

    from hermes_hookspecs.adapter_kit import (
        AnswerTasks, Backoff, LoopBridge, RecentIds, SettingsReader, StoredPrefix,
        answer_text, one_line, retry_transient, split_text, start_http_server,
    )

- :func:`split_text` — a long answer in pieces the platform accepts, cut at line breaks;
- :class:`SettingsReader` — ``gateway.platforms.<name>`` read and checked, one line naming
  the key for each mistake (secrets from the setting or its ``<name>_env`` variable);
- :func:`one_line` — any error as one line for the log;
- :class:`Backoff`, :func:`retry_transient`, :func:`sleep_unless`, :func:`as_seconds` —
  waiting after a failure, honouring the platform's ``retry_after`` when it gives one;
- :class:`StoredPrefix` — what of a batch may be confirmed to the platform (the unbroken
  stored prefix), and which message to skip after it keeps failing;
- :class:`RecentIds` — message ids already taken or still in flight, so a re-sent or re-polled
  message is delivered once;
- :func:`answer_text` — what to post for the gateway's reply (nothing for a duplicate);
- :func:`unless_too_old` — a caught-up message older than ``catch_up_max_age`` is stored,
  not answered;
- :class:`AnswerTasks` — the answers going out, awaited at stop;
- :class:`LoopBridge` — blocking ``send``/``create_thread`` from another thread, run on the
  adapter's event loop;
- :class:`CursorFile` — the adapter's place in the platform's stream, kept between runs in
  the folder the gateway gives it (``state_folder``), for catch-up after a restart;
- :func:`start_http_server` — an aiohttp endpoint on a host and port, stopped with one call
  (the adapter declares ``aiohttp`` itself);
- :class:`WebhookIntake` — a platform's webhook callbacks taken in: the callback URL served,
  a bounded body, the adapter's ``parse`` (:class:`Incoming`, or :class:`WebhookRefused`), each
  message delivered once and acknowledged once stored, the answer posted in the background;
- :class:`TokenApi` (with :class:`TokenGrant`, :class:`AnswerShape`, :class:`ApiRefused`) — a
  platform's JSON API reached with an access token for the app's credentials: the token kept
  until shortly before it expires and asked for again when refused, answers checked, refused
  credentials one line.
"""

from __future__ import annotations

from ._cursors import STATE_FOLDER, CursorFile
from ._delivery import AnswerTasks, answer_text, is_stopping, store_down, unless_too_old
from ._intake import (
    MAX_CALLBACK_BYTES,
    Handler,
    Incoming,
    Parse,
    WebhookIntake,
    WebhookRefused,
)
from ._loop import HttpServer, LoopBridge, start_http_server
from ._pacing import Backoff, as_seconds, retry_transient, sleep_unless
from ._settings import SettingsReader
from ._taking import RecentIds, StoredPrefix
from ._text import one_line, split_text
from ._token_api import TOKEN_MARGIN_SECONDS, AnswerShape, ApiRefused, TokenApi, TokenGrant

__all__ = [
    "MAX_CALLBACK_BYTES",
    "STATE_FOLDER",
    "TOKEN_MARGIN_SECONDS",
    "AnswerShape",
    "AnswerTasks",
    "ApiRefused",
    "Backoff",
    "CursorFile",
    "Handler",
    "HttpServer",
    "Incoming",
    "LoopBridge",
    "Parse",
    "RecentIds",
    "SettingsReader",
    "StoredPrefix",
    "TokenApi",
    "TokenGrant",
    "WebhookIntake",
    "WebhookRefused",
    "answer_text",
    "as_seconds",
    "is_stopping",
    "one_line",
    "retry_transient",
    "sleep_unless",
    "split_text",
    "start_http_server",
    "store_down",
    "unless_too_old",
]
