"""The client's batching, retries and errors against a scripted local HTTP server (real sockets,
real gzip). The scenario against the real Trackway server is test/clients.process.test.ts."""

import gzip
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple

import trackway

EVENT_ID = re.compile(r"^evt_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
Answer = Tuple[int, Dict[str, Any], Dict[str, str]]


class Recorded:
    def __init__(self, method: str, path: str, headers: Dict[str, str], raw: bytes) -> None:
        self.method, self.path, self.headers, self.at = method, path, headers, time.monotonic()
        self.body = gzip.decompress(raw) if headers.get("content-encoding") == "gzip" else raw
        self.json = json.loads(self.body) if self.body else None


def batch_ok(request: Recorded) -> Answer:
    events = request.json["events"]
    results = [
        {"index": i, "status": 200, "success": True, "event_id": e["event_id"], "message": "Event tracked"}
        for i, e in enumerate(events)
    ]
    return 200, {"accepted": len(events), "deduplicated": 0, "rejected": 0, "results": results}, {}


class StandIn:
    """A local HTTP server answering each request with ``respond(request)``; ``None`` cuts the
    connection without an answer, ``"hang"`` never answers."""

    def __init__(self, respond: Callable[[Recorded], Any]) -> None:
        self.respond = respond
        self.requests: List[Recorded] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                request = Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, raw)
                stand_in.requests.append(request)
                answer = stand_in.respond(request)
                if answer is None:
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if answer == "hang":
                    time.sleep(2)
                    self.close_connection = True
                    return
                status, body, headers = answer
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def batches(self) -> List[Recorded]:
        return [r for r in self.requests if r.path == "/v1/track/batch"]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Base(unittest.TestCase):
    def stand_in(self, respond: Callable[[Recorded], Any]) -> StandIn:
        server = StandIn(respond)
        self.addCleanup(server.close)
        return server

    def client(self, server: StandIn, **options: Any) -> trackway.Client:
        options.setdefault("retry_base_delay", 0.01)
        client = trackway.Client(api_key="tw_live_test", base_url=server.url, **options)
        self.addCleanup(client.close)
        return client


class Batching(Base):
    def test_batches_by_size_gzipped_with_an_event_id_each(self) -> None:
        server = self.stand_in(batch_ok)
        client = self.client(server, max_batch_size=100, flush_interval=60)
        futures = [client.track({"pixel_id": "px_1", "event_name": "Purchase", "value": i}) for i in range(250)]
        futures.append(client.track({"pixel_id": "px_1", "event_name": "Lead", "event_id": "order-7"}))
        results = client.close()
        self.assertEqual([len(b.json["events"]) for b in server.batches()], [100, 100, 51])
        for batch in server.batches():
            self.assertEqual(batch.headers["content-encoding"], "gzip")
            self.assertEqual(batch.headers["authorization"], "Bearer tw_live_test")
            self.assertEqual(batch.method, "POST")
        # close() returns the outcomes still outstanding when it was called.
        self.assertTrue(0 < len(results) <= 251)
        self.assertTrue(all(r.ok and r.status == 200 for r in results))
        ids = [f.result().event_id for f in futures]
        self.assertTrue(all(EVENT_ID.match(i) for i in ids[:-1]), ids[:3])
        self.assertEqual(len(set(ids)), 251)
        self.assertEqual(ids[-1], "order-7")
        sent = [e["value"] for b in server.batches() for e in b.json["events"] if "value" in e]
        self.assertEqual(sent, list(range(250)))

    def test_time_bound_sends_a_partial_batch(self) -> None:
        server = self.stand_in(batch_ok)
        client = self.client(server, flush_interval=0.2)
        started = time.monotonic()
        result = client.track({"pixel_id": "px_1", "event_name": "Lead"}).result(timeout=5)
        self.assertTrue(result.ok)
        self.assertGreaterEqual(time.monotonic() - started, 0.15)
        self.assertEqual(len(server.batches()), 1)

    def test_byte_bound_splits_large_events(self) -> None:
        server = self.stand_in(batch_ok)
        client = self.client(server, max_batch_size=1000, flush_interval=60)
        for _ in range(40):
            client.track({"pixel_id": "px_1", "event_name": "Lead", "custom_data": {"note": "x" * 15000}})
        client.flush()
        sizes = [len(b.body) for b in server.batches()]
        self.assertGreater(len(sizes), 1)
        self.assertTrue(all(s <= 500_000 for s in sizes), sizes)

    def test_flush_returns_outcomes_and_close_refuses_more(self) -> None:
        server = self.stand_in(batch_ok)
        with trackway.Client(api_key="k", base_url=server.url, flush_interval=60) as client:
            client.track({"pixel_id": "px_1", "event_name": "Lead"})
            self.assertEqual(client.pending_events, 1)
            self.assertEqual(len(client.flush()), 1)
            self.assertEqual(client.pending_events, 0)
            client.track({"pixel_id": "px_1", "event_name": "Lead"})
        self.assertEqual(len(server.batches()), 2)
        with self.assertRaises(RuntimeError):
            client.track({"pixel_id": "px_1", "event_name": "Lead"})

    def test_on_result_sees_every_outcome(self) -> None:
        server = self.stand_in(batch_ok)
        seen: List[Tuple[bool, str]] = []
        client = self.client(server, on_result=lambda r, e: seen.append((r.ok, e["event_name"])))
        client.track({"pixel_id": "px_1", "event_name": "A"})
        client.track({"pixel_id": "px_1", "event_name": "B"})
        client.close()
        self.assertEqual(seen, [(True, "A"), (True, "B")])

    def test_unflushed_events_are_sent_at_interpreter_exit(self) -> None:
        server = self.stand_in(batch_ok)
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        script = (
            "import trackway\n"
            f"c = trackway.Client(api_key='k', base_url={server.url!r}, flush_interval=600)\n"
            "c.track({'pixel_id': 'px_1', 'event_name': 'Lead'})\n"
            "import gc; del c; gc.collect()\n"  # even a client no longer referenced is flushed
        )
        subprocess.run([sys.executable, "-c", script], check=True, cwd=here, timeout=30)
        self.assertEqual(len(server.batches()), 1)


class Retries(Base):
    def test_429_waits_retry_after_then_resends_the_same_ids(self) -> None:
        calls = []

        def respond(request: Recorded) -> Answer:
            calls.append(request)
            if len(calls) == 1:
                return 429, {"error": "Rate limit exceeded", "message": "slow down", "retry_after": 1}, {"Retry-After": "1"}
            return batch_ok(request)

        server = self.stand_in(respond)
        client = self.client(server)
        client.track({"pixel_id": "px_1", "event_name": "Lead"})
        [result] = client.flush()
        self.assertTrue(result.ok)
        first, second = server.batches()
        self.assertGreaterEqual(second.at - first.at, 0.95)
        self.assertEqual(first.json, second.json)

    def test_5xx_and_dropped_connections_are_retried_with_backoff(self) -> None:
        answers: List[Any] = [None, (503, {"error": "Service unavailable", "message": "down"}, {})]

        def respond(request: Recorded) -> Any:
            return answers.pop(0) if answers else batch_ok(request)

        server = self.stand_in(respond)
        client = self.client(server)
        client.track({"pixel_id": "px_1", "event_name": "Lead"})
        [result] = client.flush()
        self.assertTrue(result.ok)
        self.assertEqual(len(server.batches()), 3)
        self.assertEqual(len({json.dumps(b.json) for b in server.batches()}), 1)

    def test_other_4xx_is_never_retried(self) -> None:
        server = self.stand_in(lambda r: (401, {"error": "Unauthorized", "message": "Invalid API key"}, {}))
        client = self.client(server)
        client.track({"pixel_id": "px_1", "event_name": "Lead"})
        [result] = client.flush()
        self.assertFalse(result.ok)
        self.assertEqual((result.status, result.error, result.message), (401, "Unauthorized", "Invalid API key"))
        self.assertEqual(len(server.batches()), 1)

    def test_a_slot_answered_500_is_resent_alone(self) -> None:
        rounds: List[List[str]] = []

        def respond(request: Recorded) -> Answer:
            ids = [e["event_id"] for e in request.json["events"]]
            rounds.append(ids)
            if len(rounds) > 1:
                return batch_ok(request)
            results = [
                {"index": 0, "status": 200, "success": True, "event_id": ids[0], "message": "Event tracked"},
                {"index": 1, "status": 500, "error": "Internal error", "message": "not stored; safe to retry"},
                {"index": 2, "status": 400, "error": "Invalid request", "message": "Invalid field: value must be a finite number", "field": "value"},
            ]
            return 200, {"accepted": 1, "deduplicated": 0, "rejected": 2, "results": results}, {}

        server = self.stand_in(respond)
        client = self.client(server)
        for name in ("A", "B", "C"):
            client.track({"pixel_id": "px_1", "event_name": name})
        a, b, c = client.flush()
        self.assertTrue(a.ok and b.ok, (a, b, rounds))
        self.assertEqual((c.ok, c.status, c.field), (False, 400, "value"))
        self.assertEqual(rounds[1], [rounds[0][1]])

    def test_retries_are_bounded(self) -> None:
        server = self.stand_in(lambda r: (500, {"error": "Internal error", "message": "boom"}, {}))
        client = self.client(server, max_retries=2)
        client.track({"pixel_id": "px_1", "event_name": "Lead"})
        [result] = client.flush()
        self.assertEqual((result.ok, result.status, result.error), (False, 500, "Internal error"))
        self.assertEqual(len(server.batches()), 3)

    def test_413_halves_the_batch(self) -> None:
        def respond(request: Recorded) -> Answer:
            if len(request.json["events"]) > 2:
                return 413, {"error": "Payload too large", "message": "too big"}, {}
            return batch_ok(request)

        server = self.stand_in(respond)
        client = self.client(server, flush_interval=60)
        for _ in range(4):
            client.track({"pixel_id": "px_1", "event_name": "Lead"})
        self.assertTrue(all(r.ok for r in client.flush()))
        self.assertEqual([len(b.json["events"]) for b in server.batches()], [4, 2, 2])

    def test_timeout_reports_a_network_error(self) -> None:
        server = self.stand_in(lambda r: "hang")
        client = self.client(server, timeout=0.3, max_retries=0)
        started = time.monotonic()
        with self.assertRaises(trackway.NetworkError) as caught:
            client.pixels.get("px_1")
        self.assertLess(time.monotonic() - started, 1.5)
        self.assertIn("timed out", str(caught.exception))
        client.track({"pixel_id": "px_1", "event_name": "Lead"})
        [result] = client.flush()
        self.assertEqual((result.ok, result.status, result.error), (False, 0, "Network error"))


class Api(Base):
    def test_errors_carry_error_message_field_and_status(self) -> None:
        server = self.stand_in(
            lambda r: (400, {"error": "Invalid request", "message": "Invalid field: domain must be a hostname", "field": "domain"}, {})
        )
        client = self.client(server)
        with self.assertRaises(trackway.ApiError) as caught:
            client.pixels.create(name="Shop", domain="not a host")
        error = caught.exception
        self.assertEqual((error.status, error.error, error.field), (400, "Invalid request", "domain"))
        self.assertEqual(str(error), "Invalid field: domain must be a hostname")
        self.assertIsInstance(error, trackway.TrackwayError)
        self.assertEqual(len(server.requests), 1)

    def test_creates_are_not_retried_on_5xx_but_reads_are(self) -> None:
        server = self.stand_in(lambda r: (503, {"error": "Service unavailable", "message": "down"}, {}))
        client = self.client(server, max_retries=2)
        with self.assertRaises(trackway.ApiError):
            client.pixels.create(name="Shop", domain="shop.example.com")
        self.assertEqual(len(server.requests), 1)
        with self.assertRaises(trackway.ApiError):
            client.pixels.get("px_1")
        self.assertEqual(len(server.requests), 4)

    def test_a_create_cut_off_mid_request_is_sent_once(self) -> None:
        # The server got the create, then the (kept-alive) connection died without an answer:
        # the pixel may exist, so resending could make two.
        def respond(request: Recorded) -> Any:
            return None if request.method == "POST" else (200, {"pixels": []}, {})

        server = self.stand_in(respond)
        client = self.client(server, max_retries=3)
        client.pixels.list()
        with self.assertRaises(trackway.NetworkError):
            client.pixels.create(name="Shop", domain="shop.example.com")
        self.assertEqual([r.method for r in server.requests], ["GET", "POST"])

    def test_iterate_reads_every_page(self) -> None:
        events = [{"event_id": f"e{i}", "event_name": "Lead"} for i in range(230)]

        def respond(request: Recorded) -> Answer:
            query = dict(p.split("=") for p in request.path.split("?")[1].split("&"))
            offset, limit = int(query.get("offset", 0)), min(100, int(query.get("limit", 50)))
            return 200, {"events": events[offset : offset + limit], "total": len(events), "limit": limit, "offset": offset}, {}

        server = self.stand_in(respond)
        client = self.client(server)
        got = [e["event_id"] for e in client.events.iterate("px_1", limit=100)]
        self.assertEqual(got, [e["event_id"] for e in events])
        self.assertEqual(len(server.requests), 3)
        self.assertTrue(server.requests[0].path.startswith("/v1/pixels/px_1/events?"))

    def test_paths_and_bodies(self) -> None:
        server = self.stand_in(lambda r: (200, {"ok": True}, {}))
        client = self.client(server)
        client.validate({"pixel_id": "px_1", "event_name": "Lead"})
        client.event("px_1", "order/7")
        client.pixels.update("px_1", status="paused")
        client.pixels.list(limit=10)
        seen = [(r.method, r.path, r.json) for r in server.requests]
        self.assertEqual(
            seen,
            [
                ("POST", "/v1/track/validate", {"pixel_id": "px_1", "event_name": "Lead"}),
                ("GET", "/v1/pixels/px_1/events/order%2F7", None),
                ("PATCH", "/v1/pixels/px_1", {"status": "paused"}),
                ("GET", "/v1/pixels?limit=10", None),
            ],
        )


if __name__ == "__main__":
    unittest.main()
