"""The audit sink's probes are the worker's probe server (issue 40 item 4): one app for both, so the sink's
``/livez``, ``/readyz`` and ``/metrics`` now refuse a ``Host`` that cannot be read, an unknown path and
another method in the JSON error shape, as the worker's always did (the sink's second copy had no Host
check), while any name a cluster gives the pod, and no ``Host`` at all, are still answered.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest

from streams import codec
from streams.audit.sink import SinkProbes, SinkStats
from streams.web.listener import Limits
from streams.web.probes import serving
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


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (get("/livez", "Host: ::1"), 400),  # an IPv6 literal without brackets
        (get("/livez", "Host: a", "Host: b"), 400),
        (get("/readyz", "Host: a b"), 400),
        (get("/metrics", "Host: [::1"), 400),
        (get("/readyz", "Host: 127.0.0.1", "Authorization: Bearer se\x00cret"), 400),  # aiohttp cannot parse
        (get("/nowhere", "Host: 127.0.0.1"), 404),
        (b"POST /livez HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", 405),
    ],
)
async def test_a_hostile_host_or_a_bad_request_is_refused_as_the_worker_s_probes_refuse_it(
    port: int, request_bytes: bytes, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    got, headers, body = answer_of(await raw(port, request_bytes))
    assert got == status, body
    assert headers["content-type"].startswith("application/json")
    error = codec.loads(body)["error"]
    assert set(error) == {"reason", "message", "retriable"}
    assert "cret" not in caplog.text
