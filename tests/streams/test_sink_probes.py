"""The audit sink's probes are the worker's probe server (issue 40 item 4): one app for both, so the sink's
``/livez``, ``/readyz`` and ``/metrics`` now refuse a ``Host`` that cannot be read, an unknown path and
another method in the JSON error shape, as the worker's always did (the sink's second copy had no Host
check), while any name a cluster gives the pod, and no ``Host`` at all, are still answered.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import faust
import pytest

from streams import codec
from streams.audit.sink import SinkProbes, SinkStats
from streams.kafka.producer import KafkaSink
from streams.observe.metrics import WorkerMetrics
from streams.settings import Settings
from streams.web.listener import Limits
from streams.web.probes import serving
from streams.worker.health import Health
from tests.streams.test_worker_probes import answer_of, get, raw


@pytest.fixture
async def stats() -> SinkStats:
    return SinkStats(assigned=True, ticked=time.monotonic())


@pytest.fixture
async def port(stats: SinkStats) -> AsyncIterator[int]:
    limits = Limits(header_timeout_seconds=0.3, keepalive_timeout_seconds=1.0)
    async with serving(SinkProbes(stats, stall_seconds=30.0), "audit sink", 0, limits) as bound:
        yield bound


async def test_the_sink_s_probes_answer_what_its_stats_say(port: int, stats: SinkStats) -> None:
    status, headers, body = answer_of(await raw(port, get("/livez", "Host: audit-sink-0.audit-sink:9108")))
    assert (status, headers["content-type"]) == (200, "application/json; charset=utf-8")
    assert codec.loads(body)["live"] is True
    status, _, body = answer_of(await raw(port, get("/readyz", "Host: 10.0.3.7:9108")))
    assert (status, codec.loads(body)) == (200, {"ready": True, "problems": {}})
    stats.holding = True
    status, _, body = answer_of(await raw(port, get("/readyz", "Host: 127.0.0.1")))
    assert status == 503 and "database" in codec.loads(body)["problems"]
    assert stats.metrics is not None
    stats.metrics.batch(3, 2, 1, 0.01)
    status, headers, body = answer_of(await raw(port, get("/metrics", "Host: audit-sink")))
    assert (status, headers["content-type"]) == (200, "text/plain; version=0.0.4; charset=utf-8")
    assert b'evidence_chain_audit_records_total{outcome="stored"} 2.0' in body
    # an HTTP/1.0 health checker sends no Host: still answered
    status, _, body = answer_of(await raw(port, b"GET /livez HTTP/1.0\r\n\r\n"))
    assert status == 200, body


@pytest.fixture
async def worker_port() -> AsyncIterator[int]:
    app = faust.App("sink-probe-test", broker="memory://", value_serializer="raw", key_serializer="raw")
    settings = Settings(topic_prefix="t.", web_enabled=True, web_port=0)
    health = Health(app, {}, KafkaSink(settings), [], settings, WorkerMetrics())
    async with serving(health, "worker", 0) as bound:
        yield bound


@pytest.mark.parametrize(
    "request_bytes",
    [
        get("/livez", "Host: ::1"),  # an IPv6 literal without brackets
        get("/livez", "Host: a", "Host: b"),
        get("/readyz", "Host: a b"),
        get("/metrics", "Host: [::1"),
        get("/readyz", "Host: 127.0.0.1", "Authorization: Bearer se\x00cret"),  # aiohttp cannot parse
        get("/nowhere", "Host: 127.0.0.1"),
        b"POST /livez HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    ],
)
async def test_a_hostile_host_or_a_bad_request_is_refused_as_the_worker_s_probes_refuse_it(
    port: int, worker_port: int, request_bytes: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    status, headers, body = answer_of(await raw(port, request_bytes))
    worker = answer_of(await raw(worker_port, request_bytes))
    assert status in (400, 404, 405), body
    assert (status, headers["content-type"], body) == (worker[0], worker[1]["content-type"], worker[2])
    assert set(codec.loads(body)["error"]) == {"reason", "message", "retriable"}
    assert "cret" not in caplog.text
