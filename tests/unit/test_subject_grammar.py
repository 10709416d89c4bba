"""One subject grammar (issue 23 item 3): the history's and the alert rules' parsers read the
same forms through ``auditor.domain.split_subject``, each with the kinds it takes."""

from __future__ import annotations

import pytest

from auditor.errors import Invalid
from auditor.services.alerts.common import parse_subject as alert_subject
from auditor.snapshots.points import parse_subject as history_subject

SHARED = ["project", "rater:r07", "model:gpt|v2", "rater:a:b"]
REFUSED_BY_BOTH = ["", "rater", "rater:", "model", "project:x", "nobody:x", "Rater:r1", ":r1"]


@pytest.mark.parametrize("text", SHARED)
def test_both_parsers_read_the_shared_forms_alike(text: str) -> None:
    selector = alert_subject(text)
    assert (selector.kind.value, selector.ref) == history_subject(text)


@pytest.mark.parametrize("text", REFUSED_BY_BOTH)
def test_both_parsers_refuse_the_same_malformed_subjects(text: str) -> None:
    with pytest.raises(ValueError, match="subject must be"):
        history_subject(text)
    with pytest.raises(Invalid, match="subject must be"):
        alert_subject(text)


def test_each_takes_its_own_kinds() -> None:
    assert history_subject("pair:a|b") == ("pair", "a|b")
    assert alert_subject("every_rater").kind.value == "every_rater"
    with pytest.raises(ValueError):
        history_subject("every_rater")
    with pytest.raises(Invalid):
        alert_subject("pair:a|b")
    with pytest.raises(Invalid):
        alert_subject("every_rater:r1")
