"""The shared scenario's driver (test/clients.process.test.ts), not part of the package:
``python3 clients/python/scenario.py <track|iterate|verify|get>``. Environment: TRACKWAY_URL,
TRACKWAY_API_KEY, PIXEL_ID, COUNT, EVENT_ID. Prints one JSON object on its last line."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import trackway  # noqa: E402


def client() -> trackway.Client:
    # Survives a server that is down for ~10 s: up to 10 retries, backoff capped at 2 s.
    return trackway.Client(
        api_key=os.environ["TRACKWAY_API_KEY"],
        base_url=os.environ["TRACKWAY_URL"],
        max_retries=10,
        retry_max_delay=2.0,
    )


def main(step: str) -> dict:
    pixel_id = os.environ.get("PIXEL_ID", "")
    if step == "track":
        started = time.perf_counter()
        with client() as c:
            futures = [
                c.track({"pixel_id": pixel_id, "event_name": "Purchase", "value": i, "currency": "USD"})
                for i in range(int(os.environ.get("COUNT", "1000")))
            ]
        seconds = time.perf_counter() - started  # track() + close(), for bench/clients.ts
        results = [f.result() for f in futures]
        failed = [r for r in results if not r.ok]
        return {
            "ok": len(results) - len(failed),
            "failed": len(failed),
            "errors": [f"{r.status} {r.error}: {r.message}" for r in failed[:5]],
            "seconds": seconds,
        }
    if step == "iterate":
        with client() as c:
            ids = [e["event_id"] for e in c.events.iterate(pixel_id, limit=100)]
        return {"count": len(ids), "distinct_event_ids": len(set(ids))}
    if step == "verify":
        given = json.loads(sys.stdin.read())
        try:
            payload = trackway.verify_webhook(given["body"].encode("utf-8"), given["headers"], given["secrets"])
        except trackway.WebhookVerificationError as error:
            return {"ok": False, "code": error.code, "message": error.message}
        return {"ok": True, "event": payload["event"]}
    if step == "get":
        with client() as c:
            event = c.event(pixel_id, os.environ["EVENT_ID"])
        return {"event_id": event["event_id"], "event_name": event["event_name"]}
    raise SystemExit(f"unknown step {step!r}")


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
