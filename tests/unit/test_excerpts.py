"""Error messages echo at most a short, escaped excerpt of the input (issue 26 item 7)."""

from __future__ import annotations

import pytest

from auditor.errors import Invalid, excerpt, shown_name
from auditor.notifiers.kinds import kind_named


def test_an_excerpt_is_short_and_escaped() -> None:
    assert excerpt("abc") == "'abc'"
    long = "x" * 5000 + "\r\nSet-Cookie: a=b"
    shown = excerpt(long)
    assert len(shown) < 80 and "\r" not in shown and shown.endswith("(5017 characters)")
    assert excerpt(list(range(1000))).endswith("(1000 entries)")
    assert excerpt("a\nb") == "'a\\nb'"
    assert shown_name("PROJECT_UPDATED") == "PROJECT_UPDATED"
    assert shown_name("A\rB") == "'A\\rB'"


def test_a_channel_kind_error_does_not_echo_a_huge_value() -> None:
    with pytest.raises(Invalid) as refused:
        kind_named("w" * 100_000)
    assert len(str(refused.value)) < 200
