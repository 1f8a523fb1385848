"""verify_webhook() against every vector of the shared file clients/webhook-vectors.json."""

import json
import pathlib
import time
import unittest

import trackway

VECTORS = json.loads(
    (pathlib.Path(__file__).resolve().parents[2] / "webhook-vectors.json").read_text("utf-8")
)


class SharedVectors(unittest.TestCase):
    def test_every_vector(self) -> None:
        self.assertGreaterEqual(len(VECTORS["vectors"]), 10)
        for vector in VECTORS["vectors"]:
            with self.subTest(vector["name"]):
                call = lambda: trackway.verify_webhook(  # noqa: E731
                    vector["body"].encode("utf-8"),
                    vector["headers"],
                    vector["secrets"],
                    tolerance=VECTORS["tolerance_seconds"],
                    now=vector["now"],
                )
                if vector["expect"] == "ok":
                    self.assertEqual(call(), json.loads(vector["body"]))
                else:
                    with self.assertRaises(trackway.WebhookVerificationError) as caught:
                        call()
                    self.assertEqual(caught.exception.code, vector["expect"])
                    self.assertTrue(caught.exception.message)


class Shapes(unittest.TestCase):
    vector = VECTORS["vectors"][0]

    def test_body_as_str_and_headers_as_pairs(self) -> None:
        payload = trackway.verify_webhook(
            self.vector["body"],
            list(self.vector["headers"].items()),
            self.vector["secrets"][0],
            now=self.vector["now"],
        )
        self.assertEqual(payload["event"], "event.tracked")

    def test_list_valued_headers(self) -> None:
        headers = {k: [v] for k, v in self.vector["headers"].items()}
        payload = trackway.verify_webhook(
            self.vector["body"].encode(), headers, self.vector["secrets"], now=self.vector["now"]
        )
        self.assertEqual(payload["data"]["event_id"], "order-1001")

    def test_default_now_is_the_current_time(self) -> None:
        # The vector is signed for its own `now`, far from today's clock.
        if abs(time.time() - self.vector["now"]) > 300:
            with self.assertRaises(trackway.WebhookVerificationError) as caught:
                trackway.verify_webhook(
                    self.vector["body"].encode(), self.vector["headers"], self.vector["secrets"]
                )
            self.assertEqual(caught.exception.code, "timestamp_out_of_tolerance")

    def test_no_secret_is_a_programming_error(self) -> None:
        with self.assertRaises(ValueError):
            trackway.verify_webhook(b"{}", {}, [])


if __name__ == "__main__":
    unittest.main()
