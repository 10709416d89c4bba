"""What every channel kind shares: refusing settings it does not take, checking each setting's
type (a string is not a list of recipients, ``"false"`` is not a flag), describing a config
without its secrets, and reading a setting typed as text (the CLI's ``--set key=value``).

Messages name the setting (``email_port``), never a CLI option: the API shows them too, and
the CLI adds the option the user typed.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from auditor.errors import Invalid, excerpt


def check_keys(channel: str, kind: str, raw: Mapping[str, Any], known: Sequence[str]) -> None:
    """A setting the kind does not take is refused, naming it (a typo is not ignored)."""
    for key, value in raw.items():
        if value is not None and key not in known:
            takes = ", ".join(known) or "no settings"
            raise Invalid(
                f"{article(kind)} {kind} channel does not take {key!r} ({channel!r}; it takes "
                f"{takes})",
                field=key,
            )


def article(word: str) -> str:
    """ "an" before a vowel's letter ("an email channel"), else "a" ("a webhook channel")."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def given(raw: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` without the settings left out (None)."""
    return {key: value for key, value in raw.items() if value is not None}


def text(raw: Mapping[str, Any], key: str, where: str, *, max_length: int = 2000) -> str | None:
    """A non-empty string setting, or None when absent."""
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise Invalid(f"{where}: {key} must be a string, got {excerpt(value)}", field=key)
    if not value or len(value) > max_length:
        raise Invalid(f"{where}: {key} must be 1 to {max_length} characters", field=key)
    return value


def integer(raw: Mapping[str, Any], key: str, where: str, default: int) -> int:
    """An integer setting (a whole JSON number; not a boolean, not a string)."""
    value = raw.get(key)
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(f"{where}: {key} must be an integer, got {excerpt(value)}", field=key)
    return value


def flag(raw: Mapping[str, Any], key: str, where: str, default: bool) -> bool:
    """A boolean setting: true or false, not a string that looks like one."""
    value = raw.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise Invalid(f"{where}: {key} must be true or false, got {excerpt(value)}", field=key)
    return value


def text_list(
    raw: Mapping[str, Any], key: str, where: str, *, max_items: int = 50
) -> tuple[str, ...]:
    """A list of non-empty strings (a single string is refused: it is not a list)."""
    value = raw.get(key)
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise Invalid(f"{where}: {key} must be a list of strings, got {excerpt(value)}", field=key)
    if len(value) > max_items:
        raise Invalid(f"{where}: {key} takes at most {max_items} entries", field=key)
    for entry in value:
        if not isinstance(entry, str) or not entry or len(entry) > 320:
            raise Invalid(f"{where}: {key} entries must be 1 to 320 characters", field=key)
    return tuple(value)


class DescribedKind:
    """``describe`` and ``from_text`` from the kind's config dataclass."""

    config_type: type[Any]

    def describe(self, config: Any) -> dict[str, Any]:
        """The config as people see it: every setting but the secrets (lists as lists)."""
        return {
            f.name: list(value) if isinstance(value := getattr(config, f.name), tuple) else value
            for f in dataclasses.fields(config)
            if not f.metadata.get("secret")
        }

    def settings(self) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(self.config_type))

    def from_text(self, key: str, value: str) -> Any:
        """A setting typed as text (``--set key=value``) as the type ``validate`` takes:
        integers, ``true``/``false``, comma-separated lists; unknown keys stay text (the
        kind refuses them by name)."""
        hints = typing.get_type_hints(self.config_type)
        wanted = hints.get(key)
        if wanted is int:
            try:
                return int(value)
            except ValueError:
                raise Invalid(
                    f"{key} must be an integer, got {excerpt(value)}", field=key
                ) from None
        if wanted is bool:
            lowered = value.strip().lower()
            if lowered not in ("true", "false"):
                raise Invalid(f"{key} must be true or false, got {excerpt(value)}", field=key)
            return lowered == "true"
        if typing.get_origin(wanted) is tuple:
            return [part.strip() for part in value.split(",") if part.strip()]
        return value
