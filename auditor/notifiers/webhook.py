"""The webhook channel: a signed JSON POST to a checked address, with no redirects.

At send time the host is resolved once, every address is checked (:mod:`.targets`), and the
request goes to the first checked address itself: the URL's host is replaced by the IP and
the original name travels in the Host header (and as the TLS server name, so certificates
are still verified against the name). There is no second lookup for an attacker's DNS to
answer differently. Proxies from the environment are ignored for the same reason.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from auditor.notifiers.payload import Notification
from auditor.notifiers.results import SendResult
from auditor.notifiers.signing import (
    HEADER_EVENT_ID,
    HEADER_SIGNATURE,
    HEADER_TIMESTAMP,
    MIN_SECRET_BYTES,
    sign,
)
from auditor.notifiers.targets import (
    Network,
    Resolver,
    TargetRefused,
    check_addresses,
    parse_target,
    resolve_host,
)

USER_AGENT = "auditor-webhook/1"
_MAX_REASON_BYTES = 512  # the receiver's answer is read only this far: it may be hostile
_RETRYABLE_4XX = frozenset({408, 425, 429})


@dataclass(frozen=True)
class WebhookTimeouts:
    connect: float = 5.0
    read: float = 10.0
    write: float = 10.0
    pool: float = 5.0

    def as_httpx(self) -> httpx.Timeout:
        return httpx.Timeout(connect=self.connect, read=self.read, write=self.write, pool=self.pool)


@dataclass(frozen=True)
class WebhookChannel:
    """A webhook destination.

    ``allowed`` lists the private networks the operator allows for the whole deployment
    (``AUDITOR_ALLOW_PRIVATE_TARGETS``); it is not a property of the channel, so no project
    key can set it. ``resolver`` and ``clock`` are injectable so tests can play DNS
    rebinding without touching real DNS.
    """

    name: str
    url: str
    secret: str = field(repr=False)
    allowed: tuple[Network, ...] = ()
    timeouts: WebhookTimeouts = WebhookTimeouts()
    resolver: Resolver = resolve_host
    clock: Callable[[], float] = time.time
    ca_file: str | None = None  # a private CA for a receiver inside; default: system CAs

    def __post_init__(self) -> None:
        if len(self.secret.encode("utf-8")) < MIN_SECRET_BYTES:
            raise ValueError(
                f"webhook channel {self.name!r}: secret must be at least {MIN_SECRET_BYTES} bytes"
            )

    def send(self, notification: Notification) -> SendResult:
        """POST ``notification``; never raises, never follows a redirect."""
        try:
            return self._send(notification)
        except TargetRefused as refused:
            return SendResult.permanent(str(refused))
        except Exception as error:  # a bug or an unexpected library error: stop, keep the row
            return SendResult.permanent(f"unexpected {type(error).__name__}: {error}")

    def _send(self, notification: Notification) -> SendResult:
        target = parse_target(self.url)
        try:
            addresses = self.resolver(target.host, target.port)
        except OSError as error:
            return SendResult.retryable(f"cannot resolve {target.host!r}: {error}")
        check_addresses(f"webhook url {self.url!r}", addresses, self.allowed)
        address = addresses[0]

        body = notification.to_json_bytes()
        timestamp = str(int(self.clock()))
        headers = {
            "Host": target.url.netloc.decode("ascii"),
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            HEADER_EVENT_ID: notification.event_id,
            HEADER_TIMESTAMP: timestamp,
            HEADER_SIGNATURE: sign(self.secret, notification.event_id, timestamp, body),
        }
        pinned = target.url.copy_with(host=str(address))
        extensions = {"sni_hostname": target.host} if target.url.scheme == "https" else {}
        verify: ssl.SSLContext | bool = True
        if self.ca_file is not None:
            verify = ssl.create_default_context(cafile=self.ca_file)
        with httpx.Client(
            follow_redirects=False,
            trust_env=False,
            timeout=self.timeouts.as_httpx(),
            verify=verify,
        ) as client:
            try:
                request = client.build_request(
                    "POST", pinned, headers=headers, content=body, extensions=extensions
                )
                response = client.send(request, stream=True)
                try:
                    answer = _read_some(response)
                finally:
                    response.close()
                return _classify(response.status_code, answer, response.headers)
            except httpx.TimeoutException as error:
                return SendResult.retryable(f"timeout ({type(error).__name__}) to {address}")
            except httpx.TransportError as error:
                return SendResult.retryable(f"transport error to {address}: {error!r}")


def _read_some(response: httpx.Response) -> str:
    collected = b""
    for chunk in response.iter_raw():
        collected += chunk
        if len(collected) >= _MAX_REASON_BYTES:
            break
    return collected[:_MAX_REASON_BYTES].decode("utf-8", "replace")


def _classify(status: int, answer: str, headers: httpx.Headers) -> SendResult:
    if 200 <= status < 300:
        return SendResult.success(f"HTTP {status}", status)
    if 300 <= status < 400:
        where = headers.get("location", "?")
        return SendResult.permanent(f"HTTP {status} redirect to {where!r} not followed", status)
    if status >= 500 or status in _RETRYABLE_4XX:
        return SendResult.retryable(f"HTTP {status}: {answer[:200]}", status)
    return SendResult.permanent(f"HTTP {status}: {answer[:200]}", status)
