"""Every server is guarded by one check of the request's head (issue 40 item 4): the gateway, ``serve``,
the MCP server over HTTP and the probes of the worker and the audit sink each hold a
:class:`~streams.web.guard.Guard` with a policy of their own, and every request they refuse or let
through went through :func:`streams.web.guard.check`. The policies' answers are the door tests'
(test_gateway*, test_serve_doors, tests/mcp, test_worker_probes, test_sink_probes); here: that there
is one implementation, and what each server's policy asks.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import faust
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from multidict import CIMultiDict
from pydantic import SecretStr

from streams.audit.factory import open_store
from streams.audit.sink import SinkProbes, SinkStats
from streams.client import EvidenceChainClient
from streams.errors import RequestRefused
from streams.kafka.producer import KafkaSink
from streams.mcp.run import McpRun
from streams.mcp.server import build_server
from streams.observe.metrics import WorkerMetrics
from streams.settings import Settings
from streams.web import guard
from streams.web.asgi import Doors
from streams.web.gateway import create_gateway
from streams.web.guard import Guard, Policy, TokenRefused, check
from streams.web.mcp import http_app
from streams.web.pages.site import build_app
from streams.web.probes import probe_app
from streams.worker.health import Health

TOKEN = "one-guard-test-token-0123456789abcdef"


def settings(**overrides: Any) -> Settings:
    return Settings(topic_prefix="t.", **overrides)


def gateway(token: str | None = None) -> web.Application:
    given = settings(gateway_token=SecretStr(token)) if token else settings()
    return create_gateway(given, EvidenceChainClient(given))


def pages(tmp_path: Path) -> web.Application:
    target = str(tmp_path / "audit.db")
    open_store(target).close()
    return build_app(settings(audit_db=target, audit_dsn=None), ("audit.internal",))


def worker_probes() -> web.Application:
    app = faust.App("one-guard-test", broker="memory://", value_serializer="raw", key_serializer="raw")
    given = settings()
    return probe_app(Health(app, {}, KafkaSink(given), [], given, WorkerMetrics()), "worker")


def sink_probes() -> web.Application:
    return probe_app(SinkProbes(SinkStats(assigned=True, ticked=time.monotonic()), 30.0), "audit sink")


def mcp(token: str | None = None) -> Doors:
    given = settings(gateway_token=SecretStr(token)) if token else settings()
    server = build_server(EvidenceChainClient(given), McpRun.start(None))
    return http_app(server, "127.0.0.1", token.encode() if token else None, given)


def guards_of(app: web.Application) -> list[Guard]:
    return [m for m in app.middlewares if isinstance(m, Guard)]


def test_every_server_holds_one_guard_with_a_policy_of_its_own(tmp_path: Path) -> None:
    held: dict[str, Policy] = {}
    for name, app in {
        "gateway": gateway(),
        "gateway with a token": gateway(TOKEN),
        "serve": pages(tmp_path),
        "worker probes": worker_probes(),
        "audit sink probes": sink_probes(),
    }.items():
        (one,) = guards_of(app)  # exactly one guard, and no other Host check of its own
        held[name] = one.policy
    for name, doors in {"mcp": mcp(), "mcp with a token": mcp(TOKEN)}.items():
        assert isinstance(doors, Doors) and isinstance(doors.guard, Guard)
        held[name] = doors.guard.policy

    # the gateway's /v1 and the MCP server: the token, or without one this machine only and no page
    for name, scope in (("gateway", "/v1/"), ("mcp", "/")):
        without, withtoken = held[name], held[f"{name} with a token"]
        assert (without.local_only, without.refuse_pages, without.json_posts) == (True, True, True)
        assert (without.token, without.scope, without.allowed_hosts) == (None, scope, ())
        assert withtoken.token == TOKEN.encode() and withtoken.scope == scope
        assert not (withtoken.local_only or withtoken.refuse_pages or withtoken.json_posts)
    # serve: this machine or the names it was given, pages welcome (they are for browsers)
    names = "the names --host and --allow-host give"
    assert held["serve"] == Policy.local("serve", ("audit.internal",), names)
    assert not held["serve"].refuse_pages and held["serve"].token is None
    # the probes: any name a cluster gives, or none
    for name in ("worker probes", "audit sink probes"):
        assert held[name] == Policy.probes(name)
        assert not held[name].host_required and not held[name].local_only


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every call of the one check, as (the policy's server, the path), made through to the real one."""
    calls: list[tuple[str, str]] = []

    def spy(policy: Policy, method: str, path: str, headers: Mapping[str, str]) -> None:
        calls.append((policy.server, path))
        check(policy, method, path, headers)

    monkeypatch.setattr(guard, "check", spy)
    return calls


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[dict[str, TestClient[Any, Any]]]:
    clients = {
        "gateway": TestClient(TestServer(gateway())),
        "serve": TestClient(TestServer(pages(tmp_path))),
        "worker probes": TestClient(TestServer(worker_probes())),
        "audit sink probes": TestClient(TestServer(sink_probes())),
    }
    for client in clients.values():
        await client.start_server()
    yield clients
    for client in clients.values():
        await client.close()


async def test_every_server_s_requests_go_through_the_one_check(
    served: dict[str, TestClient[Any, Any]], checked: list[tuple[str, str]]
) -> None:
    hostile = {"Host": "rebound.attacker.test"}
    answer = await served["gateway"].get("/v1/ledger/r/c", headers=hostile)
    assert answer.status == 403 and (await answer.json())["error"]["reason"] == "HOST_NOT_LOOPBACK"
    answer = await served["serve"].get("/runs", headers=hostile)
    assert answer.status == 403
    for probes in ("worker probes", "audit sink probes"):
        assert (await served[probes].get("/livez", headers=hostile)).status == 200  # a cluster's name
        assert (await served[probes].get("/livez", headers={"Host": "a b"})).status == 400
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    head = [(b"host", b"rebound.attacker.test")]
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": head}
    await mcp()(scope, receive, send)
    assert sent[0]["status"] == 403 and b"HOST_NOT_LOOPBACK" in sent[1]["body"]

    assert ("a gateway without EC_GATEWAY_TOKEN", "/v1/ledger/r/c") in checked
    assert ("serve", "/runs") in checked
    assert checked.count(("worker probes", "/livez")) == 2
    assert checked.count(("audit sink probes", "/livez")) == 2
    assert ("the MCP server without EC_GATEWAY_TOKEN", "/mcp") in checked


def test_the_check_answers_in_one_order_for_every_policy() -> None:
    door = Policy.token_door("this gateway", "a gateway without EC_GATEWAY_TOKEN", None, scope="/v1/")

    def refused(policy: Policy, method: str, path: str, **headers: str) -> tuple[int, str] | None:
        try:
            check(policy, method, path, CIMultiDict(headers))
        except RequestRefused as exc:
            return exc.status, exc.reason
        return None

    # outside its scope a door asks only for a readable Host
    assert refused(door, "GET", "/livez", Host="evil.example", Origin="http://evil.example") is None
    assert refused(door, "GET", "/livez", Host="a b") == (400, "BAD_REQUEST")
    # within it: the Host first, then a page, then the content type
    page = {"Host": "evil.example", "Origin": "http://evil.example", "Content-Type": "text/plain"}
    assert refused(door, "POST", "/v1/drafts", **page) == (403, "HOST_NOT_LOOPBACK")
    assert refused(door, "POST", "/v1/drafts", Host="127.0.0.1", Origin="null") == (403, "CROSS_ORIGIN")
    assert refused(door, "POST", "/v1/drafts", Host="[::1]:8080") == (415, "UNSUPPORTED_MEDIA_TYPE")
    labelled = {"Content-Type": "application/json; charset=utf-8"}
    assert refused(door, "POST", "/v1/drafts", **{"Host": "localhost", **labelled}) is None
    # with a token: the token, whatever the Host or a page says
    token = Policy.token_door("this gateway", "a gateway without EC_GATEWAY_TOKEN", b"t" * 20)
    assert refused(token, "POST", "/v1/drafts", Host="gateway.internal", Origin="x") == (401, "UNAUTHORIZED")
    with pytest.raises(TokenRefused) as caught:
        check(token, "GET", "/v1/x", CIMultiDict({"Host": "h", "Authorization": "Bearer wrong"}))
    assert 'error="invalid_token"' in caught.value.challenge and "t" * 20 not in str(caught.value)
    good = CIMultiDict({"Host": "gateway.internal", "Authorization": "Bearer " + "t" * 20})
    check(token, "POST", "/v1/drafts", good)
    # probes: no Host at all is answered, two are not
    probes = Policy.probes("worker probes")
    assert refused(probes, "GET", "/livez") is None
    assert refused(probes, "GET", "/livez", Host="worker-0.workers.svc:6066") is None
    with pytest.raises(RequestRefused) as two:
        check(probes, "GET", "/livez", CIMultiDict([("Host", "a"), ("Host", "b")]))
    assert two.value.status == 400


def test_the_probe_server_loads_no_other_server() -> None:
    """The worker imports the probe server; that must not load the gateway, the pages or uvicorn."""
    code = (
        "import sys, streams.web.probes\n"
        "loaded = [m for m in ('streams.web.gateway', 'streams.web.pages.site', 'streams.web.mcp', 'uvicorn',"
        " 'jinja2') if m in sys.modules]\n"
        "print(loaded)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
