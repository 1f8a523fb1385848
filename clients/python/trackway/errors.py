"""The errors the client raises: one base class, so ``except trackway.TrackwayError`` catches all."""

from __future__ import annotations

from typing import Any, Mapping, Optional


class TrackwayError(Exception):
    """Base of every error this package raises."""


class ApiError(TrackwayError):
    """The server answered with an error (``{error, message, field?}``), after any retries."""

    def __init__(self, status: int, body: Optional[Mapping[str, Any]] = None) -> None:
        body = body if isinstance(body, Mapping) else {}
        self.status: int = status
        #: The short name, e.g. ``Invalid request``, ``Not found``, ``Rate limit exceeded``.
        self.error: str = str(body.get("error") or f"HTTP {status}")
        self.message: str = str(body.get("message") or f"HTTP {status}")
        #: The field at fault, when one is.
        self.field: Optional[str] = body.get("field")
        #: Seconds to wait, on a 429.
        self.retry_after: Optional[int] = body.get("retry_after")
        super().__init__(self.message)

    def __repr__(self) -> str:
        return f"ApiError(status={self.status}, error={self.error!r}, message={self.message!r}, field={self.field!r})"


class NetworkError(TrackwayError):
    """The request never got an answer (connection error or timeout), after any retries."""


class WebhookVerificationError(TrackwayError):
    """``verify_webhook()`` refused a delivery: answer it with 400 and do not act on it.

    ``code`` is one of ``missing_signature``, ``invalid_timestamp``,
    ``timestamp_out_of_tolerance``, ``invalid_signature``, ``invalid_payload``.
    """

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(message)
