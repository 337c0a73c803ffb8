"""The CLI tier: the console script through one preloaded interpreter (``tests.console``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.console import Console


@pytest.fixture(scope="session")
def script() -> Iterator[Console]:
    """Runs ``evidence-chain`` commands in forked children of one interpreter, started once per session."""
    server = Console()
    try:
        yield server
    finally:
        server.close()
