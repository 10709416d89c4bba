"""A bare TCP listener on 127.0.0.1 that counts the connections it accepts: a refused target
must not even connect, so this stands in for any server (SMTP, HTTP, Redis)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass
class Listener:
    """A bare TCP listener on 127.0.0.1 that counts accepted connections (an SMTP server,
    or anything: a refused target must not even connect)."""

    port: int = 0
    accepted: int = 0


@contextmanager
def listening() -> Iterator[Listener]:
    state = Listener()
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.05)
    state.port = server.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            state.accepted += 1
            conn.close()  # the client sees a dropped connection: enough to count it

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        stop.set()
        thread.join()
        server.close()
