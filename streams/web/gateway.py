"""The agent's client over HTTP/JSON, for agents in any language: ``evidence-chain gateway`` (aiohttp).

::

    POST /v1/lookups                          one raw-hits record -> its ledger entry (READY or FAILED)
    POST /v1/drafts                           one draft -> its verdict, the exact bytes of the verdicts topic
    POST /v1/search                           a query -> py-rag asked, its answer's ledger entry (as lookups)
    GET  /v1/ledger/{run_id}/{tool_call_id}   the entry as stored, or 404
    GET  /livez  /readyz  /metrics  /openapi.yaml  /schemas/{name}     (no token)

``docs/openapi.yaml`` describes every route; a test checks that the two agree. Each ``/v1`` request
goes through one :class:`~streams.client.EvidenceChainClient`, so the answers are the client's:
a lookup is answered from Redis when the ledger already holds its key, else its record is produced
and the entry awaited on the ``ledger`` topic; a retry is always safe (the ledger is write-once).

Every answer that is not 2xx has one shape, ``{"error": {"reason", "message", "retriable"}}``:
``reason`` is a dead-letter reason (``MALFORMED_JSON``, ``INVALID_ID``, ``OVERSIZED``) when the
input is at fault, else one of :class:`ErrorReason`. Errors of the project's tree are mapped to a
status in one place, :func:`problem_for`.

Access (:func:`door_policy`, checked by every server's one guard, :mod:`streams.web.guard`): with
``EC_GATEWAY_TOKEN`` set, every ``/v1`` request needs ``Authorization: Bearer <token>``
(compared in constant time). Without one the gateway listens on loopback only (it refuses to start
otherwise) and ``/v1`` is open to local processes only: under a loopback ``Host`` name (no DNS
rebinding), a POST labelled ``Content-Type: application/json`` (which a browser cannot send across
origins without a CORS preflight, never granted here), and no ``Origin`` or cross-site
``Sec-Fetch-Site`` header (what a page's ``fetch`` carries) — so no web page can plant evidence.

Connections go through the one listener of :mod:`streams.web` (head, body and keepalive timeouts, a
connection cap and one per peer, each ``EC_GATEWAY_*``); a request head aiohttp cannot parse is answered
400 in the error shape below and logged without its bytes, so a token never reaches a log.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from importlib import resources
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from models.schemas import schema_file, topic_schema
from models.vocab import DeadLetterReason, Topic
from streams import codec
from streams.client import EvidenceChainClient, LedgerReply
from streams.errors import (
    CheckTimeout,
    ConfigurationError,
    HoldInterrupted,
    InfrastructureError,
    KafkaRefused,
    KafkaUnavailable,
    LedgerIntegrityError,
    LookupTimeout,
    OversizedInput,
    Refused,
    RejectedInput,
    ReplyTimeout,
    RequestRefused,
    SchemaViolation,
    SearchRefused,
    SearchUnavailable,
    VerdictIntegrityError,
)
from streams.kafka.producer import RECORD_OVERHEAD_BYTES
from streams.observe.metrics import CONTENT_TYPE_LATEST, GatewayMetrics
from streams.retry import RetryPolicy, hold
from streams.search.request import SEARCH_BODY_BYTES, parse_search_request
from streams.settings import Settings
from streams.web.body import CLIENT_GONE, read_bounded
from streams.web.guard import Guard, Policy, TokenRefused
from streams.web.hosts import is_loopback
from streams.web.listener import ErrorShape, Limits, listening
from streams.web.probe import PROBE_SECONDS, CachedProbe

log = logging.getLogger(__name__)

MIN_TOKEN_CHARS = 16
"""A shorter EC_GATEWAY_TOKEN works but is warned about at start."""

RETRY_AFTER_SECONDS = 1
"""``Retry-After`` of a 503."""
HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
"""On every answer: nothing a gateway says is for a cache, and nothing is to be sniffed as HTML."""
JSON = "application/json"
DOOR = "gateway"
"""The ``door`` label of the gateway's refusals (``evidence_chain_door_refusals_total``)."""


class ErrorReason(StrEnum):
    """``error.reason`` of an answer that is not 2xx, when it is not a dead-letter reason."""

    BAD_REQUEST = "BAD_REQUEST"
    """400: an unreadable ``Host`` or request head (aiohttp's parse errors), a body that broke off;
    408: a body that did not arrive in time."""
    UNAUTHORIZED = "UNAUTHORIZED"
    """401: no bearer token, or not the gateway's."""
    HOST_NOT_LOOPBACK = "HOST_NOT_LOOPBACK"
    """403: a gateway without a token answers ``/v1`` only under a loopback ``Host`` name."""
    CROSS_ORIGIN = "CROSS_ORIGIN"
    """403: without a token, a request a web page sent (``Origin``, a cross-site ``Sec-Fetch-Site``)."""
    NOT_FOUND = "NOT_FOUND"
    """404: no such route, or no ledger entry for that key."""
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    """405: the route exists for other methods (``Allow`` lists them)."""
    UNSUPPORTED_MEDIA_TYPE = "UNSUPPORTED_MEDIA_TYPE"
    """415: without a token, a POST not labelled ``Content-Type: application/json``."""
    TIMEOUT = "TIMEOUT"
    """504: no entry or verdict within ``EC_GATEWAY_TIMEOUT_MS``; sending the same body again is safe."""
    UNAVAILABLE = "UNAVAILABLE"
    """503: Kafka or Redis does not answer, or the gateway is still connecting (``Retry-After``)."""
    LEDGER_INTEGRITY = "LEDGER_INTEGRITY"
    """502: the entry does not hold: it is not the asked key's (another run's or tool call's, signed or
    not), its projection does not hash to its ``projection_sha256``, or (trusted keys) no trusted ledger
    key signed it; it is never handed out."""
    VERDICT_INTEGRITY = "VERDICT_INTEGRITY"
    """502 (``/v1/drafts``): the verdict on the topic for the draft does not hold (trusted keys: unsigned,
    or not signed by a trusted guard key); it is never handed out."""
    REFUSED = "REFUSED"
    """502: Kafka or Redis refused for good (authorization, a record too large); retrying cannot help."""
    SEARCH_UNAVAILABLE = "SEARCH_UNAVAILABLE"
    """502 (``/v1/search``): py-rag cannot be reached or kept failing, retriable; or the gateway has no
    ``EC_PYRAG_URL``. Nothing was ledgered."""
    SEARCH_REFUSED = "SEARCH_REFUSED"
    """502 (``/v1/search``): py-rag answered 4xx, or more than a raw-hits record may hold; not retriable."""
    INTERNAL_ERROR = "INTERNAL_ERROR"
    """500: a bug; the gateway's log has the traceback."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One answer that is not 2xx: its status and the ``error`` object of its body."""

    status: int
    reason: str
    message: str
    retriable: bool = False
    headers: dict[str, str] = field(default_factory=dict)

    def response(self) -> web.Response:
        body = {"error": {"reason": self.reason, "message": self.message, "retriable": self.retriable}}
        return web.Response(
            body=codec.dumps(body),
            status=self.status,
            content_type=JSON,
            headers={**HEADERS, **self.headers},
        )


class Refusal(Exception):  # noqa: N818 - an answer, not a failure of the gateway
    """Raised by a handler to answer with :attr:`problem`."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def problem_for(exc: BaseException) -> Problem:
    """The answer to an error of the project's tree (anything else is a 500)."""
    if isinstance(exc, RequestRefused):
        reason = ErrorReason.BAD_REQUEST if exc.reason == CLIENT_GONE else exc.reason
        return Problem(exc.status, reason, str(exc))
    if isinstance(exc, OversizedInput):
        return Problem(413, exc.reason, exc.error)
    if isinstance(exc, RejectedInput):
        return Problem(400, exc.reason, exc.error)
    if isinstance(exc, ReplyTimeout):
        return Problem(504, ErrorReason.TIMEOUT, str(exc), retriable=True)
    if isinstance(exc, InfrastructureError):
        return Problem(
            503,
            ErrorReason.UNAVAILABLE,
            f"{exc}; try again shortly",
            retriable=True,
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    if isinstance(exc, LedgerIntegrityError):
        return Problem(502, ErrorReason.LEDGER_INTEGRITY, str(exc))
    if isinstance(exc, VerdictIntegrityError):
        return Problem(502, ErrorReason.VERDICT_INTEGRITY, str(exc))
    if isinstance(exc, Refused):
        return Problem(502, ErrorReason.REFUSED, str(exc))
    if isinstance(exc, SearchUnavailable):
        return Problem(502, ErrorReason.SEARCH_UNAVAILABLE, str(exc), retriable=True)
    if isinstance(exc, SearchRefused):
        return Problem(502, ErrorReason.SEARCH_REFUSED, str(exc))
    return Problem(500, ErrorReason.INTERNAL_ERROR, "the gateway failed unexpectedly; its log says why")


_HTTP_REASONS = {
    401: ErrorReason.UNAUTHORIZED,
    404: ErrorReason.NOT_FOUND,
    405: ErrorReason.METHOD_NOT_ALLOWED,
    413: DeadLetterReason.OVERSIZED,
    415: ErrorReason.UNSUPPORTED_MEDIA_TYPE,
}


def _http_problem(exc: web.HTTPException) -> Problem:
    """aiohttp's own refusals (no route, wrong method, a body above client_max_size) in our shape."""
    fallback = ErrorReason.INTERNAL_ERROR if exc.status >= 500 else ErrorReason.BAD_REQUEST
    reason = _HTTP_REASONS.get(exc.status, fallback)
    headers = {name: exc.headers[name] for name in ("Allow",) if name in exc.headers}
    return Problem(exc.status, reason, exc.reason if exc.text is None else exc.text, headers=headers)


# --- access -------------------------------------------------------------------------------------


def error_shape() -> ErrorShape:
    """The gateway's error object for what the listener refuses before any route (503, 400)."""

    def render(status: int, message: str) -> tuple[bytes, str]:
        reason = ErrorReason.UNAVAILABLE if status == 503 else ErrorReason.BAD_REQUEST
        body = {"error": {"reason": reason, "message": message, "retriable": status == 503}}
        return codec.dumps(body), JSON

    return ErrorShape(render)


def limits_of(settings: Settings) -> Limits:
    """The listener's limits from the ``EC_GATEWAY_*`` settings."""
    return Limits(
        header_timeout_seconds=settings.gateway_header_timeout_seconds,
        keepalive_timeout_seconds=settings.gateway_keepalive_timeout_seconds,
        max_connections=settings.gateway_max_connections,
        max_connections_per_peer=settings.gateway_max_connections_per_peer,
        body_timeout_seconds=settings.gateway_body_timeout_seconds,
    )


def bearer_token(settings: Settings, host: str | None = None) -> bytes | None:
    """``EC_GATEWAY_TOKEN`` as bytes (None when unset or empty), refused when it cannot work.

    Raises:
        ConfigurationError: the token is not printable ASCII, or ``host`` (where the gateway
            is to listen) is not loopback and there is no token. The token itself is never in a message.
    """
    secret = settings.gateway_token.get_secret_value() if settings.gateway_token is not None else ""
    if not secret:
        if host is not None and not is_loopback(host):
            raise ConfigurationError(
                f"refusing to listen on {host or 'every address'} without a token: set EC_GATEWAY_TOKEN "
                "(e.g. `openssl rand -hex 32`) or listen on 127.0.0.1 (EC_GATEWAY_HOST, --host)"
            )
        return None
    if len(secret) < MIN_TOKEN_CHARS:
        log.warning(
            "EC_GATEWAY_TOKEN is shorter than %d characters: fine for a test, guessable in production "
            "(make one with `openssl rand -hex 32`)",
            MIN_TOKEN_CHARS,
        )
    if not all("!" <= char <= "~" for char in secret):
        raise ConfigurationError("EC_GATEWAY_TOKEN may hold only printable ASCII characters, no spaces")
    return secret.encode("ascii")


def door_policy(token: bytes | None) -> Policy:
    """The gateway's :class:`~streams.web.guard.Policy`: under ``/v1/`` the bearer token, or without one
    this machine only, no web page and JSON POSTs; every other route (``/livez``, ``/openapi.yaml``, ...)
    a readable ``Host``."""
    return Policy.token_door("this gateway", "a gateway without EC_GATEWAY_TOKEN", token, scope="/v1/")


# --- the application ----------------------------------------------------------------------------


@dataclass
class GatewayState:
    """What the routes share: the settings, the client, the metrics and the token."""

    settings: Settings
    client: EvidenceChainClient
    metrics: GatewayMetrics
    token: bytes | None
    connecting: str | None = None
    """While the client is not started yet: what it waits for (``/v1`` answers 503, ``/readyz`` too)."""
    probe: CachedProbe[dict[str, str]] | None = None
    """``/readyz``'s answer, probed at most once a second (:func:`_probe`)."""


STATE = web.AppKey("evidence_chain_gateway", GatewayState)


def openapi_document() -> bytes:
    """``docs/openapi.yaml``, as packaged (``streams/openapi.yaml`` is a link to it)."""
    return resources.files("streams").joinpath("openapi.yaml").read_bytes()


def _route_of(request: web.Request) -> str:
    resource = request.match_info.route.resource
    return "unmatched" if resource is None else resource.canonical


@web.middleware
async def _answer(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Time and count every request, and give every refusal and error the one error shape."""
    state = request.app[STATE]
    started = time.perf_counter()
    problem: Problem | None = None
    try:
        response = await handler(request)
    except Refusal as exc:
        problem = exc.problem
        response = problem.response()
    except TokenRefused as exc:
        challenge = {"WWW-Authenticate": exc.challenge}
        problem = Problem(401, ErrorReason.UNAUTHORIZED, str(exc), headers=challenge)
        response = problem.response()
    except RequestRefused as exc:
        if exc.reason == CLIENT_GONE:  # nothing wrong here, and no one to answer
            log.info("%s %s: %s", request.method, request.path, exc)
        problem = problem_for(exc)
        response = problem.response()
        response.force_close()  # the rest of a late or broken body is not waited for
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        problem = _http_problem(exc)
        response = problem.response()
    except Exception as exc:
        problem = problem_for(exc)
        if problem.status == 500:
            log.exception("%s %s failed", request.method, request.path)
        elif problem.status >= 502:
            log.warning("%s %s: %d %s: %s", request.method, request.path, problem.status, problem.reason, exc)
        response = problem.response()
    else:
        response.headers.update(HEADERS)
    state.metrics.request(_route_of(request), response.status, time.perf_counter() - started)
    if problem is not None:
        state.metrics.refused(DOOR, problem.reason)
    return response


@web.middleware
async def _started(request: web.Request, handler: Handler) -> web.StreamResponse:
    """``/v1`` answers once the client is started (503 while it connects)."""
    state = request.app[STATE]
    if request.path.startswith("/v1/") and state.connecting is not None:
        raise KafkaUnavailable(f"the gateway is still {state.connecting}")
    return await handler(request)


async def _body(request: web.Request, limit: int, what: str) -> bytes:
    """The request body within ``limit`` bytes and ``EC_GATEWAY_BODY_TIMEOUT_SECONDS``."""
    seconds = request.app[STATE].settings.gateway_body_timeout_seconds
    return await read_bounded(request, limit, what, seconds)


def _json(body: bytes, status: int = 200) -> web.Response:
    return web.Response(body=body, status=status, content_type=JSON)


async def _answered(state: GatewayState, lookup: Awaitable[LedgerReply]) -> web.Response:
    """A lookup's entry as the answer, counted by where it came from (a timeout counted, then raised)."""
    try:
        reply = await lookup
    except LookupTimeout:
        state.metrics.timeouts.labels("lookup").inc()
        raise
    state.metrics.lookups.labels("ledger" if reply.from_ledger else "pipeline").inc()
    return _json(codec.dumps(reply.as_answer()))


async def _lookups(request: web.Request) -> web.Response:
    state = request.app[STATE]
    record = await _body(request, state.settings.input.max_message_bytes, "a raw-hits record")
    return await _answered(state, state.client.lookup(record))


async def _search(request: web.Request) -> web.Response:
    """``POST /v1/search``: py-rag asked through the client's search port, answered as ``/v1/lookups``."""
    state = request.app[STATE]
    body = await _body(request, SEARCH_BODY_BYTES, "a search request")
    try:
        asked = parse_search_request(body)
    except SchemaViolation as exc:
        raise Refusal(Problem(400, ErrorReason.BAD_REQUEST, exc.error)) from exc
    try:
        return await _answered(
            state,
            state.client.lookup_knowledge(
                asked.run_id, asked.tool_call_id, asked.query, asked.filters, asked.mode
            ),
        )
    except ConfigurationError as exc:
        raise Refusal(Problem(502, ErrorReason.SEARCH_UNAVAILABLE, str(exc))) from exc


async def _drafts(request: web.Request) -> web.Response:
    state = request.app[STATE]
    limit = state.settings.topic_max_message_bytes - RECORD_OVERHEAD_BYTES
    draft = await _body(request, limit, "a draft (it must fit the diagnosis-drafts topic)")
    try:
        reply = await state.client.check(draft)
    except CheckTimeout:
        state.metrics.timeouts.labels("check").inc()
        raise
    return _json(reply.raw)


async def _ledger(request: web.Request) -> web.Response:
    state = request.app[STATE]
    run_id, tool_call_id = request.match_info["run_id"], request.match_info["tool_call_id"]
    reply = await state.client.entry(run_id, tool_call_id)
    if reply is None:
        raise Refusal(
            Problem(404, ErrorReason.NOT_FOUND, f"the ledger holds no entry for {run_id}/{tool_call_id}")
        )
    return _json(codec.dumps(reply.entry))


async def _livez(request: web.Request) -> web.Response:
    return _json(codec.dumps({"live": True}))


async def _probe(state: GatewayState) -> dict[str, str]:
    """What keeps the gateway from answering ``/v1`` now, by service (empty: ready)."""
    problems: dict[str, str] = {}
    if state.connecting is not None:
        problems["kafka"] = state.connecting
    else:
        try:
            await asyncio.wait_for(state.client.ping(), PROBE_SECONDS)
        except TimeoutError:
            problems["services"] = f"Kafka or Redis did not answer within {PROBE_SECONDS:g}s"
        except (KafkaUnavailable, KafkaRefused) as exc:
            problems["kafka"] = str(exc)
        except Exception as exc:  # noqa: BLE001 - any failure means not ready; say which
            problems["redis"] = f"{type(exc).__name__}: {exc}"
    return problems


async def _readyz(request: web.Request) -> web.Response:
    state = request.app[STATE]
    if state.probe is None:
        state.probe = CachedProbe(lambda: _probe(state))
    problems = await state.probe()
    return _json(codec.dumps({"ready": not problems, "problems": problems}), 200 if not problems else 503)


async def _metrics(request: web.Request) -> web.Response:
    metrics = request.app[STATE].metrics
    return web.Response(body=metrics.render(), headers={"Content-Type": CONTENT_TYPE_LATEST})


def _static(body: bytes, content_type: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def page(request: web.Request) -> web.Response:
        return web.Response(body=body, content_type=content_type)

    return page


def _schemas() -> Callable[[web.Request], Awaitable[web.Response]]:
    """``/schemas/<topic>.schema.json``: the JSON Schemas ``/openapi.yaml`` refers to, from the models."""
    files = {schema_file(topic): codec.dumps(topic_schema(topic)) for topic in Topic}

    async def page(request: web.Request) -> web.Response:
        body = files.get(request.match_info["name"])
        if body is None:
            raise Refusal(Problem(404, ErrorReason.NOT_FOUND, f"no schema; one of: {', '.join(files)}"))
        return _json(body)

    return page


def create_gateway(
    settings: Settings, client: EvidenceChainClient, *, metrics: GatewayMetrics | None = None
) -> web.Application:
    """The gateway's routes over a started ``client`` (nothing is opened here).

    Raises:
        ConfigurationError: ``EC_GATEWAY_TOKEN`` cannot work (see :func:`bearer_token`).
    """
    state = GatewayState(settings, client, metrics or GatewayMetrics(), bearer_token(settings))
    state.metrics.start_door(DOOR, [*ErrorReason, *DeadLetterReason])
    # aiohttp refuses a larger body itself (413); the routes read theirs within their own, lower bounds.
    # the one check of every server's head (streams.web.guard), refusals answered by _answer
    guard = Guard(door_policy(state.token))
    app = web.Application(
        client_max_size=settings.topic_max_message_bytes, middlewares=[_answer, guard, _started]
    )
    app[STATE] = state
    app.add_routes(
        [
            web.post("/v1/lookups", _lookups),
            web.post("/v1/drafts", _drafts),
            web.post("/v1/search", _search),
            web.get("/v1/ledger/{run_id}/{tool_call_id}", _ledger, allow_head=False),
            web.get("/livez", _livez, allow_head=False),
            web.get("/readyz", _readyz, allow_head=False),
            web.get("/metrics", _metrics, allow_head=False),
            web.get("/openapi.yaml", _static(openapi_document(), "application/yaml"), allow_head=False),
            web.get("/schemas/{name}", _schemas(), allow_head=False),
        ]
    )
    return app


# --- serving ------------------------------------------------------------------------------------


async def serve(
    settings: Settings,
    stop: asyncio.Event,
    *,
    on_listening: Callable[[str], Any] = lambda line: print(line, flush=True),
) -> None:
    """Listen on ``EC_GATEWAY_HOST:EC_GATEWAY_PORT``, connect the client, answer until ``stop`` is set.

    The port answers ``/livez`` at once; ``/readyz`` and ``/v1`` say 503 until the client has
    connected, for up to ``EC_STARTUP_WAIT_SECONDS``. ``on_listening`` is told the address (with the
    port the system chose for port 0).

    Raises:
        ConfigurationError: no token on an address that is not loopback, or the port cannot be bound.
        HoldExpired: Kafka did not answer within ``EC_STARTUP_WAIT_SECONDS``.
    """
    host, port = settings.gateway_host, settings.gateway_port
    bearer_token(settings, host)  # refuse before connecting to anything
    client = EvidenceChainClient(settings)
    app = create_gateway(settings, client)
    state = app[STATE]
    state.connecting = f"connecting to Kafka at {settings.kafka_bootstrap}"
    try:
        async with listening(
            app,
            host,
            port,
            limits_of(settings),
            shape=error_shape(),
            what="gateway",
            shutdown_timeout=settings.gateway_timeout_ms / 1000 + 1,  # in-flight requests finish first
        ) as bound:
            shown = f"[{host}]" if ":" in host else host
            auth = "bearer token required" if state.token is not None else "no token: loopback only"
            on_listening(f"gateway: listening on http://{shown}:{bound}/ ({auth}; Ctrl-C stops)")
            policy = RetryPolicy.for_startup(settings)
            try:
                await hold(client.start, what=state.connecting, policy=policy, stop=stop)
            except HoldInterrupted:
                return
            state.connecting = None
            if state.probe is not None:
                state.probe.forget()  # ready now, not a second later
            log.info("gateway: connected to Kafka at %s", settings.kafka_bootstrap)
            await stop.wait()
    finally:
        await client.close()
