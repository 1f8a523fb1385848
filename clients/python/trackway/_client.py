"""``trackway.Client(api_key=…, base_url=…)``: batched ``track()`` plus the API's operations."""

from __future__ import annotations

import atexit
import functools
import json
from concurrent.futures import Future
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional
from urllib.parse import quote, urlencode

from ._batcher import Batcher, TrackResult, encode_event, new_event_id
from ._http import RetryPolicy, Transport

JSON = Dict[str, Any]


def _p(value: str) -> str:
    return quote(str(value), safe="")


def _query(params: Mapping[str, Any]) -> str:
    pairs = []
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        pairs.append((key, str(value)))
    return f"?{urlencode(pairs)}" if pairs else ""


def _flush_at_exit(batcher: Batcher) -> None:
    try:
        batcher.stop()
    except Exception:  # the interpreter is going away: nothing left to report to
        pass


class Pixels:
    def __init__(self, client: "Client") -> None:
        self._c = client

    def list(self, *, limit: Optional[int] = None, offset: Optional[int] = None) -> JSON:
        """``{pixels, total, limit, offset}``."""
        return self._c.request("GET", "/v1/pixels", query={"limit": limit, "offset": offset})

    def create(self, *, name: str, domain: str, tracking_domain: Optional[str] = None) -> JSON:
        """Not retried on a 5xx or network error: a resent create could create twice."""
        body = {"name": name, "domain": domain}
        if tracking_domain is not None:
            body["tracking_domain"] = tracking_domain
        return self._c.request("POST", "/v1/pixels", body=body, retry_server_errors=False)

    def get(self, pixel_id: str) -> JSON:
        return self._c.request("GET", f"/v1/pixels/{_p(pixel_id)}")

    def update(self, pixel_id: str, **fields: Any) -> JSON:
        """``name``, ``domain``, ``tracking_domain``, ``status`` (``active`` | ``paused``)."""
        return self._c.request("PATCH", f"/v1/pixels/{_p(pixel_id)}", body=fields)


class Events:
    def __init__(self, client: "Client") -> None:
        self._c = client

    def list(self, pixel_id: str, **query: Any) -> JSON:
        """One page, newest first: ``{events, total, limit, offset}``. Query: ``limit``,
        ``offset``, ``start_date``, ``end_date``, ``event_name``."""
        return self._c.request("GET", f"/v1/pixels/{_p(pixel_id)}/events", query=query)

    def pages(self, pixel_id: str, **query: Any) -> Iterator[JSON]:
        """Every page of :meth:`list`, fetched as the loop asks for it."""
        offset = int(query.pop("offset", 0) or 0)
        while True:
            page = self.list(pixel_id, **query, offset=offset)
            yield page
            offset += len(page["events"])
            if not page["events"] or offset >= page["total"]:
                return

    def iterate(self, pixel_id: str, **query: Any) -> Iterator[JSON]:
        """Every matching event, newest first, across all pages. Events stored while the loop
        runs push older ones down a page; those already yielded (on the previous page) are
        skipped, so each event comes once."""
        previous: set = set()
        for page in self.pages(pixel_id, **query):
            for event in page["events"]:
                if event["event_id"] not in previous:
                    yield event
            previous = {event["event_id"] for event in page["events"]}

    def get(self, pixel_id: str, event_id: str) -> JSON:
        """One stored event with its forwarding entries."""
        return self._c.request("GET", f"/v1/pixels/{_p(pixel_id)}/events/{_p(event_id)}")

    def track(self, event: Mapping[str, Any]) -> JSON:
        """One event at once, unbatched (``POST /v1/track``); an ``event_id`` is made if missing."""
        body = dict(event)
        if body.get("event_id") is None:
            body["event_id"] = new_event_id()
        return self._c.request("POST", "/v1/track", body=body)

    def track_batch(self, events: List[Mapping[str, Any]]) -> JSON:
        """Up to 1,000 events in one request, unqueued; the answer has one result per event."""
        items = []
        for event in events:
            body = dict(event)
            if body.get("event_id") is None:
                body["event_id"] = new_event_id()
            items.append(body)
        return self._c.request("POST", "/v1/track/batch", body={"events": items})


class Webhooks:
    def __init__(self, client: "Client") -> None:
        self._c = client

    def list(self) -> JSON:
        return self._c.request("GET", "/v1/webhooks")

    def create(self, *, url: str, events: Optional[List[str]] = None, description: Optional[str] = None) -> JSON:
        """The answer's ``secret`` is shown this once."""
        body: JSON = {"url": url}
        if events is not None:
            body["events"] = events
        if description is not None:
            body["description"] = description
        return self._c.request("POST", "/v1/webhooks", body=body, retry_server_errors=False)

    def get(self, webhook_id: str) -> JSON:
        return self._c.request("GET", f"/v1/webhooks/{_p(webhook_id)}")

    def update(self, webhook_id: str, **fields: Any) -> JSON:
        return self._c.request("PATCH", f"/v1/webhooks/{_p(webhook_id)}", body=fields)

    def delete(self, webhook_id: str) -> Any:
        return self._c.request("DELETE", f"/v1/webhooks/{_p(webhook_id)}")

    def rotate_secret(self, webhook_id: str) -> JSON:
        """The new secret; the old one keeps signing beside it for 24 h."""
        return self._c.request("POST", f"/v1/webhooks/{_p(webhook_id)}/rotate-secret", retry_server_errors=False)

    def list_deliveries(self, webhook_id: str, **query: Any) -> JSON:
        return self._c.request("GET", f"/v1/webhooks/{_p(webhook_id)}/deliveries", query=query)

    def send_test(self, webhook_id: str, event: Optional[str] = None) -> JSON:
        body = {"event": event} if event else {}
        return self._c.request("POST", f"/v1/webhooks/{_p(webhook_id)}/test", body=body, retry_server_errors=False)


class Client:
    """A Trackway client. Thread-safe; one per process is enough.

    ``track()`` queues an event and returns a :class:`concurrent.futures.Future` that resolves
    to its :class:`TrackResult` once its batch is answered (it never raises: a refused event
    resolves with ``ok=False``). Batches go to ``POST /v1/track/batch``, gzipped, from a
    background thread when ``max_batch_size`` events are queued or ``flush_interval`` seconds
    after the first one waits. ``close()`` (also at the end of a ``with`` block, and at
    interpreter exit) sends what is queued.
    """

    def __init__(
        self,
        api_key: str,
        base_url: str = "http://127.0.0.1:8080",
        *,
        max_batch_size: int = 100,
        flush_interval: float = 1.0,
        max_concurrent_requests: int = 1,
        gzip: bool = True,
        max_retries: int = 10,
        retry_base_delay: float = 0.2,
        retry_max_delay: float = 10.0,
        timeout: float = 30.0,
        on_result: Optional[Callable[[TrackResult, Dict[str, Any]], None]] = None,
    ) -> None:
        if not api_key:
            raise ValueError("trackway.Client: api_key is required")
        self.base_url = base_url.rstrip("/")
        self._transport = Transport(
            self.base_url, api_key, timeout, RetryPolicy(max_retries, retry_base_delay, retry_max_delay)
        )
        self._batcher = Batcher(
            self._transport, max_batch_size, flush_interval, max_concurrent_requests, gzip, on_result
        )
        self._closed = False
        self.pixels = Pixels(self)
        self.events = Events(self)
        self.webhooks = Webhooks(self)
        # Flushed at interpreter exit, so a script that forgets close() loses nothing queued
        # (the hook holds the queue, not the client, so it works for a dropped client too).
        self._exit_hook = functools.partial(_flush_at_exit, self._batcher)
        atexit.register(self._exit_hook)

    # -- tracking ---------------------------------------------------------------------------

    def track(self, event: Mapping[str, Any]) -> "Future[TrackResult]":
        """Queues ``event`` (a dict as ``POST /v1/track`` takes it) for the next batch. An
        ``event_id`` is made when none is given, so a resent batch is deduplicated."""
        if self._closed:
            raise RuntimeError("trackway: track() after close()")
        if not isinstance(event, Mapping):
            raise TypeError("trackway: track() takes a dict")
        return self._batcher.enqueue(event)

    def flush(self, timeout: Optional[float] = None) -> List[TrackResult]:
        """Sends everything queued now and returns the outcomes of every event tracked before."""
        return self._batcher.flush(timeout)

    def close(self, timeout: Optional[float] = None) -> List[TrackResult]:
        """Flushes, stops the sender and refuses further ``track()`` calls. Idempotent."""
        if self._closed:
            return []
        self._closed = True
        atexit.unregister(self._exit_hook)
        try:
            return self._batcher.stop(timeout)
        finally:
            self._transport.close()

    @property
    def pending_events(self) -> int:
        """Events queued or in flight."""
        return self._batcher.pending

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- the API ----------------------------------------------------------------------------

    def validate(self, event: Mapping[str, Any]) -> JSON:
        """What ``track`` would store for ``event`` and what each destination would be sent,
        without storing or sending anything: ``{valid, event, destinations, …}``."""
        return self.request("POST", "/v1/track/validate", body=dict(event))

    def event(self, pixel_id: str, event_id: str) -> JSON:
        """One stored event (``GET /v1/pixels/{pixel_id}/events/{event_id}``)."""
        return self.events.get(pixel_id, event_id)

    def health(self) -> JSON:
        return self.request("GET", "/healthz")

    def ready(self) -> JSON:
        return self.request("GET", "/readyz")

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        retry_server_errors: bool = True,
    ) -> Any:
        """Any route: the parsed JSON answer. Raises :class:`trackway.ApiError` for an error
        answer, :class:`trackway.NetworkError` when none came (after retries)."""
        data = None if body is None else encode_event(body) if isinstance(body, Mapping) else json.dumps(body).encode()
        exchange = self._transport.exchange(
            method, path + _query(query or {}), data, {}, retry_server_errors
        )
        return exchange.body
