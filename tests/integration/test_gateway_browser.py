"""No web page can plant evidence through a token-less gateway (issue 32 item 3), in Chromium.

A page served from another origin (another port of localhost) sends the lookup a browser can send
without a CORS preflight: ``fetch(gateway, {mode: "no-cors", method: "POST", body: <bytes>})``, no
``Content-Type`` at all. Today's gateway read that body as JSON and wrote its entry to the write-once
ledger first; now nothing reaches the client (a fake of its interface here, so "the ledger" is what it
was handed).
"""

from __future__ import annotations

import asyncio
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from streams.settings import Settings
from streams.web.gateway import create_gateway, error_shape, limits_of
from streams.web.listener import listening
from tests.integration.serving import browser  # noqa: F401 - a fixture
from tests.streams.test_gateway import FakeChain

pytestmark = pytest.mark.timeout(120)

PAGE = """<!DOCTYPE html><html><head><title>waiting</title></head><body><script>
const body = new TextEncoder().encode('{"run_id":"run-planted","tool_call_id":"call_planted",' +
  '"response":{"query":"q","evidence_status":"EVIDENCE_FOUND","hits":[]}}');
const tries = [
  fetch("GATEWAY/v1/lookups", {mode: "no-cors", method: "POST", body: body}),
  fetch("GATEWAY/v1/lookups", {mode: "no-cors", method: "POST", body: new Blob([body])}),
  fetch("GATEWAY/v1/lookups", {mode: "no-cors", method: "POST", body: "text"}),
];
Promise.allSettled(tries).then(() => { document.title = "sent"; });
</script></body></html>"""


class Gateway:
    """A token-less gateway on a loopback port, in a thread of its own, over a fake client."""

    def __init__(self) -> None:
        self.chain = FakeChain(Settings())
        self.port = 0
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._serve(),))

    async def _serve(self) -> None:
        settings = Settings()
        self._stop = asyncio.Event()
        app = create_gateway(settings, self.chain)
        async with listening(app, "127.0.0.1", 0, limits_of(settings), shape=error_shape()) as port:
            self.port = port
            self._ready.set()
            await self._stop.wait()

    def __enter__(self) -> Gateway:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        stop = self._stop
        if stop is not None:
            self._loop.call_soon_threadsafe(stop.set)
        self._thread.join(10)
        self._loop.close()


@pytest.fixture
def gateway() -> Iterator[Gateway]:
    with Gateway() as running:
        yield running


@pytest.fixture
def page_origin(gateway: Gateway) -> Iterator[str]:
    html = PAGE.replace("GATEWAY", f"http://127.0.0.1:{gateway.port}").encode()

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(html)))
            self.end_headers()
            self.wfile.write(html)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_a_page_from_another_origin_cannot_write_to_the_ledger(
    gateway: Gateway,
    page_origin: str,
    browser: Any,  # noqa: F811 - the fixture
) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(page_origin)
    WebDriverWait(browser, 30).until(lambda driver: driver.title == "sent")
    with urllib.request.urlopen(f"http://127.0.0.1:{gateway.port}/metrics", timeout=10) as answer:  # noqa: S310
        metrics = answer.read().decode()
    refused = [
        line for line in metrics.splitlines() if line.startswith("evidence_chain_gateway_requests_total")
    ]
    assert any('route="/v1/lookups"' in line and 'status="403"' in line for line in refused), refused
    assert not any('route="/v1/lookups"' in line and 'status="200"' in line for line in refused), refused
    assert gateway.chain.bodies == []  # nothing was handed to the client: nothing can reach the ledger
