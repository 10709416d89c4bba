"""The name and scope patterns are declared once, in auditor.domain; the API schemas still
spell them out for pydantic and must say the same (until they import the domain's)."""

from __future__ import annotations

from auditor import domain
from auditor.api import schemas, schemas_alerts


def test_the_api_patterns_are_the_domain_patterns() -> None:
    assert schemas.SCOPE_PATTERN == domain.SCOPE_PATTERN
    assert schemas_alerts.NAME_PATTERN == domain.NAME_PATTERN


def test_a_window_is_a_scope_and_the_cumulative_view_is_not_a_window() -> None:
    import re

    for scope in ("7d", "30d", "9999d"):
        assert domain.WINDOW.match(scope) and re.match(domain.SCOPE_PATTERN, scope)
    assert re.match(domain.SCOPE_PATTERN, "cumulative") and not domain.WINDOW.match("cumulative")
    for bad in ("0d", "10000d", "7", "d", "7h"):
        assert not re.match(domain.SCOPE_PATTERN, bad) and not domain.WINDOW.match(bad)
