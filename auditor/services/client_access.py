"""Who is on the other end of an HTTP request, for the routes that trust loopback.

``/metrics`` without a token and the dashboard without a token answer only clients on this
machine. The TCP peer alone does not say that: behind a reverse proxy on the same host every
request comes from loopback, whoever sent it. So:

- a request that carries a forwarding header (``Forwarded``, ``X-Forwarded-For``,
  ``X-Real-IP``) was relayed: it is local only if the peer is a proxy the operator trusts
  (``AUDITOR_TRUSTED_PROXIES``) *and* the client that proxy names is on loopback;
- otherwise the peer itself must be on loopback.

A proxy the operator did not list cannot vouch for anyone, and its header is not ignored
either: the request is treated as remote.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from collections.abc import Mapping, Sequence

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
FORWARDING_HEADERS = ("forwarded", "x-forwarded-for", "x-real-ip")
_FORWARDED_FOR = re.compile(r'for="?\[?([^\]";,]+)', re.IGNORECASE)


def _address(text: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    if not text:
        return None
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # a dual-stack socket's view of an IPv4 client
    return address


def forwarded_client(headers: Mapping[str, str]) -> str | None:
    """The client the nearest proxy names (the last hop it appended)."""
    if "forwarded" in headers:
        found = _FORWARDED_FOR.findall(headers["forwarded"])
        return found[-1] if found else None
    if "x-forwarded-for" in headers:
        return headers["x-forwarded-for"].split(",")[-1].strip()
    return headers.get("x-real-ip")


def local_client(
    peer: str | None, headers: Mapping[str, str], trusted_proxies: Sequence[Network]
) -> str | None:
    """None when the request comes from this machine, else the reason it does not."""
    peer_address = _address(peer)
    if peer_address is None:
        return "the client's address is unknown"
    if any(name in headers for name in FORWARDING_HEADERS):
        if not any(peer_address in network for network in trusted_proxies):
            return (
                f"the request was relayed (a forwarding header) by {peer_address}, which is not "
                "in AUDITOR_TRUSTED_PROXIES"
            )
        client = _address(forwarded_client(headers))
        if client is None or not client.is_loopback:
            return f"the proxy {peer_address} relayed it for {client or 'an unknown client'}"
        return None
    if not peer_address.is_loopback:
        return f"the request came from {peer_address}"
    return None


def client_address(peer: str | None, headers: Mapping[str, str], trusted: Sequence[Network]) -> str:
    """Who to count a request against: the client a trusted proxy names, else the peer."""
    peer_address = _address(peer)
    relayed = any(name in headers for name in FORWARDING_HEADERS)
    if peer_address is not None and relayed and any(peer_address in n for n in trusted):
        return forwarded_client(headers) or str(peer_address)
    return str(peer_address or peer or "unknown")


def bearer_matches(header: str, token: str) -> bool:
    """``Authorization: Bearer <token>``, the scheme required, compared in constant time."""
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(value.strip().encode(), token.encode())
