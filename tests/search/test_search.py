"""The search port's pieces without Kafka or Redis: the raw-hits record, the request, the py-rag adapter
against the stand-in (:mod:`tests.pyrag`), and the MCP run's stamps and tool schema."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from pydantic import SecretStr

from models.schemas import topic_schema
from models.vocab import Topic
from streams import codec
from streams.cli import build_parser
from streams.client import EvidenceChainClient
from streams.errors import InvalidId, MalformedJson, SchemaViolation, SearchRefused, SearchUnavailable
from streams.mcp.run import McpRun
from streams.mcp.server import draft_input_schema, report_id
from streams.offline.pipe import pipe_line
from streams.pipeline import StationRules
from streams.search import KnowledgeSearchPort, PyRagSearch, raw_hits_record
from streams.search.request import MAX_QUERY_CHARS, check_query, parse_search_request
from streams.settings import Settings
from tests.console import CLI, clean_env
from tests.pyrag import FakePyRag, recorded_answers

FOUND = "网关超时怎么排查"


def projection_of(record: bytes) -> dict[str, object]:
    rules = StationRules.from_settings(Settings())
    line: dict[str, object] = codec.loads(pipe_line(record, rules, source="raw-hits", emit="projection"))
    return line


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (b"[1, 2]", "SCHEMA_VIOLATION"),  # JSON, not an object: spliced as is
        (b"<html>502</html>", "SCHEMA_VIOLATION"),  # not JSON: carried as a string
        (b"\xff\xfe not utf-8", "SCHEMA_VIOLATION"),
        (b"", "SCHEMA_VIOLATION"),
    ],
)
def test_an_answer_that_is_no_object_still_makes_a_record_with_ids(answer: bytes, reason: str) -> None:
    record = raw_hits_record("r1", "c1", answer)
    doc = codec.loads(record)
    assert (doc["run_id"], doc["tool_call_id"]) == ("r1", "c1")
    assert projection_of(record)["dead_letter"] == {
        "reason": reason,
        "error": "response: must be an object",
        "run_id": "r1",
        "tool_call_id": "c1",
    }


def test_a_json_answer_is_spliced_byte_for_byte() -> None:
    answer = recorded_answers()[FOUND].replace(b'"hits":', b' "hits" :')  # any spacing survives
    record = raw_hits_record("r1", "c1", answer)
    assert record == b'{"run_id":"r1","tool_call_id":"c1","response":' + answer + b"}"
    assert projection_of(record)["tool_call_id"] == "c1"


def test_a_search_request_is_read_or_refused_with_a_reason() -> None:
    asked = parse_search_request(b'{"run_id":"r","tool_call_id":"c","query":"q","filters":{"a":1}}')
    assert (asked.query, asked.filters, asked.mode) == ("q", {"a": 1}, "hybrid")
    assert (
        parse_search_request(b'{"run_id":"r","tool_call_id":"c","query":"q","mode":"vector"}').mode
        == "vector"
    )
    for body, error in [
        (b"nope", MalformedJson),
        (b"[]", MalformedJson),
        (b'{"run_id":"r r","tool_call_id":"c","query":"q"}', InvalidId),
        (b'{"run_id":"r","tool_call_id":"c","query":" "}', SchemaViolation),
        (b'{"run_id":"r","tool_call_id":"c","query":"q","filters":[1]}', SchemaViolation),
        (b'{"run_id":"r","tool_call_id":"c","query":"q","mode":3}', SchemaViolation),
    ]:
        with pytest.raises(error):
            parse_search_request(body)


@pytest.fixture
async def pyrag() -> AsyncIterator[tuple[FakePyRag, Settings]]:
    fake = FakePyRag(token="s3cret-token")
    server = TestServer(fake.app(), host="127.0.0.1")
    await server.start_server()
    settings = Settings(
        pyrag_url=str(server.make_url("/search")),
        pyrag_token=SecretStr("s3cret-token"),
        pyrag_timeout_ms=200,
        retry_initial_backoff_ms=1,
    )
    try:
        yield fake, settings
    finally:
        await server.close()


async def test_py_rag_is_asked_with_the_token_and_retried_on_500_and_timeouts(
    pyrag: tuple[FakePyRag, Settings],
) -> None:
    fake, settings = pyrag
    search = PyRagSearch(settings)
    assert isinstance(search, KnowledgeSearchPort)
    assert "s3cret" not in repr(search)
    try:
        fake.fail, fake.slow, fake.slow_seconds = 1, 1, 2.0
        assert await search.search(FOUND, {"team": "sre"}) == recorded_answers()[FOUND]
        assert fake.requests == [{"query": FOUND, "mode": "hybrid", "filters": {"team": "sre"}}] * 3
        fake.fail = 3
        with pytest.raises(SearchUnavailable, match="3 tries"):
            await search.search(FOUND)
    finally:
        await search.close()


async def test_a_4xx_or_an_oversized_answer_fails_at_once(pyrag: tuple[FakePyRag, Settings]) -> None:
    fake, settings = pyrag
    refused = PyRagSearch(settings.model_copy(update={"pyrag_token": None}))
    small = PyRagSearch(
        settings.model_copy(update={"input": settings.input.model_copy(update={"max_message_bytes": 1000})})
    )
    try:
        with pytest.raises(SearchRefused, match="401"):
            await refused.search(FOUND)
        fake.oversized, fake.oversized_bytes = 1, 5000
        with pytest.raises(SearchRefused, match="larger than a raw-hits record"):
            await small.search(FOUND)
        assert len(fake.requests) == 1  # the 401 is not recorded; the oversized answer was asked once
    finally:
        await refused.close()
        await small.close()


def test_the_mcp_run_names_tool_calls_and_stamps_drafts_over_the_models_values() -> None:
    run = McpRun.start("run-1")
    first, second = run.next_tool_call_id(), run.next_tool_call_id()
    assert first != second and first.startswith("call-")
    stamped = run.stamp({"run_id": "other", "attempt": 9, "draft_id": "x", "analysis": []})
    assert stamped == {"run_id": "run-1", "draft_id": run.draft_id, "attempt": 1, "analysis": []}
    run.judged("REJECT")
    assert run.stamp({})["attempt"] == 2
    draft_id = run.draft_id
    run.judged("PASS")
    assert run.draft_id != draft_id and run.stamp({})["attempt"] == 1
    assert McpRun.start(None).run_id.startswith("mcp-")


def test_check_diagnosis_advertises_the_drafts_schema_less_the_stamped_fields() -> None:
    schema = draft_input_schema()
    draft = schema["properties"]["draft"]
    full = topic_schema(Topic.DIAGNOSIS_DRAFTS)
    assert set(draft["properties"]) == set(full["properties"]) - {"run_id", "draft_id", "attempt"}
    assert "draft_id" not in draft.get("required", [])
    assert schema["$defs"] == full["$defs"]


def test_the_report_id_is_the_publish_event_beside_the_verdicts_guard_event() -> None:
    assert (
        report_id({"event_id": "guard:t-diagnosis-drafts:2:14:1700"})
        == "publish:t-diagnosis-drafts:2:14:1700"
    )
    assert report_id({"event_id": None}) is None


def test_mcp_over_http_refuses_an_exposed_address_without_a_token() -> None:
    done = subprocess.run(  # noqa: S603 - our own console script
        [CLI, "mcp", "--http", "--host", "0.0.0.0"],  # noqa: S104 - the address being refused
        env=clean_env(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert b"refusing to listen on 0.0.0.0 without a token" in done.stderr


def test_mcp_refuses_a_setting_that_cannot_work_without_printing_a_secret() -> None:
    secret = "S3CR3T-pyrag"
    done = subprocess.run(  # noqa: S603 - our own console script
        [CLI, "mcp"],
        env=clean_env(EC_REDIS_URL=f"http://:{secret}@127.0.0.1:1/0", EC_PYRAG_TOKEN=secret),
        capture_output=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    assert b"EC_REDIS_URL" in done.stderr
    assert secret.encode() not in done.stdout + done.stderr


def test_an_escaped_answer_over_the_raw_hits_cap_is_refused_not_built() -> None:
    """1,000 control bytes escape to ~6,000 (``\\u0000`` each): the record would be refused on its way
    in, so no record is made (the adapter's own cap checks only the answer's bytes)."""
    answer = b"\x00" * 1000
    assert len(raw_hits_record("r1", "c1", answer)) > 6000  # what escaping does to it
    with pytest.raises(SearchRefused, match=r"over the cap of 2000 \(EC_INPUT__MAX_MESSAGE_BYTES"):
        raw_hits_record("r1", "c1", answer, max_bytes=2000)
    fits = raw_hits_record("r1", "c1", b"<html>502</html>", max_bytes=2000)
    assert projection_of(fits)["dead_letter"]["reason"] == "SCHEMA_VIOLATION"  # type: ignore[index]


class _Answers:
    """A search port that answers every query with the same bytes."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer

    async def search(self, query: str, filters: object = None, mode: str = "hybrid") -> bytes:
        return self.answer

    async def close(self) -> None:
        return None


async def test_the_client_refuses_a_search_whose_record_is_over_the_cap_and_produces_nothing() -> None:
    settings = Settings()
    settings = settings.model_copy(
        update={"input": settings.input.model_copy(update={"max_message_bytes": 2000})}
    )
    client = EvidenceChainClient(settings, search=_Answers(b"\x01" * 1000))  # never started: no Kafka
    with pytest.raises(SearchRefused, match="over the cap of 2000"):
        await client.lookup_knowledge("r1", "c1", "q")


async def test_a_redirect_from_py_rag_is_refused_not_followed(pyrag: tuple[FakePyRag, Settings]) -> None:
    fake, settings = pyrag

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPTemporaryRedirect(settings.pyrag_url or "")

    app = web.Application()
    app.add_routes([web.post("/moved", moved)])
    redirector = TestServer(app, host="127.0.0.1")
    await redirector.start_server()
    search = PyRagSearch(settings.model_copy(update={"pyrag_url": str(redirector.make_url("/moved"))}))
    try:
        with pytest.raises(SearchRefused, match=r"redirect \(307\), which is not followed"):
            await search.search(FOUND)
        assert fake.requests == []  # the query (and the token) never reached the other address
    finally:
        await search.close()
        await redirector.close()


@pytest.mark.parametrize("query", ["", "   \n", "x" * (MAX_QUERY_CHARS + 1)])
def test_the_one_query_rule_refuses_blank_and_overlong_queries(query: str) -> None:
    with pytest.raises(SchemaViolation, match="query: must be a non-empty string of at most 8,192"):
        check_query(query)
    body = codec.dumps({"run_id": "r", "tool_call_id": "c", "query": query})
    with pytest.raises(SchemaViolation, match="query: must be a non-empty string of at most 8,192"):
        parse_search_request(body)
    assert check_query("x" * MAX_QUERY_CHARS) == "x" * MAX_QUERY_CHARS


def test_gateway_help_lists_every_v1_route(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["gateway", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    for route in ("POST /v1/lookups", "POST /v1/search", "POST /v1/drafts", "GET /v1/ledger/"):
        assert route in shown
