"""E-mail addresses as a channel's settings: one plain address per entry, checked at save.

An address goes into the From and To headers and the SMTP envelope, so a CR or LF in it is a
header injection (and the server refuses the message later: the channel dead-letters
silently), and ``a@x.org, b@x.org`` in one entry is two recipients where one was shown. So an
entry is exactly one ``local@domain``: no display name, no whitespace or control character,
no list separator; the local part is RFC 5321's dot-atom (ASCII), the domain a host name
(letters of any script allowed, as internationalised domains are)."""

from __future__ import annotations

import re

from auditor.errors import Invalid

_LOCAL = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$")
_DOMAIN_LABEL = re.compile(r"^[^\W_]([\w-]{0,61}[^\W_])?$")
MAX_LENGTH = 254


def _shown(value: str) -> str:
    """A short, escaped excerpt (never the whole input)."""
    excerpt = value[:40].encode("unicode_escape").decode("ascii")
    return repr(excerpt + ("..." if len(value) > 40 else ""))


def check_address(value: str, setting: str, where: str) -> str:
    """``value`` if it is one plain address, else ``Invalid`` naming ``setting``."""
    problem = _problem(value)
    if problem is not None:
        raise Invalid(f"{where}: {setting} {_shown(value)} {problem}", field=setting)
    return value


def _problem(value: str) -> str | None:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        return "contains a control character (CR, LF, ...)"
    if len(value) > MAX_LENGTH:
        return f"is longer than {MAX_LENGTH} characters"
    if any(c in value for c in ",;") or value.count("@") > 1:
        return "holds more than one address (give one address per entry)"
    if any(c.isspace() for c in value) or "<" in value or ">" in value:
        return "must be a plain address (local@domain: no display name, no spaces)"
    local, at, domain = value.rpartition("@")
    if not at or not local or not domain:
        return "is not an address (local@domain)"
    if len(local) > 64 or not _LOCAL.match(local):
        return "has an invalid local part (before @)"
    labels = domain.split(".")
    if len(labels) < 2 or not all(_DOMAIN_LABEL.match(label) for label in labels):
        return "has an invalid domain (after @)"
    return None
