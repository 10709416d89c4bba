"""Idempotency-Key on label posts: replay without writing, mismatch is 422, scoped to the
project, and concurrent requests with one key write once (real threads, real database)."""

from __future__ import annotations

import threading

from auditor.ingestion.batch import RawBatch
from auditor.services.ingest.idempotent_posts import post_labels
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork


def _labels(n: int, rater: str = "a1", label: str = "normal") -> list[dict]:
    return [{"item": f"idem-{i}", "rater": rater, "label": label} for i in range(n)]


def _count(world, slug: str = "alpha") -> int:
    body = world.client.get(f"/api/v1/projects/{slug}", headers=world.auth(slug)).json()
    return body["counts"]["labels"]


def test_same_key_same_body_replays_without_writing(world) -> None:
    url = "/api/v1/projects/alpha/labels"
    headers = {**world.auth(role="ingest"), "Idempotency-Key": "batch-0001"}
    before = _count(world)
    first = world.client.post(url, json={"labels": _labels(20)}, headers=headers)
    assert first.status_code == 200 and first.json()["inserted"] == 20
    assert "idempotent-replayed" not in first.headers
    # Same content, different key order and spacing: the same request.
    reordered = {"labels": [dict(reversed(list(row.items()))) for row in _labels(20)]}
    second = world.client.post(url, json=reordered, headers=headers)
    assert second.status_code == 200
    assert second.json() == first.json()
    assert second.headers["idempotent-replayed"] == "true"
    assert _count(world) == before + 20


def test_same_key_other_body_is_422_and_writes_nothing(world) -> None:
    url = "/api/v1/projects/alpha/labels"
    headers = {**world.auth(), "Idempotency-Key": "batch-0002"}
    assert world.client.post(url, json={"labels": _labels(3)}, headers=headers).is_success
    before = _count(world)
    other = world.client.post(url, json={"labels": _labels(3, label="benign")}, headers=headers)
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_mismatch"
    assert _count(world) == before


def test_a_rejected_batch_is_not_remembered(world) -> None:
    url = "/api/v1/projects/alpha/labels"
    headers = {**world.auth(), "Idempotency-Key": "batch-0003"}
    bad = world.client.post(url, json={"labels": _labels(2, label="cancer")}, headers=headers)
    assert bad.status_code == 422
    fixed = world.client.post(url, json={"labels": _labels(2)}, headers=headers)
    assert fixed.status_code == 200 and "idempotent-replayed" not in fixed.headers


def test_keys_are_scoped_to_the_project(world) -> None:
    for slug in ("alpha", "beta"):
        headers = {**world.auth(slug), "Idempotency-Key": "shared-key"}
        response = world.client.post(
            f"/api/v1/projects/{slug}/labels", json={"labels": _labels(4)}, headers=headers
        )
        assert response.status_code == 200 and response.json()["inserted"] == 4
        assert "idempotent-replayed" not in response.headers


def test_concurrent_requests_with_one_key_write_once(world) -> None:
    engine = (
        make_engine(world.engine_url, pool_size=10)
        if "postgres" in world.engine_url
        else (make_engine(world.engine_url))
    )
    rows = [{"item": f"race-{i}", "rater": f"r{i % 7}", "label": "benign"} for i in range(3000)]
    before = _count(world)
    threads = 8
    barrier = threading.Barrier(threads)
    results: list = []
    errors: list = []

    def post() -> None:
        try:
            barrier.wait()
            result = post_labels(
                UnitOfWork(engine),
                "alpha",
                RawBatch.from_records(rows),
                idempotency_key="race-key",
                request_hash="same-hash",
            )
            results.append(result)
        except Exception as error:  # collected and asserted below
            errors.append(error)

    workers = [threading.Thread(target=post) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    engine.dispose()
    assert errors == []
    assert len(results) == threads
    assert sum(not r.replayed for r in results) == 1
    assert all(r.body == results[0].body for r in results)
    assert results[0].body["inserted"] == 3000
    assert _count(world) == before + 3000
