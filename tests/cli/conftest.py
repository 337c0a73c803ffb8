"""The CLI tier: the console script through one preloaded interpreter (``tests.console``), and
``serve``'s application in the test's loop."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from streams.cli.audit import settings_with_db
from streams.web.pages.site import build_app
from tests.console import Console

Serve = Callable[..., Coroutine[Any, Any, TestClient[Any, Any]]]


@pytest.fixture(scope="session")
def script() -> Iterator[Console]:
    """Runs ``evidence-chain`` commands in forked children of one interpreter, started once per session."""
    server = Console()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
async def serve_app() -> AsyncIterator[Serve]:
    """``await serve_app(database, *allowed_hosts)``: ``serve``'s application over that audit database,
    started in this test's loop; a client of it (closed after the test)."""
    clients: list[TestClient[Any, Any]] = []

    async def start(database: str, *allowed: str) -> TestClient[Any, Any]:
        client: TestClient[Any, Any] = TestClient(TestServer(build_app(settings_with_db(database), allowed)))
        await client.start_server()
        clients.append(client)
        return client

    yield start
    for client in clients:
        await client.close()
