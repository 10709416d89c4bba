"""The name and scope patterns, declared once in auditor.domain (the API schemas use them)."""

from __future__ import annotations

import re

from auditor import domain


def test_a_window_is_a_scope_and_the_cumulative_view_is_not_a_window() -> None:
    for scope in ("7d", "30d", "9999d"):
        assert domain.WINDOW.match(scope) and re.match(domain.SCOPE_PATTERN, scope)
    assert re.match(domain.SCOPE_PATTERN, "cumulative") and not domain.WINDOW.match("cumulative")
    for bad in ("0d", "10000d", "7", "d", "7h"):
        assert not re.match(domain.SCOPE_PATTERN, bad) and not domain.WINDOW.match(bad)


def test_names_are_lower_case_and_bounded() -> None:
    assert domain.NAME.match("ops.webhook-1:a_b")
    assert domain.NAME.match("a" * 100) and not domain.NAME.match("a" * 101)
    for bad in ("Ops", "1ops", "", "ops hook"):
        assert not domain.NAME.match(bad)
