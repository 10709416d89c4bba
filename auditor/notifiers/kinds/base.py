"""What every channel kind shares: refusing settings it does not take."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from auditor.errors import Invalid


def check_keys(channel: str, kind: str, raw: Mapping[str, Any], known: Sequence[str]) -> None:
    """A setting the kind does not take is refused, naming it (a typo is not ignored)."""
    for key, value in raw.items():
        if value is not None and key not in known:
            raise Invalid(f"a {kind} channel does not take {key!r} ({channel!r})", field=key)


def given(raw: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` without the settings left out (None)."""
    return {key: value for key, value in raw.items() if value is not None}
