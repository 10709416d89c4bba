"""A resolver that knows only this machine's names: IP literals, and the names in /etc/hosts
(``localhost``). Tests install it (``auditor.notifiers.targets.resolving_with``) so a check
that resolves a channel's host never sends a DNS query; any other name fails as an unknown
name does (``socket.gaierror``)."""

from __future__ import annotations

import ipaddress
import socket
from functools import cache
from pathlib import Path

from auditor.notifiers.targets import IPAddress


@cache
def _hosts() -> dict[str, list[IPAddress]]:
    names: dict[str, list[IPAddress]] = {"localhost": [ipaddress.ip_address("127.0.0.1")]}
    try:
        lines = Path("/etc/hosts").read_text().splitlines()
    except OSError:
        return names
    for line in lines:
        fields = line.split("#", 1)[0].split()
        if len(fields) < 2:
            continue
        try:
            address = ipaddress.ip_address(fields[0].split("%", 1)[0])
        except ValueError:
            continue
        for name in fields[1:]:
            known = names.setdefault(name.lower(), [])
            if address not in known:
                known.append(address)
    return names


def hosts_only(host: str, port: int) -> list[IPAddress]:
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return [ipaddress.ip_address(bare)]
    except ValueError:
        pass
    try:  # the legacy numeric spellings (2130706433, 127.1) the system reads without DNS
        return [ipaddress.IPv4Address(socket.inet_aton(bare))]
    except OSError:
        pass
    found = _hosts().get(bare.lower().rstrip("."))
    if not found:
        raise socket.gaierror(socket.EAI_NONAME, f"{host!r} is not a name of this machine")
    return list(found)
