"""Trackway's official Python client (standard library only).

    import trackway
    with trackway.Client(api_key="tw_live_…", base_url="http://127.0.0.1:8080") as client:
        client.track({"pixel_id": "px_…", "event_name": "Purchase", "value": 49.99, "currency": "USD"})
"""

import logging

from ._batcher import TrackResult, new_event_id
from ._client import Client, Events, Pixels, Webhooks
from ._http import RetryPolicy
from .errors import ApiError, NetworkError, TrackwayError, WebhookVerificationError
from .webhooks import verify_webhook

__all__ = [
    "ApiError",
    "Client",
    "Events",
    "NetworkError",
    "Pixels",
    "RetryPolicy",
    "TrackResult",
    "TrackwayError",
    "Webhooks",
    "WebhookVerificationError",
    "new_event_id",
    "verify_webhook",
]
__version__ = "0.1.0"

# A library logs; the application decides where that goes (nothing by default).
logging.getLogger("trackway").addHandler(logging.NullHandler())
