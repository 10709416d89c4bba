"""``auditor recompute PROJECT --rebuild`` (issue 22 item 3): the kept statistics, updated
by the recompute, checked against a rebuild from the labels."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import get_settings
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork

T0 = datetime.now(UTC) - timedelta(hours=1)


def _rows(prefix: str, n: int):
    return [
        {
            "item": f"{prefix}{i}",
            "rater": r,
            "label": "ab"[(i * 7 + len(r) + (r == "z")) % 3 % 2],
            "labeled_at": T0 + timedelta(seconds=i),
        }
        for i in range(n)
        for r in ("x", "y", "z")
    ]


@pytest.fixture
def uow(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'kept.db'}"
    migrate.upgrade(url)
    monkeypatch.setenv("AUDITOR_DATABASE_URL", url)
    monkeypatch.delenv("AUDITOR_BROKER_URL", raising=False)
    get_settings.cache_clear()
    uow = UnitOfWork(make_engine(url))
    create_project(uow, "kept", ["a", "b"], recompute_interval_seconds=1)
    yield uow
    get_settings.cache_clear()


def test_rebuild_agrees_with_the_incremental_state(uow: UnitOfWork) -> None:
    runner = CliRunner()
    ingest_labels(uow, "kept", _rows("i", 20))
    assert runner.invoke(app, ["recompute", "kept"]).exit_code == 0
    ingest_labels(uow, "kept", _rows("i", 25)[60:] + _rows("j", 5))  # new and existing items
    result = runner.invoke(app, ["recompute", "kept", "--rebuild"])
    assert result.exit_code == 0, result.output
    assert "(agree)" in result.output
    assert "kappa_s" in result.output and "fleiss_kappa" in result.output


def test_a_corrupted_state_is_found_and_replaced(uow: UnitOfWork) -> None:
    """A kept state that drifted from the labels (here: a payload from another project's
    numbers) reads DISAGREE with exit status 1, and the rebuilt state replaces it."""
    runner = CliRunner()
    ingest_labels(uow, "kept", _rows("i", 20))
    assert runner.invoke(app, ["recompute", "kept"]).exit_code == 0
    with uow:
        record = uow.kept.load(1)
        assert record is not None
        payloads = dict(record.payloads)
        first, second = sorted(g for g in payloads if g >= 0)[:2]  # -1: the pair tables
        payloads[first], payloads[second] = payloads[second], payloads[first]
        uow.kept.save(
            1,
            watermark=record.watermark,
            label_count=record.label_count,
            groups=record.groups,
            signature=record.signature,
            at=record.updated_at,
            payloads=payloads,
            replace_all=True,
        )
        uow.commit()
    broken = runner.invoke(app, ["recompute", "kept", "--rebuild"])
    assert broken.exit_code == 1 and "DISAGREE" in broken.output
    again = runner.invoke(app, ["recompute", "kept", "--rebuild"])
    assert again.exit_code == 0 and "(agree)" in again.output


def test_a_window_state_is_checked_too(uow: UnitOfWork, monkeypatch) -> None:
    """A project served from its kept statistics keeps a state for its 7-day window; a
    drifted window state reads DISAGREE on the window's line (exit 1) and is replaced."""
    monkeypatch.setenv("AUDITOR_KEPT_SNAPSHOT_LABELS", "0")
    get_settings.cache_clear()
    runner = CliRunner()
    ingest_labels(uow, "kept", _rows("i", 20))
    assert runner.invoke(app, ["recompute", "kept"]).exit_code == 0  # the full pass
    ingest_labels(uow, "kept", _rows("j", 5))
    served = runner.invoke(app, ["recompute", "kept"])
    assert "from kept statistics" in served.output, served.output
    with uow:
        record = uow.kept.load(1, "7d")
        assert record is not None
        payloads = dict(record.payloads)
        first, second = sorted(g for g in payloads if g >= 0)[:2]
        payloads[first], payloads[second] = payloads[second], payloads[first]
        uow.kept.save(
            1,
            watermark=record.watermark,
            label_count=record.label_count,
            groups=record.groups,
            signature=record.signature,
            at=record.updated_at,
            payloads=payloads,
            replace_all=True,
            scope="7d",
            start_us=record.start_us,
            end_us=record.end_us,
        )
        uow.commit()
    broken = runner.invoke(app, ["recompute", "kept", "--rebuild"])
    assert broken.exit_code == 1, broken.output
    assert "window 7d" in broken.output and "DISAGREE" in broken.output.split("window 7d")[1]
    again = runner.invoke(app, ["recompute", "kept", "--rebuild"])
    assert again.exit_code == 0 and "window 7d" in again.output, again.output
