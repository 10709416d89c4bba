from __future__ import annotations

import logging

from auditor.notifiers import LogChannel
from tests.integration.notifiers.conftest import make_notification


def test_log_channel_writes_one_structured_record(caplog):
    caplog.set_level(logging.INFO, logger="auditor.alerts")
    firing = make_notification(severity="critical")
    resolved = make_notification(kind="resolved", event_id="1a" * 16)
    assert LogChannel().send(firing).ok
    assert LogChannel().send(resolved).ok
    first, second = caplog.records
    assert first.levelno == logging.CRITICAL and second.levelno == logging.INFO
    assert firing.event_id in first.getMessage()
    assert first.notification == firing.to_dict()
    assert second.notification["kind"] == "resolved"
