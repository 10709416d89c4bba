"""A TCP proxy on loopback that breaks HTTP/1.1 exchanges on purpose, between a client and a
real ``auditor serve``.

Each request is read whole (head and Content-Length body), then ``choose(number, head)``
decides its fate:

- ``PASS``: forwarded, and the answer forwarded back;
- ``REFUSE``: answered by the proxy itself, 503 with ``Retry-After: 0``, and the connection
  closed (as the server did on its own 503s before issue 26);
- ``CUT_REQUEST``: half the body forwarded, then both connections closed: the server never
  has the whole request, so nothing is written;
- ``CUT_RESPONSE``: forwarded whole, the server's whole answer read (its work is committed),
  then only the first bytes of it passed on and both connections closed: the client cannot
  tell this from ``CUT_REQUEST``, and must not write twice.

The server's own behaviour passes through: a connection it closes after an answer is closed
towards the client too, so a request the client sends next on it fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum


class Fault(Enum):
    PASS = "pass"
    REFUSE = "refuse"
    CUT_REQUEST = "cut_request"
    CUT_RESPONSE = "cut_response"


REFUSAL = b'{"error":{"code":"unavailable","message":"injected by the fault proxy","details":[]}}'


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"transfer-encoding":
            raise ValueError("the fault proxy reads Content-Length bodies only")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


def _closes(head: bytes) -> bool:
    return any(
        line.lower().replace(b" ", b"") == b"connection:close" for line in head.split(b"\r\n")
    )


async def _message(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    return head, await reader.readexactly(_content_length(head))


class FaultProxy:
    """``with FaultProxy(upstream_port, choose).running() as port``: a proxy on
    127.0.0.1:port, run on a thread of its own. ``seen`` counts the faults dealt."""

    def __init__(self, upstream_port: int, choose: Callable[[int, bytes], Fault]) -> None:
        self.upstream_port = upstream_port
        self.choose = choose
        self.seen: Counter[Fault] = Counter()
        self.requests = 0
        self._lock = threading.Lock()

    def _fate(self, head: bytes) -> Fault:
        with self._lock:
            self.requests += 1
            fault = self.choose(self.requests, head)
            self.seen[fault] += 1
            return fault

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        try:
            while True:
                try:
                    head, body = await _message(client_r)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return  # the client closed its connection
                fault = self._fate(head)
                if fault is Fault.REFUSE:
                    client_w.write(
                        b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 0\r\n"
                        b"content-type: application/json\r\nconnection: close\r\n"
                        b"content-length: " + str(len(REFUSAL)).encode() + b"\r\n\r\n" + REFUSAL
                    )
                    await client_w.drain()
                    return
                if upstream is None:
                    upstream = await asyncio.open_connection("127.0.0.1", self.upstream_port)
                up_r, up_w = upstream
                if fault is Fault.CUT_REQUEST:
                    up_w.write(head + body[: len(body) // 2])
                    await up_w.drain()
                    return
                up_w.write(head + body)
                await up_w.drain()
                try:
                    answer_head, answer_body = await _message(up_r)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return  # the server closed the connection: so does the proxy
                answer = answer_head + answer_body
                if fault is Fault.CUT_RESPONSE:
                    client_w.write(answer[: min(20, len(answer) - 1)])
                    await client_w.drain()
                    return
                client_w.write(answer)
                await client_w.drain()
                if _closes(answer_head):
                    return
        finally:
            for writer in (client_w, upstream[1] if upstream else None):
                if writer is not None:
                    writer.close()
                    with contextlib.suppress(Exception):
                        await writer.wait_closed()

    @contextmanager
    def running(self) -> Iterator[int]:
        loop = asyncio.new_event_loop()
        started = threading.Event()
        holder: dict[str, asyncio.base_events.Server] = {}

        async def start() -> None:
            holder["server"] = await asyncio.start_server(self._serve, "127.0.0.1", 0)
            started.set()

        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()
        asyncio.run_coroutine_threadsafe(start(), loop).result(10)
        started.wait(10)
        server = holder["server"]
        try:
            yield server.sockets[0].getsockname()[1]
        finally:

            async def stop() -> None:
                server.close()
                await server.wait_closed()

            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(stop(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
            loop.close()
