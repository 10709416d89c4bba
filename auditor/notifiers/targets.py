"""Notification targets: which webhook URLs and SMTP hosts may be reached, checked when a
channel is saved and again when it sends.

A webhook URL or an SMTP host is project input that makes the service open connections, so it
is a server-side request forgery vector: ``http://127.0.0.1:6379/`` talks to Redis,
``169.254.169.254`` is the cloud metadata service, ``10.0.0.1`` is the private network. A
target is refused when *any* address its host resolves to is not publicly routable, unless
the address lies in a network the operator allowed for the whole deployment
(``AUDITOR_ALLOW_PRIVATE_TARGETS``): no project key can switch the check off.

Checking the name is not enough: a name can resolve to a public address when saved and to
loopback when sent (DNS rebinding), and numeric spellings (``2130706433``, ``127.1``,
``[::ffff:127.0.0.1]``) hide loopback. So the check runs on resolved addresses, and the
sender connects to the very address it checked (see :mod:`.webhook` and :mod:`.smtp`).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import httpx

from auditor.errors import Invalid

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Sequence[IPAddress]]

_HOSTNAME = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_.-]{0,251}[A-Za-z0-9])?\.?$")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_COMPATIBLE = ipaddress.IPv6Network("::/96")  # deprecated IPv4-compatible ::a.b.c.d


ALLOW_ENV = "AUDITOR_ALLOW_PRIVATE_TARGETS"


class TargetRefused(Invalid):
    """A target that must not be called; the message names the URL or host and the reason."""

    code = "target_refused"


class Unresolvable(TargetRefused):
    """The target's name does not resolve now (DNS may answer later: a retry can help)."""


@dataclass(frozen=True)
class Target:
    """A parsed webhook URL: ``url`` as given, and the host and port to resolve."""

    url: httpx.URL
    host: str
    port: int


def parse_target(url: str) -> Target:
    """Parse and check the form of a webhook URL (scheme, host, no credentials)."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as error:
        raise TargetRefused(f"webhook url {url!r} is not a valid URL: {error}") from None
    if parsed.scheme not in ("http", "https"):
        raise TargetRefused(f"webhook url {url!r}: scheme must be http or https")
    if not parsed.host:
        raise TargetRefused(f"webhook url {url!r}: no host")
    if parsed.userinfo:
        # Credentials in a URL end up in logs; the channel secret signs the body instead.
        raise TargetRefused(f"webhook url {url!r}: credentials in the URL are not allowed")
    host = parsed.raw_host.decode("ascii")  # IDNA-encoded: what DNS is asked
    if ":" in host:
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise TargetRefused(f"webhook url {url!r}: bad IPv6 host {host!r}") from None
    elif not _HOSTNAME.match(host):
        raise TargetRefused(f"webhook url {url!r}: {host!r} is not a valid host name")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    return Target(parsed, host, port)


def resolve_host(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to (an IP literal resolves to itself).

    Raises ``OSError`` (``socket.gaierror``) when the name does not resolve.
    """
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]))
        if address not in addresses:
            addresses.append(address)
    return addresses


_resolver: Resolver = resolve_host


def default_resolver() -> Resolver:
    """The resolver checks use when none is given: ``resolve_host`` (the system's DNS), or the
    one installed with ``resolving_with``."""
    return _resolver


@contextmanager
def resolving_with(resolver: Resolver) -> Iterator[None]:
    """Every check without a resolver of its own resolves with ``resolver`` meanwhile: tests
    install one that knows only the machine's names, so no test sends a DNS query."""
    global _resolver
    before, _resolver = _resolver, resolver
    try:
        yield
    finally:
        _resolver = before


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4, Teredo)."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _COMPATIBLE and int(address) > 1:  # not :: or ::1
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    return None


def address_problem(address: IPAddress) -> str | None:
    """Why ``address`` must not be called (unless the operator allows it); None if it may be."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            problem = address_problem(embedded)
            if problem is not None:
                return f"{problem} ({embedded} embedded in {address})"
            if address.ipv4_mapped is not None or address in _COMPATIBLE:
                # A public IPv4 in IPv4-mapped form: nothing needs it, and stacks disagree
                # about how to route it, so it is refused rather than reasoned about.
                return f"IPv4-mapped/compatible address {address}"
    checks = (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("private", address.is_private),
        ("reserved", address.is_reserved),
        ("site-local", isinstance(address, ipaddress.IPv6Address) and address.is_site_local),
    )
    for name, hit in checks:
        if hit:
            return f"{name} address {address}"
    if not address.is_global:  # shared (100.64/10), documentation, benchmarking ranges ...
        return f"non-public address {address}"
    return None


def _allowed(address: IPAddress, allowed: Sequence[Network]) -> bool:
    return any(address in network for network in allowed)


def check_addresses(what: str, addresses: Sequence[IPAddress], allowed: Sequence[Network]) -> None:
    """Refuse the target ``what`` (e.g. "webhook url '...'") if any of its resolved
    ``addresses`` is not public and not inside one of the operator's ``allowed`` networks."""
    if not addresses:
        raise TargetRefused(f"{what}: the host resolves to no address")
    for address in addresses:
        # Nothing may post to "any host" or to a multicast group, whatever the operator allows.
        if address.is_unspecified or address.is_multicast:
            kind = "unspecified" if address.is_unspecified else "multicast"
            raise TargetRefused(f"{what} refused: {kind} address {address}")
        if _allowed(address, allowed):
            continue
        problem = address_problem(address)
        if problem is not None:
            hint = f" (only the operator can allow private networks, with {ALLOW_ENV})"
            raise TargetRefused(f"{what} refused: {problem}{hint}")


def _resolve(what: str, host: str, port: int, resolver: Resolver) -> list[IPAddress]:
    try:
        return list(resolver(host, port))
    except OSError as error:
        raise Unresolvable(f"{what}: cannot resolve {host!r}: {error}") from None


def validate_target(
    url: str, allowed: Sequence[Network] = (), resolver: Resolver | None = None
) -> Target:
    """The save-time check of a webhook: parse ``url``, resolve its host, check every address.

    Raises ``TargetRefused`` (a ``ValueError``) naming the URL and the reason. Passing the
    check at save time proves nothing at send time; the sender checks again.
    """
    target = parse_target(url)
    what = f"webhook url {url!r}"
    addresses = _resolve(what, target.host, target.port, resolver or default_resolver())
    check_addresses(what, addresses, allowed)
    return target


def parse_host(host: str) -> str:
    """Check the form of an SMTP host (a name or an IP literal); the name as DNS is asked."""
    what = f"email host {host!r}"
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if ":" in bare:
        try:
            return str(ipaddress.IPv6Address(bare))
        except ValueError:
            raise TargetRefused(f"{what}: bad IPv6 address") from None
    try:
        encoded = bare.encode("idna").decode("ascii")
    except UnicodeError:
        raise TargetRefused(f"{what} is not a valid host name") from None
    if not _HOSTNAME.match(encoded):
        raise TargetRefused(f"{what} is not a valid host name")
    return encoded


def check_host(
    host: str, port: int, allowed: Sequence[Network] = (), resolver: Resolver | None = None
) -> list[IPAddress]:
    """Resolve an SMTP host and check every address; the checked addresses, to connect to."""
    name = parse_host(host)
    what = f"email host {host!r}"
    addresses = _resolve(what, name, port, resolver or default_resolver())
    check_addresses(what, addresses, allowed)
    return addresses
