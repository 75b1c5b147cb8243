"""Sending through Twilio's REST API (the ``twilio`` SDK's ``Client``, blocking)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from hermes_hookspecs import UserFacingError
from hermes_hookspecs.adapter_kit import one_line, retry_transient, split_text

if TYPE_CHECKING:
    from twilio.rest import Client

MAX_SMS_CHARS = 1600
"""Twilio refuses a longer message body (error 21617); longer texts go as several SMS."""


def rest_client(account_sid: str, auth_token: str, base_url: str) -> Client:
    """A REST client whose API calls go to ``base_url`` (Twilio's, or a stand-in)."""
    from twilio.rest import Client

    client = Client(account_sid, auth_token)
    client.api.base_url = base_url.rstrip("/")
    return client


def check_account(client: Client, account_sid: str, base_url: str) -> None:
    """Fetch the account: one line when Twilio refuses the credentials or cannot be reached."""
    from twilio.base.exceptions import TwilioRestException

    try:
        client.api.v2010.accounts(account_sid).fetch()
    except TwilioRestException as error:
        if error.status in (401, 403, 404):
            raise UserFacingError(
                "gateway.platforms.sms: Twilio refused the account_sid/auth_token "
                f"(HTTP {error.status})"
            ) from None
        raise UserFacingError(f"the Twilio API answered {said(error)}") from None
    except Exception as error:
        raise UserFacingError(
            f"cannot reach the Twilio API at {base_url}: {one_line(error)}"
        ) from None


def send_sms(client: Client, to: str, sender: str, text: str) -> str | None:
    """Send ``text`` (in pieces of at most 1600 characters); the last message's sid."""
    sid: str | None = None
    for piece in split_text(text, MAX_SMS_CHARS):
        sid = client.messages.create(to=to, from_=sender, body=piece).sid
    return sid


async def send_sms_retrying(
    client: Client, to: str, sender: str, text: str, log: logging.Logger
) -> None:
    """Send ``text`` off the loop, each piece tried again on a rate limit or a Twilio failure
    (429, 5xx); the first piece that cannot go stops the rest."""
    for piece in split_text(text, MAX_SMS_CHARS):

        async def create(piece: str = piece) -> object:
            return await asyncio.to_thread(client.messages.create, to=to, from_=sender, body=piece)

        await retry_transient(create, transient=transient, log=log, what=f"sms: sending to {to}")


def transient(error: BaseException) -> bool:
    """Rate limits and Twilio's own failures are worth another try; a refusal is not."""
    status = getattr(error, "status", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


def said(error: BaseException) -> str:
    """A Twilio error answer as one line: its HTTP status, code and message."""
    status, code = getattr(error, "status", None), getattr(error, "code", None)
    if status is None:
        return one_line(error)
    text = one_line(getattr(error, "msg", None) or error)
    return f"HTTP {status}" + (f" (error {code})" if code else "") + f": {text}"
