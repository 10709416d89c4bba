"""``AsyncClient`` runs the plans of ``Client``: the same answers, replays and errors, awaited,
and several calls at once on one client."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from auditor.client import AsyncClient, LabelsRejected
from auditor.errors import NotFound
from tests.integration.client.conftest import PROJECT, client_of, judged_labels

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]


def test_the_async_client_answers_as_the_blocking_one(served) -> None:
    rows = judged_labels(range(3000, 3020), ("a1", "judge-v2"), 9)

    async def run() -> tuple:
        async with AsyncClient(served.base, served.keys["admin"]) as client:
            info = await client.key_info()
            first = await client.post_labels(rows, idempotency_key="async")
            again = await client.post_labels(rows, idempotency_key="async")
            latest = await client.wait_for_snapshot(timeout=60)
            until = latest.as_of
            histories = await asyncio.gather(
                *(client.history(m, until=until) for m in ("kappa_s", "rho", "fleiss_kappa"))
            )
            with pytest.raises(NotFound):
                await client.rater_report("nobody")
            bad = [*rows[:3], {**rows[3], "label": "cancer"}]
            with pytest.raises(LabelsRejected) as caught:
                await client.post_labels(bad)
            return info, first, again, latest, histories, caught.value

    # a loop of its own on a thread of its own: another test may leave this thread's running
    with ThreadPoolExecutor(1) as pool:
        info, first, again, latest, histories, rejected = pool.submit(asyncio.run, run()).result()
    assert info.project == PROJECT and latest.watermark >= first.inserted == 40
    assert (again.inserted, again.replayed) == (40, again.batches)
    assert [(d["row"], d["field"]) for d in rejected.details()] == [(4, "label")]
    with client_of(served, "read") as blocking:
        expected = [
            blocking.history(m, until=latest.as_of) for m in ("kappa_s", "rho", "fleiss_kappa")
        ]
        assert blocking.latest_snapshot().id >= latest.id
    assert histories == expected
