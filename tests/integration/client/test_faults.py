"""50,000 labels posted through a proxy that answers 503 and drops connections mid-request and
mid-answer, to a real ``auditor serve`` on PostgreSQL that answers 503 of its own (its write
lock taken away): exactly 50,000 labels are stored.

The labels carry no ``labeled_at`` and no ``key``, so the server cannot recognise one sent
twice: only the Idempotency-Key stands between a lost answer and a doubled batch."""

from __future__ import annotations

import re
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

from auditor.client import Client, RetryPolicy
from tests.fault_proxy import Fault, FaultProxy
from tests.integration.api.conftest import CATEGORIES
from tests.integration.client.conftest import served_project

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]
N_LABELS = 50_000
KEY = re.compile(rb"\r\nidempotency-key: *([^\r]+)", re.IGNORECASE)


class Schedule:
    """Which request meets which fault: label posts only, from a fixed sequence (about a third
    of them broken), and for each batch the faults it met."""

    PATTERN = (Fault.PASS, Fault.REFUSE, Fault.PASS, Fault.CUT_RESPONSE, Fault.PASS,
               Fault.CUT_REQUEST, Fault.PASS, Fault.PASS, Fault.CUT_RESPONSE)  # fmt: skip

    def __init__(self) -> None:
        self.posts = 0
        self.by_batch: dict[bytes, list[Fault]] = defaultdict(list)

    def __call__(self, number: int, head: bytes) -> Fault:
        found = KEY.search(head)
        if not head.startswith(b"POST") or found is None:
            return Fault.PASS
        fault = self.PATTERN[self.posts % len(self.PATTERN)]
        self.posts += 1
        self.by_batch[found.group(1)].append(fault)
        return fault


@contextmanager
def write_lock_taken(database_url: str, windows: int, hold: float) -> Iterator[None]:
    """Now and then, the idempotency records locked against writes for ``hold`` seconds: the
    server (``lock_timeout`` 200 ms) answers 503 ``database_busy`` to a batch that meets it.
    (A lock timeout in the COPY of labels is answered 503 too: tests/integration/
    test_lock_timeout.py.)"""
    url = make_url(database_url).set(drivername="postgresql")
    dsn = url.render_as_string(hide_password=False)
    stop = threading.Event()

    def run() -> None:
        with psycopg.connect(dsn) as connection:
            for _ in range(windows):
                if stop.wait(1.5):
                    return
                with connection.transaction():
                    connection.execute("LOCK TABLE idempotency_records IN SHARE MODE")
                    stop.wait(hold)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(30)


def _labels() -> Iterator[dict[str, str]]:
    for n in range(N_LABELS):
        yield {"item": f"case-{n // 5}", "rater": f"r{n % 5}", "label": CATEGORIES[n % 3]}


def test_fifty_thousand_labels_through_503s_and_dropped_connections() -> None:
    env = {"AUDITOR_SCAN_INTERVAL_SECONDS": "3600", "PGOPTIONS": "-c lock_timeout=200"}
    schedule = Schedule()
    with served_project(**env) as served:
        proxy = FaultProxy(int(served.base.rsplit(":", 1)[1]), schedule)
        policy = RetryPolicy(attempts=20, give_up_after=300)
        with proxy.running() as port, write_lock_taken(served.database_url, 2, 1.0):
            c = Client(f"http://127.0.0.1:{port}", served.keys["ingest"], retry=policy)
            with c:
                started = time.monotonic()
                result = c.post_labels(_labels(), batch_size=1000, idempotency_key="faults")
                seconds = time.monotonic() - started
        stored = served.label_count()
        log = Path(served.process.log_path).read_text()  # type: ignore[attr-defined]
    assert stored == N_LABELS
    assert (result.labels, result.inserted, result.duplicates) == (N_LABELS, N_LABELS, 0)
    assert result.batches == len(schedule.by_batch) == 50
    # every kind of fault happened, the server's own 503s too
    assert all(proxy.seen[f] >= 5 for f in (Fault.REFUSE, Fault.CUT_REQUEST, Fault.CUT_RESPONSE))
    busy = log.count("write lock not available")  # (a cut answer may hide one of them)
    assert busy >= 1 and proxy.seen[Fault.REFUSE] <= c.counters.retries["503"]
    assert c.counters.retries["503"] <= proxy.seen[Fault.REFUSE] + busy
    # a batch whose answer was lost after the server stored it was replayed, not written again
    lost = sum(Fault.CUT_RESPONSE in faults for faults in schedule.by_batch.values())
    assert lost - busy <= result.replayed <= lost and result.replayed > 0
    print(f"{N_LABELS} labels in {seconds:.1f} s; faults {dict(proxy.seen)}; "
          f"server busy {busy}; client retries {c.counters.retries}")  # fmt: skip
