"""The one way a notifier POSTs to a URL a project gave: checked address, total deadline.

``post`` resolves the URL's host once, checks every address (:mod:`.targets`), and sends to
the first checked address itself: the URL's host is replaced by the IP and the original name
travels in the Host header (and as the TLS server name, so certificates are still verified
against the name). There is no second lookup for an attacker's DNS to answer differently;
proxies from the environment are ignored; redirects are not followed; the answer is read
512 bytes far at most (it may be hostile).

The deadline is total (connect + send + read), and the send itself keeps it: every socket
operation waits at most what is left of it, and once nothing is left the next one fails and
the connection is closed. A receiver that trickles its answer a byte at a time, each byte
inside any per-operation timeout, is cut off at the deadline and leaves neither a socket
nor a thread behind (before, an abandoned send lived on with both until the receiver
stopped).

A kind that POSTs (webhook, slack) builds its body and headers and calls ``post``; the
outcome is a ``SendResult`` (2xx ok; 5xx, 408, 425, 429, timeouts, transport errors
retryable; redirects and other 4xx permanent).
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import httpcore

from auditor.notifiers.results import SendResult
from auditor.notifiers.targets import (
    Network,
    Resolver,
    TargetRefused,
    check_addresses,
    default_resolver,
    parse_target,
)

MAX_ANSWER_BYTES = 512
_RETRYABLE_4XX = frozenset({408, 425, 429})
_CONNECT_SECONDS = 5.0


class _DeadlineStream(httpcore.NetworkStream):
    """A stream whose every operation waits at most until the deadline."""

    def __init__(self, inner: httpcore.NetworkStream, ends_at: float) -> None:
        self._inner = inner
        self._ends_at = ends_at

    def _left(self, timeout: float | None, error: type[Exception]) -> float:
        left = self._ends_at - time.monotonic()
        if left <= 0:
            raise error("the total deadline has passed")
        return left if timeout is None else min(timeout, left)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        left = self._left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, left), self._ends_at
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """Connections whose every operation ends by ``ends_at`` (``time.monotonic``)."""

    def __init__(self, ends_at: float) -> None:
        self._inner = httpcore.SyncBackend()
        self._ends_at = ends_at

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        left = self._ends_at - time.monotonic()
        if left <= 0:
            raise httpcore.ConnectTimeout("the total deadline has passed")
        wait = left if timeout is None else min(timeout, left)
        stream = self._inner.connect_tcp(host, port, wait, local_address, socket_options)
        return _DeadlineStream(stream, self._ends_at)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("notifiers connect over TCP only")


def post(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    deadline: float,
    *,
    what: str,
    allowed: Sequence[Network] = (),
    resolver: Resolver | None = None,
    ca_file: str | None = None,
    timeouts: Mapping[str, float] | None = None,
) -> SendResult:
    """POST ``body`` to ``url`` within ``deadline`` seconds in all; never raises.

    ``what`` names the target in messages ("webhook url '...'"); ``allowed`` are the private
    networks the operator allows (``AUDITOR_ALLOW_PRIVATE_TARGETS``); ``resolver`` is
    injectable so tests touch no DNS; ``timeouts`` ("connect", "read", "write", "pool")
    bound single operations further (default: 5 s to connect, the deadline for the rest).
    """
    ends_at = time.monotonic() + deadline
    try:
        target = parse_target(url)
        try:
            addresses = (resolver or default_resolver())(target.host, target.port)
        except OSError as error:
            return SendResult.retryable(f"cannot resolve {target.host!r}: {error}")
        check_addresses(what, addresses, allowed)
    except TargetRefused as refused:
        return SendResult.permanent(str(refused))
    address = addresses[0]
    pinned = target.url.copy_with(host=str(address))
    sent = {"Host": target.url.netloc.decode("ascii"), **headers}
    extensions: dict[str, Any] = {
        "timeout": {
            "connect": min(_CONNECT_SECONDS, deadline),
            "read": deadline,
            "write": deadline,
            "pool": deadline,
            **(timeouts or {}),
        }
    }
    if target.url.scheme == "https":
        extensions["sni_hostname"] = target.host
    context = ssl.create_default_context(cafile=ca_file)
    try:
        with (
            httpcore.ConnectionPool(
                ssl_context=context, max_connections=1, network_backend=_DeadlineBackend(ends_at)
            ) as pool,
            pool.stream(
                "POST", str(pinned), headers=list(sent.items()), content=body, extensions=extensions
            ) as response,
        ):
            answer = _read_some(response)
            return classify(response.status, answer, dict(_headers(response)))
    except httpcore.TimeoutException as error:
        if time.monotonic() >= ends_at:
            return SendResult.retryable(
                f"no complete answer within the {deadline:g} s deadline (connect + send + read) "
                f"from {address}"
            )
        return SendResult.retryable(f"timeout ({type(error).__name__}) to {address}")
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol) as error:
        return SendResult.retryable(f"transport error to {address}: {error!r}")
    except Exception as error:  # a bug or an unexpected library error: stop, keep the row
        return SendResult.permanent(f"unexpected {type(error).__name__}: {error}")


def _headers(response: httpcore.Response) -> Iterable[tuple[str, str]]:
    for name, value in response.headers:
        yield name.decode("latin-1").lower(), value.decode("latin-1")


def _read_some(response: httpcore.Response) -> str:
    collected = b""
    for chunk in response.iter_stream():
        collected += chunk
        if len(collected) >= MAX_ANSWER_BYTES:
            break
    return collected[:MAX_ANSWER_BYTES].decode("utf-8", "replace")


def classify(status: int, answer: str, headers: Mapping[str, str]) -> SendResult:
    """The outcome of an HTTP answer (``headers`` with lower-case names)."""
    if 200 <= status < 300:
        return SendResult.success(f"HTTP {status}", status)
    if 300 <= status < 400:
        where = headers.get("location", "?")
        return SendResult.permanent(f"HTTP {status} redirect to {where!r} not followed", status)
    if status >= 500 or status in _RETRYABLE_4XX:
        return SendResult.retryable(f"HTTP {status}: {answer[:200]}", status)
    return SendResult.permanent(f"HTTP {status}: {answer[:200]}", status)
