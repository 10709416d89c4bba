"""Issue 11 item 6: a receiver that trickles its answer a byte every 4 s (on loopback) costs
its own channel one deadline and a retry; the other channel's notice goes out at once."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from auditor.config import get_settings
from auditor.services.alerts.channels import ChannelSpec, add_channel
from auditor.services.alerts.delivery import deliver_due
from auditor.services.alerts.reads import notification_history
from tests.integration.alerts.support import T0, ingest, kappa_rule, labels, recompute
from tests.timing import scaled

SECRET = "s" * 32
HOUR = timedelta(hours=1)
SLOW_DEADLINE = 3.0  # the slow channel's timeout_seconds (the default, 10 s, works the same)


class Trickler:
    """Reads a request, then answers ``HTTP/1.1 204`` one byte every 4 s."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.stop = threading.Event()
        self.requests = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        self.server.settimeout(0.2)
        while not self.stop.is_set():
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:  # closed at the end of the test
                return
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            data = b""
            while b"\r\n\r\n" not in data:
                data += connection.recv(65536)
            self.requests += 1
            for byte in b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n":
                if self.stop.wait(4.0):
                    return
                try:
                    connection.sendall(bytes([byte]))
                except OSError:
                    return


@pytest.fixture(autouse=True)
def _operator_allows_loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The receivers listen on loopback: the operator allows it for the deployment."""
    monkeypatch.setenv("AUDITOR_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8")
    get_settings.cache_clear()
    yield
    monkeypatch.delenv("AUDITOR_ALLOW_PRIVATE_TARGETS")
    get_settings.cache_clear()


@pytest.fixture
def trickler() -> Iterator[Trickler]:
    running = Trickler()
    yield running
    running.stop.set()
    running.server.close()


def test_a_trickling_receiver_stalls_only_its_own_channel(uow, project, receiver, trickler):
    for name, url, timeout in (
        ("slow", f"http://127.0.0.1:{trickler.port}/hook", SLOW_DEADLINE),
        ("fast", receiver.url, 10.0),
    ):
        spec = ChannelSpec(name=name, kind="webhook", config={"url": url, "secret": SECRET},
                           timeout_seconds=timeout)  # fmt: skip
        add_channel(uow, "p", spec)
    kappa_rule(uow, channels=("slow", "fast"))
    ingest(uow, "p", labels(30, T0, agreement=1.0, prefix="g"))
    recompute(uow, project, T0 + HOUR)
    ingest(uow, "p", labels(90, T0 + HOUR, agreement=0.0, prefix="b"))
    recompute(uow, project, T0 + 2 * HOUR)
    assert len(notification_history(uow, "p")) == 2

    arrived: list[float] = []
    started = time.monotonic()

    def watch() -> None:  # when the fast receiver got its notice, from the start of the pass
        while not receiver.received and time.monotonic() - started < 30:
            time.sleep(0.01)
        arrived.append(time.monotonic() - started)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    report = deliver_due(uow, datetime.now(UTC))
    took = time.monotonic() - started
    watcher.join(1)

    outcome = {d.channel: d for d in report.deliveries}
    assert outcome["fast"].status == "sent"
    assert outcome["slow"].status == "retry"
    assert "deadline" in outcome["slow"].reason
    assert trickler.requests == 1
    # The fast notice did not wait for the slow channel's deadline, and the pass as a whole
    # took one deadline, not the ~3 minutes the trickled answer would.
    assert arrived and arrived[0] < SLOW_DEADLINE, arrived
    assert SLOW_DEADLINE <= took < SLOW_DEADLINE + scaled(5), took  # 5 s of slack when quiet
