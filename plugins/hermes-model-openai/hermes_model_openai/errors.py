"""Every SDK failure as one line a person can act on (a :class:`ModelError`)."""

from __future__ import annotations

from typing import Any

from hermes_hookspecs import ModelError, ModelSettings

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"


def endpoint_of(settings: ModelSettings) -> str:
    """The endpoint as people configured it."""
    return settings.base_url or "https://api.openai.com/v1"


def _detail(error: Any) -> str:
    body = getattr(error, "body", None)
    message = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
    text = str(message or getattr(error, "message", "") or error)
    text = " ".join(text.split())
    return text[:200] + ("…" if len(text) > 200 else "")


def model_error(
    error: Exception, settings: ModelSettings, *, mid_answer: bool = False
) -> ModelError:
    """The one-line ``ModelError`` for an exception raised by the ``openai`` SDK;
    ``mid_answer`` when part of the answer had already streamed (no retry happens then)."""
    import openai

    url = endpoint_of(settings)
    if mid_answer and (
        isinstance(error, openai.APITimeoutError) or "Timeout" in type(error).__name__
    ):
        return ModelError(
            f"the model endpoint {url} stopped answering for {settings.timeout_seconds:g} s "
            "in the middle of its answer (model.timeout_seconds)"
        )
    if mid_answer and isinstance(error, openai.APIConnectionError):
        return ModelError(f"the connection to the model endpoint {url} broke mid-answer")
    retries = settings.max_retries
    after = f" after {retries} retr{'y' if retries == 1 else 'ies'}" if retries else ""
    key_env = str(settings.extra.get("api_key_env") or DEFAULT_API_KEY_ENV)
    if isinstance(error, openai.APITimeoutError):
        return ModelError(
            f"the model endpoint {url} did not answer within {settings.timeout_seconds:g} s"
            f"{after} (model.timeout_seconds)"
        )
    if isinstance(error, openai.APIConnectionError):
        return ModelError(f"cannot reach the model endpoint {url}{after}: is it running?")
    if isinstance(error, openai.AuthenticationError | openai.PermissionDeniedError):
        status = error.status_code
        have = "was refused" if settings.api_key else "is missing"
        return ModelError(
            f"the model endpoint {url} refused the request (HTTP {status}): the API key {have}; "
            f"set it in the environment variable {key_env}"
        )
    if isinstance(error, openai.RateLimitError):
        return ModelError(
            f"the model endpoint {url} is rate limiting requests (HTTP 429){after}; "
            f"try again later ({_detail(error)})"
        )
    if isinstance(error, openai.NotFoundError):
        return ModelError(
            f"the model endpoint {url} does not know the model {settings.model!r} or the "
            f"path (HTTP 404; check model.name and model.base_url): {_detail(error)}"
        )
    if isinstance(error, openai.InternalServerError):
        return ModelError(
            f"the model endpoint {url} failed (HTTP {error.status_code}){after}: {_detail(error)}"
        )
    if isinstance(error, openai.APIStatusError):
        return ModelError(
            f"the model endpoint {url} refused the request (HTTP {error.status_code}): "
            f"{_detail(error)}"
        )
    if isinstance(error, openai.APIResponseValidationError | openai.APIError):
        return ModelError(f"the model endpoint {url} sent a malformed answer: {_detail(error)}")
    if isinstance(error, ValueError):  # json.JSONDecodeError and pydantic's ValidationError
        return ModelError(
            f"the model endpoint {url} sent a malformed answer (not valid Chat Completions "
            f"JSON: {_detail(error)})"
        )
    name = type(error).__name__
    return ModelError(
        f"the model endpoint {url} sent an answer that could not be read ({name}: {_detail(error)})"
    )
