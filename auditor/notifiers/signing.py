"""Webhook signatures: HMAC-SHA256 over ``<event id>.<timestamp>.<body>`` with the channel
secret, sent as ``X-Auditor-Signature: sha256=<hex>``.

Signing the id and the timestamp with the body binds them together: a receiver that checks
the signature and rejects old timestamps cannot be fed a replayed or re-labelled body.
"""

from __future__ import annotations

import hashlib
import hmac

HEADER_EVENT_ID = "X-Auditor-Event-Id"
HEADER_TIMESTAMP = "X-Auditor-Timestamp"
HEADER_SIGNATURE = "X-Auditor-Signature"
SCHEME = "sha256="
MIN_SECRET_BYTES = 16


def sign(secret: str | bytes, event_id: str, timestamp: str, body: bytes) -> str:
    """The signature header value for one delivery: ``sha256=<64 hex>``."""
    key = secret.encode("utf-8") if isinstance(secret, str) else secret
    message = f"{event_id}.{timestamp}.".encode() + body
    return SCHEME + hmac.new(key, message, hashlib.sha256).hexdigest()


def verify(
    secret: str | bytes,
    event_id: str,
    timestamp: str,
    body: bytes,
    signature: str,
    now: float,
    tolerance_seconds: float = 300.0,
) -> bool:
    """True when ``signature`` is valid and ``timestamp`` (unix seconds) is within tolerance."""
    try:
        sent_at = int(timestamp)
    except ValueError:
        return False
    if abs(now - sent_at) > tolerance_seconds:
        return False
    expected = sign(secret, event_id, timestamp, body)
    return hmac.compare_digest(expected, signature)
