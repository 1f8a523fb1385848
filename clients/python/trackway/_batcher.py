"""The queue behind ``track()``: events wait until a batch is full (by count or bytes), the
interval passes, or ``flush()`` / ``close()`` asks; each batch goes to ``POST /v1/track/batch``,
gzipped, from a background thread. Every event carries an ``event_id`` before it is queued, so
resending a batch whose answer was lost stores nothing twice: the server keeps the first and
answers the repeat as deduplicated.
"""

from __future__ import annotations

import datetime
import decimal
import gzip
import json
import logging
import os
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Callable, Deque, Dict, List, Mapping, Optional, Tuple

from ._http import Transport
from .errors import ApiError, NetworkError

logger = logging.getLogger("trackway")

#: The server takes at most 1,000 events and 524,288 decoded bytes a batch; keep under both.
MAX_BATCH_EVENTS = 1000
MAX_BATCH_BYTES = 500_000


@dataclass(frozen=True)
class TrackResult:
    """What happened to one tracked event."""

    ok: bool
    event_id: str
    #: What the server answered for this event (200 when ok), or 0 when it never answered.
    status: int
    message: str
    #: The server already had this ``event_id``; the first event was kept.
    deduplicated: bool = False
    warnings: Tuple[str, ...] = ()
    #: The short error name when not ok, e.g. ``Invalid request`` or ``Network error``.
    error: Optional[str] = None
    field: Optional[str] = None


def new_event_id(now_ms: Optional[int] = None) -> str:
    """``evt_`` + a UUIDv7: time-ordered (kind to the server's indexes), 74 random bits."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & 0xFFFFFFFFFFFF) << 80 | 0x7 << 76 | (rand >> 68 & 0xFFF) << 64 | 0b10 << 62 | (rand & ((1 << 62) - 1))
    h = f"{value:032x}"
    return f"evt_{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            raise TypeError("timestamp datetimes must carry a timezone")
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def encode_event(event: Mapping[str, Any]) -> bytes:
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False, default=_json_default).encode("utf-8")


@dataclass
class _Item:
    event: Dict[str, Any]
    json: bytes
    future: "Future[TrackResult]"
    at: float = field(default_factory=time.monotonic)


class Batcher:
    def __init__(
        self,
        transport: Transport,
        max_batch_size: int,
        flush_interval: float,
        max_concurrent_requests: int,
        use_gzip: bool,
        on_result: Optional[Callable[[TrackResult, Dict[str, Any]], None]],
    ) -> None:
        self._transport = transport
        self._max = max(1, min(MAX_BATCH_EVENTS, max_batch_size))
        self._interval = flush_interval
        self._workers = max(1, max_concurrent_requests)
        self._gzip = use_gzip
        self._on_result = on_result
        self._cond = threading.Condition()
        self._queue: Deque[_Item] = deque()
        # A dict, not a set: flush() answers in tracking order.
        self._unsettled: Dict["Future[TrackResult]", None] = {}
        # Send what is queued even below a full batch (interval passed, flush or close asked).
        self._flushing = False
        self._stopping = False
        self._threads: List[threading.Thread] = []

    def enqueue(self, event: Mapping[str, Any]) -> "Future[TrackResult]":
        item_event = dict(event)
        if item_event.get("event_id") is None:
            item_event["event_id"] = new_event_id()
        item = _Item(item_event, encode_event(item_event), Future())
        item.future.set_running_or_notify_cancel()
        with self._cond:
            if self._stopping:
                raise RuntimeError("trackway: track() after close()")
            if not self._threads:
                for n in range(self._workers):
                    thread = threading.Thread(target=self._run, name=f"trackway-sender-{n}", daemon=True)
                    thread.start()
                    self._threads.append(thread)
            self._queue.append(item)
            self._unsettled[item.future] = None
            if len(self._queue) == 1 or len(self._queue) >= self._max:
                self._cond.notify()
        return item.future

    @property
    def pending(self) -> int:
        with self._cond:
            return len(self._unsettled)

    def flush(self, timeout: Optional[float] = None) -> List[TrackResult]:
        """Sends everything queued now; returns the outcomes of every event tracked before."""
        with self._cond:
            waiting = list(self._unsettled)
            if self._queue:
                self._flushing = True
                self._cond.notify_all()
        deadline = None if timeout is None else time.monotonic() + timeout
        return [
            f.result(None if deadline is None else max(0.0, deadline - time.monotonic()))
            for f in waiting
        ]

    def stop(self, timeout: Optional[float] = None) -> List[TrackResult]:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        results = self.flush(timeout)
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout)
        return results

    def _next_batch(self) -> Optional[List[_Item]]:
        """Blocks until a batch is due; None when stopping with nothing left."""
        with self._cond:
            while True:
                queue = self._queue
                if queue:
                    waited = time.monotonic() - queue[0].at
                    if waited >= self._interval:
                        self._flushing = True
                    if len(queue) >= self._max or self._flushing or self._stopping:
                        batch = self._take()
                        if not self._queue:
                            self._flushing = False
                        return batch
                    self._cond.wait(self._interval - waited)
                elif self._stopping:
                    return None
                else:
                    self._cond.wait()

    def _take(self) -> List[_Item]:
        batch: List[_Item] = []
        size = 12
        while self._queue and len(batch) < self._max:
            item = self._queue[0]
            if batch and size + len(item.json) + 1 > MAX_BATCH_BYTES:
                break
            size += len(item.json) + 1
            batch.append(self._queue.popleft())
        return batch

    def _run(self) -> None:
        while True:
            batch = self._next_batch()
            if batch is None:
                return
            try:
                self._send(batch)
            except BaseException as error:  # never leave a caller waiting on a future forever
                logger.exception("trackway: sending a batch failed unexpectedly")
                self._fail(batch, 0, "Client error", repr(error))

    def _settle(self, item: _Item, result: TrackResult) -> None:
        with self._cond:
            self._unsettled.pop(item.future, None)
        item.future.set_result(result)
        if self._on_result is not None:
            try:
                self._on_result(result, item.event)
            except Exception:
                # A raising callback must not stall the queue; it is the caller's code to fix.
                logger.exception("trackway: on_result raised")

    def _fail(self, items: List[_Item], status: int, error: str, message: str, field: Optional[str] = None) -> None:
        for item in items:
            if not item.future.done():
                self._settle(item, TrackResult(False, item.event["event_id"], status, message, error=error, field=field))

    def _send(self, batch: List[_Item]) -> None:
        """Sends ``batch`` until every event in it has a final answer. Events answered 500 in
        their slot ("not stored; safe to retry") are sent again with the same ids."""
        waiting = batch
        policy = self._transport.retry
        round_ = 0
        while waiting:
            raw = b'{"events":[' + b",".join(item.json for item in waiting) + b"]}"
            headers = {"Content-Encoding": "gzip"} if self._gzip else {}
            body = gzip.compress(raw, compresslevel=1) if self._gzip else raw
            try:
                exchange = self._transport.exchange("POST", "/v1/track/batch", body, headers, True)
            except ApiError as error:
                if error.status == 413 and len(waiting) > 1:
                    # Bigger than the server takes after all: halve it and send both halves.
                    half = (len(waiting) + 1) // 2
                    self._send(waiting[:half])
                    self._send(waiting[half:])
                    return
                self._fail(waiting, error.status, error.error, error.message, error.field)
                return
            except NetworkError as error:
                self._fail(waiting, 0, "Network error", str(error))
                return
            results = exchange.body.get("results") if isinstance(exchange.body, dict) else None
            results = results if isinstance(results, list) else []
            retry: List[_Item] = []
            for index, item in enumerate(waiting):
                slot = results[index] if index < len(results) and isinstance(results[index], dict) else None
                status = slot.get("status") if slot else None
                if status == 200:
                    self._settle(
                        item,
                        TrackResult(
                            True,
                            slot.get("event_id") or item.event["event_id"],
                            200,
                            slot.get("message", ""),
                            deduplicated=slot.get("deduplicated") is True,
                            warnings=tuple(slot.get("warnings") or ()),
                        ),
                    )
                elif isinstance(status, int) and status >= 500 and round_ < policy.max_retries:
                    retry.append(item)
                else:
                    self._settle(
                        item,
                        TrackResult(
                            False,
                            item.event["event_id"],
                            status if isinstance(status, int) else 0,
                            (slot or {}).get("message", "No result for this event in the batch response"),
                            error=(slot or {}).get("error", "Invalid response"),
                            field=(slot or {}).get("field"),
                        ),
                    )
            waiting = retry
            if waiting:
                time.sleep(policy.backoff(round_))
            round_ += 1
