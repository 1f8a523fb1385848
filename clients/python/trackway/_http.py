"""One HTTP exchange with retries, over persistent connections (one per thread).

Which failures are retried is the caller's call (a resent create could create twice); when is
decided here: a 429 after the ``retry_after`` the server names, a 5xx or network error after a
jittered exponential backoff, another 4xx never.
"""

from __future__ import annotations

import http.client
import json
import logging
import random
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional
from urllib.parse import urlsplit

from .errors import ApiError, NetworkError

logger = logging.getLogger("trackway")

USER_AGENT = "trackway-python/0.1.0"


@dataclass(frozen=True)
class RetryPolicy:
    #: Retries after the first attempt.
    max_retries: int = 10
    #: First backoff step in seconds, doubled each retry.
    base_delay: float = 0.2
    #: Longest backoff step in seconds.
    max_delay: float = 10.0

    def backoff(self, retry: int) -> float:
        """"Equal jitter": half the exponential step for sure, the other half random, so the
        retries of many clients spread out but none retries at once."""
        step = min(self.max_delay, self.base_delay * (2 ** retry))
        return step / 2 + random.random() * (step / 2)


@dataclass
class Exchange:
    status: int
    headers: Mapping[str, str]
    #: Parsed JSON, or None when the body was empty or not JSON.
    body: Any


def retry_after_seconds(exchange: Exchange) -> float:
    """Seconds the server asked us to wait: the body's ``retry_after``, else ``Retry-After``, else 1."""
    value: Any = None
    if isinstance(exchange.body, dict):
        value = exchange.body.get("retry_after")
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        try:
            value = float(exchange.headers.get("retry-after", "1"))
        except ValueError:
            value = 1
    return max(1.0, float(value))


class Transport:
    """Sends requests to one origin over keep-alive connections, one per calling thread."""

    def __init__(self, base_url: str, api_key: str, timeout: float, retry: RetryPolicy) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) origin, got {base_url!r}")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._api_key = api_key
        self.timeout = timeout
        self.retry = retry
        self._local = threading.local()
        self._connections: "list[http.client.HTTPConnection]" = []
        self._lock = threading.Lock()

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            conn = cls(self._host, self._port, timeout=self.timeout)
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
            with self._lock:
                if conn in self._connections:
                    self._connections.remove(conn)

    def close(self) -> None:
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()

    def send_once(
        self,
        method: str,
        path: str,
        body: Optional[bytes],
        headers: Dict[str, str],
        may_resend: bool = True,
    ) -> Exchange:
        """One request; raises NetworkError when no answer came. ``may_resend``: the request
        is safe to send twice (see below)."""
        all_headers = {
            "Authorization": f"Bearer {self._api_key}",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
            **headers,
        }
        if body is not None:
            all_headers.setdefault("Content-Type", "application/json")
        # A kept-alive connection the server has since closed fails at once; one more try on
        # a fresh connection is then not a retry of the request. A request that must not be
        # sent twice (a create) cannot tell that from a server that died after committing it,
        # so it never takes a connection idle long enough to have been closed, and gets no
        # second try.
        if not may_resend and time.monotonic() - getattr(self._local, "used", 0.0) > 1.0:
            self._drop()
        for attempt in (0, 1):
            conn = self._connection()
            reused = conn.sock is not None
            try:
                conn.request(method, self._prefix + path, body=body, headers=all_headers)
                response = conn.getresponse()
                raw = response.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as error:
                self._drop()
                if reused and attempt == 0 and may_resend:
                    continue
                raise NetworkError(f"Request failed: {error!r}") from error
            except (OSError, http.client.HTTPException) as error:
                self._drop()
                kind = "timed out" if isinstance(error, socket.timeout) else "failed"
                raise NetworkError(f"Request {kind}: {error!r}") from error
            self._local.used = time.monotonic()
            if response.getheader("connection", "").lower() == "close":
                self._drop()
            try:
                parsed = json.loads(raw) if raw else None
            except ValueError:
                parsed = None
            lowered = {k.lower(): v for k, v in response.getheaders()}
            return Exchange(response.status, lowered, parsed)
        raise AssertionError("unreachable")

    def exchange(
        self,
        method: str,
        path: str,
        body: Optional[bytes] = None,
        headers: Optional[Dict[str, str]] = None,
        retry_server_errors: bool = True,
    ) -> Exchange:
        """Sends until an answer that is final for this request: 2xx/3xx, a 4xx other than 429,
        or a retryable failure once retries are spent (then raised)."""
        policy = self.retry
        retry = 0
        while True:
            try:
                exchange = self.send_once(method, path, body, headers or {}, retry_server_errors)
            except NetworkError:
                if not retry_server_errors or retry >= policy.max_retries:
                    raise
                delay = policy.backoff(retry)
                logger.warning("trackway: %s %s got no answer; retry %d in %.2f s", method, path, retry + 1, delay)
                time.sleep(delay)
                retry += 1
                continue
            status = exchange.status
            if status < 400:
                return exchange
            retryable = status == 429 or (retry_server_errors and status >= 500)
            if not retryable or retry >= policy.max_retries:
                raise ApiError(status, exchange.body)
            delay = retry_after_seconds(exchange) if status == 429 else policy.backoff(retry)
            logger.warning("trackway: %s %s answered %d; retry %d in %.2f s", method, path, status, retry + 1, delay)
            time.sleep(delay)
            retry += 1
