"""The generated clients' tests use the integration tier's broker and Redis (``make clients-check``)."""

from __future__ import annotations

from tests.integration.conftest import (  # noqa: F401 - the fixtures, shared
    docker_available,
    kafka_bootstrap,
    kafka_endpoint,
    redis_endpoint,
    redis_url,
)
