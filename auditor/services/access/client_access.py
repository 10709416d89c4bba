"""Who is on the other end of an HTTP request, for the routes that trust loopback.

``/metrics`` without a token and the dashboard without a token answer only clients on this
machine. The TCP peer alone does not say that: behind a reverse proxy on the same host every
request comes from loopback, whoever sent it. So:

- a request that carries a forwarding header (``Forwarded``, ``X-Forwarded-For``,
  ``X-Real-IP``) was relayed: it is local only if the peer is a proxy the operator trusts
  (``AUDITOR_TRUSTED_PROXIES``) *and* every client named in every forwarding header is on
  loopback. Not only the header a proxy sets: a proxy passes on the headers the client sent
  (nginx appends to X-Forwarded-For but forwards a client's own ``Forwarded`` untouched), so
  one header saying 127.0.0.1 proves nothing while another names a remote client;
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


def forwarded_clients(headers: Mapping[str, str]) -> list[str]:
    """Every client address named by any forwarding header, as written (some may be forged
    by the client itself; which one the proxy wrote depends on its configuration)."""
    named: list[str] = []
    for value in _values(headers, "forwarded"):
        found = _FORWARDED_FOR.findall(value)
        named.extend(found if found else [""])  # a Forwarded header naming no one: unknown
    for value in _values(headers, "x-forwarded-for"):
        named.extend(part.strip() for part in value.split(","))
    named.extend(value.strip() for value in _values(headers, "x-real-ip"))
    return named


def _values(headers: Mapping[str, str], name: str) -> list[str]:
    getlist = getattr(headers, "getlist", None)  # Starlette: a header may be sent twice
    if getlist is not None:
        return list(getlist(name))
    return [headers[name]] if name in headers else []


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
        for named in forwarded_clients(headers):
            client = _address(named)
            if client is None or not client.is_loopback:
                return f"the proxy {peer_address} relayed it for {client or 'an unknown client'}"
        return None
    if not peer_address.is_loopback:
        return f"the request came from {peer_address}"
    return None


def client_addresses(
    peer: str | None, headers: Mapping[str, str], trusted: Sequence[Network]
) -> list[str]:
    """Who to count a request against: through a trusted proxy, every client its headers
    name (the one the proxy wrote is among them and stays the same whatever a client adds,
    so rotating a forged header gains nothing); otherwise the peer."""
    peer_address = _address(peer)
    relayed = any(name in headers for name in FORWARDING_HEADERS)
    if peer_address is not None and relayed and any(peer_address in n for n in trusted):
        named = sorted({str(_address(n) or n) for n in forwarded_clients(headers) if n})
        return named or [str(peer_address)]
    return [str(peer_address or peer or "unknown")]


def bearer_matches(header: str, token: str) -> bool:
    """``Authorization: Bearer <token>``, the scheme required, compared in constant time."""
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(value.strip().encode(), token.encode())
