"""HTTPS to a pinned address: the certificate is still checked against the URL's name."""

from __future__ import annotations

import ipaddress
import shutil
import ssl
import subprocess
import threading
from http.server import ThreadingHTTPServer

import pytest

from auditor.notifiers import Outcome, WebhookChannel
from tests.integration.notifiers.conftest import Receiver, _handler, make_notification

SECRET = "s3cret-for-tests-only-0123456789"
LOOPBACK = ipaddress.ip_address("127.0.0.1")
NAME = "hooks.example.com"


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", f"/CN={NAME}",
         "-addext", f"subjectAltName=DNS:{NAME}"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.fixture
def tls_receiver(certificate):
    cert, key = certificate
    state = Receiver()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    state.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    yield state, cert
    server.shutdown()
    server.server_close()


def channel(host: str, port: int, cert) -> WebhookChannel:
    return WebhookChannel(
        name="hook", url=f"https://{host}:{port}/hook", secret=SECRET,
        allowed=(ipaddress.ip_network("127.0.0.0/8"),), resolver=lambda h, p: [LOOPBACK],
        ca_file=str(cert),
    )  # fmt: skip


def test_pinned_https_verifies_the_certificate_against_the_name(tls_receiver, connections):
    receiver, cert = tls_receiver
    result = channel(NAME, receiver.port, cert).send(make_notification())
    assert result.ok, result.reason
    assert connections == [("127.0.0.1", receiver.port)]
    assert receiver.received[0].headers["Host"] == f"{NAME}:{receiver.port}"


def test_a_certificate_for_another_name_is_refused(tls_receiver):
    receiver, cert = tls_receiver
    result = channel("other.example.com", receiver.port, cert).send(make_notification())
    assert result.outcome is Outcome.RETRYABLE  # could be a certificate mid-renewal
    assert "Hostname mismatch" in result.reason and "other.example.com" in result.reason
    assert receiver.received == []
