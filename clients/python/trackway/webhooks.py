"""verify_webhook(): proof that a delivery came from Trackway, was not altered, and is not an
old message replayed. Same rules as the Node client's ``verifyWebhook``."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Union

from .errors import WebhookVerificationError

DEFAULT_TOLERANCE_SECONDS = 300
_TIMESTAMP = re.compile(r"^[0-9]{1,12}$")
_HEX = re.compile(r"^(?:[0-9a-fA-F]{2})+$")


def _header(headers: Any, name: str) -> Optional[str]:
    """A header by name in any key case, from a dict, a Django/Flask headers object or a
    list of pairs; the first value when there are several."""
    items: Iterable[Any] = headers.items() if hasattr(headers, "items") else headers
    for key, value in items:
        if str(key).lower() == name:
            if isinstance(value, (list, tuple)):
                value = value[0] if value else None
            if isinstance(value, bytes):
                value = value.decode("latin-1")
            return value
    return None


def _b64(text: str) -> Optional[bytes]:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def _any_matches(keys: Sequence[bytes], signatures: Sequence[bytes], data: bytes) -> bool:
    for key in keys:
        expected = hmac.new(key, data, hashlib.sha256).digest()
        for signature in signatures:
            if hmac.compare_digest(expected, signature):
                return True
    return False


def verify_webhook(
    raw_body: Union[bytes, str],
    headers: Any,
    secrets: Union[str, Sequence[str]],
    *,
    tolerance: int = DEFAULT_TOLERANCE_SECONDS,
    now: Optional[float] = None,
) -> Dict[str, Any]:
    """Checks a delivery against each of ``secrets`` (pass both while a rotation overlaps)
    and returns the parsed payload; raises :class:`WebhookVerificationError` otherwise.

    With the Standard Webhooks headers (``webhook-id``, ``webhook-timestamp``,
    ``webhook-signature``), which Trackway always sends, the signature covers the message id
    and timestamp too, and a timestamp more than ``tolerance`` seconds from ``now`` (default:
    the current time) either way is refused. Only without them is ``X-Service-Signature``
    (body only, no replay protection) used. ``raw_body`` must be the exact bytes received.
    """
    body = raw_body.encode("utf-8") if isinstance(raw_body, str) else bytes(raw_body)
    candidates = [s for s in ([secrets] if isinstance(secrets, str) else list(secrets)) if s]
    if not candidates:
        raise ValueError("verify_webhook: no secret given")

    standard = _header(headers, "webhook-signature")
    service = _header(headers, "x-service-signature")
    if standard is not None:
        msg_id = _header(headers, "webhook-id")
        timestamp = _header(headers, "webhook-timestamp")
        if msg_id is None or timestamp is None or not _TIMESTAMP.match(timestamp):
            raise WebhookVerificationError(
                "invalid_timestamp",
                "webhook-id and a numeric webhook-timestamp must accompany webhook-signature",
            )
        current = int(time.time() if now is None else now)
        if abs(current - int(timestamp)) > tolerance:
            raise WebhookVerificationError(
                "timestamp_out_of_tolerance",
                f"webhook-timestamp is more than {tolerance} s from now: refused as a possible replay",
            )
        signatures = [
            s
            for s in (_b64(entry[3:]) for entry in standard.split(" ") if entry.startswith("v1,"))
            if s is not None
        ]
        # The Standard Webhooks key is the base64 after `whsec_`.
        keys = [
            k
            for k in (_b64(s[6:] if s.startswith("whsec_") else s) for s in candidates)
            if k
        ]
        verified = _any_matches(keys, signatures, f"{msg_id}.{timestamp}.".encode() + body)
    elif service is not None:
        hex_part = service[7:] if service.startswith("sha256=") else ""
        # X-Service-Signature is keyed with the whole secret string, `whsec_` included.
        verified = bool(_HEX.match(hex_part)) and _any_matches(
            [s.encode("utf-8") for s in candidates], [bytes.fromhex(hex_part)], body
        )
    else:
        raise WebhookVerificationError(
            "missing_signature", "No webhook-signature or X-Service-Signature header"
        )
    if not verified:
        raise WebhookVerificationError(
            "invalid_signature", "The signature matches none of the given secrets"
        )
    try:
        payload = json.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise WebhookVerificationError("invalid_payload", "The signed body is not JSON") from None
    if not isinstance(payload, dict):
        raise WebhookVerificationError("invalid_payload", "The signed body is not a JSON object")
    return payload
