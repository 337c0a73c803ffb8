"""``evidence-chain mcp``: the knowledge tool and the draft check as MCP tools (the official Python SDK).

Three tools over one :class:`~streams.client.EvidenceChainClient`; each tool call belongs to the run
of the MCP session it came in (:class:`McpRuns`: over stdio the process's run, over HTTP one per session):

- ``lookup_knowledge(query, filters?)``: the server names the tool call, asks py-rag through the
  client (:meth:`~streams.client.EvidenceChainClient.lookup_knowledge`) and returns the ledger's
  projection text exactly as stored; a FAILED entry or an unreachable py-rag is a tool error.
- ``check_diagnosis(draft)``: stamps ``run_id``, ``draft_id`` and ``attempt`` and returns the verdict
  (the exact bytes of the ``verdicts`` topic), then the repair prompt (REJECT), the fixed report
  (FALLBACK) or the published report's id (PASS).
- ``get_evidence(tool_call_id)``: an entry of this run as stored.

Nothing here judges evidence: the stations do, and the tools only carry their answers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from models.schemas import topic_schema
from models.verdict import Verdict
from models.vocab import LedgerStatus, Topic, VerdictKind
from streams import codec
from streams.client import EvidenceChainClient, repair_prompt
from streams.client.repair import Language
from streams.errors import (
    ConfigurationError,
    EvidenceChainError,
    InvalidId,
    KafkaRefused,
    SchemaViolation,
    SearchRefused,
    SearchUnavailable,
)
from streams.kafka.producer import RECORD_OVERHEAD_BYTES
from streams.mcp.run import STAMPED, McpRun, McpRuns
from streams.retry import RetryPolicy, hold
from streams.search.port import Filters
from streams.search.request import SEARCH_BODY_BYTES, check_nesting, check_query
from streams.settings import Settings
from streams.stations.publish import PUBLISH

log = logging.getLogger(__name__)

AGAIN = {
    "en": "Call check_diagnosis again with the whole corrected draft; the server sets run_id, draft_id "
    "and attempt.",
    "zh": "修正后用完整草稿再次调用 check_diagnosis；run_id、draft_id 和 attempt 由服务器填写。",
}
"""After a REJECT's repair prompt: how to send the next attempt through this server."""

NOTHING_PRODUCED = (SearchUnavailable, SearchRefused, ConfigurationError, InvalidId)
"""The lookup failures that produce no raw-hits record (py-rag gave nothing to govern)."""

RULES = """Rules for every diagnosis (the evidence check enforces them):
- Base every statement only on the excerpts lookup_knowledge returned in this run; the excerpt is the
  only basis, not what you remember or assume.
- Cite the tool_call_id of each lookup you rely on in the analysis item's tool_call_ids, and the
  document_id of each excerpt you use in its document_ids, copied exactly as shown.
- A lookup whose evidence_status is NO_EVIDENCE found nothing: say so (an analysis item of kind
  NEGATIVE_OBSERVATION citing it), never present it as a finding; with too little evidence the
  conclusion may be null.
- limitations is required: at least one non-empty limitation."""

LOOKUP_DESCRIPTION = f"""Search the knowledge base (py-rag) and get the governed evidence for your question.

Returns the projection exactly as the evidence ledger stores it: a JSON object with tool_call_id (the id
this lookup is ledgered under: cite it), evidence_status (EVIDENCE_FOUND or NO_EVIDENCE) and evidence
items, each with a document_id and an excerpt. A lookup that failed says so as a tool error: it gives
you nothing to cite.

{RULES}"""

CHECK_DESCRIPTION = f"""Check a diagnosis draft against the evidence ledger before anything is published.

Give the draft without run_id, draft_id and attempt: the server stamps them. The result is the verdict
(JSON, as the evidence check wrote it) and then: for REJECT, the repair instructions (fix each problem
and call check_diagnosis again with the whole corrected draft); for FALLBACK, the fixed report that is
published instead (no attempt left); for PASS, the id of the published report.

{RULES}"""

EVIDENCE_DESCRIPTION = """The ledger entry of one of this run's lookups, as stored (status, projection and
its SHA-256, or the failure reason): to re-read exactly what a tool_call_id showed."""


def instructions(run_id: str | None) -> str:
    """The server's instructions to the model: the run (``None``: one per MCP session) and the rules."""
    run = f"run {run_id}" if run_id is not None else "a run of its own for each MCP session"
    return (
        f"evidence-chain knowledge tools for {run}. Call lookup_knowledge for evidence, write a "
        "DiagnosisDraft citing it, and call check_diagnosis until its verdict is PASS or FALLBACK.\n\n"
        f"{RULES}"
    )


def session_of(ctx: Context | None) -> object | None:
    """The MCP session a tool call came in: the SDK's connection of a stateful streamable-HTTP session
    (one per ``Mcp-Session-Id``), or ``None`` when there is no session (a direct call, the stateless
    2026 protocol). The SDK (2.3) builds a session object per request; the connection under it is
    what lasts as long as the session, and it has no public name."""
    if ctx is None:
        return None
    connection = getattr(ctx.request_context.session, "_connection", None)
    return connection if getattr(connection, "session_id", None) else None


def draft_input_schema() -> dict[str, Any]:
    """``check_diagnosis``'s input: ``{"draft": <the diagnosis-drafts schema less the stamped fields>}``."""
    schema = topic_schema(Topic.DIAGNOSIS_DRAFTS)
    defs = schema.pop("$defs", {})
    for name in ("$schema", "$id"):
        schema.pop(name, None)
    schema["properties"] = {k: v for k, v in schema.get("properties", {}).items() if k not in STAMPED}
    schema["required"] = [name for name in schema.get("required", []) if name not in STAMPED]
    schema["description"] = "A DiagnosisDraft (SPEC 4) without run_id, draft_id and attempt."
    root: dict[str, Any] = {"type": "object", "properties": {"draft": schema}, "required": ["draft"]}
    if defs:
        root["$defs"] = defs
    return root


def report_id(verdict: Verdict) -> str | None:
    """The id of the ``reports`` event of a PASS or FALLBACK verdict (SPEC 4.3), from the verdict's own.

    The guard publishes it from the same draft record as the verdict: ``publish:<coordinates>`` beside
    the verdict's ``guard:<coordinates>`` (:data:`streams.stations.publish.PUBLISH`).
    """
    event_id = verdict.get("event_id")
    if not isinstance(event_id, str) or ":" not in event_id:
        return None
    return f"{PUBLISH}:{event_id.split(':', 1)[1]}"


NO_SESSION = (
    "no tool call was made: this server answers tool calls only inside an MCP session (initialize, then "
    "send its Mcp-Session-Id), each session a run of its own"
)


def _within_search_cap(run_id: str, query: str, filters: Filters | None) -> None:
    """Refuse a search larger than ``POST /v1/search`` takes (:data:`SEARCH_BODY_BYTES` of JSON with the
    ids, the query and the filters): what the gateway would refuse is not forwarded to py-rag here.

    Raises:
        ToolError: the filters cannot be written as JSON, nest deeper than a search may, or the search
            is over the cap.
    """
    search = {"run_id": run_id, "tool_call_id": "", "query": query, "filters": filters}
    try:
        body = codec.dumps(search)
        check_nesting(body, search)
    except (codec.JSONEncodeError, SchemaViolation) as exc:
        raise ToolError(
            f"no lookup was made: the filters cannot be written as JSON or are nested too deep ({exc}). "
            "Call lookup_knowledge again with flat filters of strings, numbers of at most 64 bits, lists "
            "and objects."
        ) from exc
    size = len(body)
    if size > SEARCH_BODY_BYTES:
        raise ToolError(
            f"no lookup was made: the query and filters are {size:,} bytes as JSON, over the "
            f"{SEARCH_BODY_BYTES:,} a search may carry (as POST /v1/search). Call lookup_knowledge again "
            "with fewer filters."
        )


def _too_large(size: int, settings: Settings) -> str | None:
    """Why a stamped draft of ``size`` bytes would be refused before it is judged, or None: over what
    the ``diagnosis-drafts`` topic carries (as ``POST /v1/drafts``), or over what the guard reads at all
    (``EC_GUARD__MAX_DRAFT_BYTES``: its verdict would be ``DRAFT_TOO_LARGE`` naming no run, and the run's
    trail would show no such attempt)."""
    topic = settings.topic_max_message_bytes - RECORD_OVERHEAD_BYTES
    read = settings.guard.max_draft_bytes
    if size > topic and topic <= read:
        return f"the {topic:,} a draft may be (the diagnosis-drafts topic's, as POST /v1/drafts)"
    if size > read:
        return f"the {read:,} the evidence check reads (EC_GUARD__MAX_DRAFT_BYTES; above it, DRAFT_TOO_LARGE)"
    return None


def _text(*parts: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=part) for part in parts])


class EvidenceTools:
    """The three tools, over a started client; each call in the run of its session (:class:`McpRuns`)."""

    def __init__(self, client: EvidenceChainClient, runs: McpRuns, language: Language = "en") -> None:
        self.client = client
        self.runs = runs
        self.language = language

    def _run(self, ctx: Context | None) -> McpRun:
        """The run of the call's session.

        Raises:
            ToolError: the call came in no session where each session is a run (:data:`NO_SESSION`).
        """
        run = self.runs.of(session_of(ctx))
        if run is None:
            raise ToolError(NO_SESSION)
        return run

    async def lookup_knowledge(
        self, query: str, filters: dict[str, Any] | None = None, ctx: Context | None = None
    ) -> CallToolResult:
        try:
            check_query(query)  # the rule of POST /v1/search
        except SchemaViolation as exc:
            raise ToolError(
                f"no lookup was made: {exc}. Call lookup_knowledge again with one question."
            ) from exc
        run = self._run(ctx)
        _within_search_cap(run.run_id, query, filters)
        tool_call_id = run.next_tool_call_id()
        try:
            reply = await self.client.lookup_knowledge(run.run_id, tool_call_id, query, filters)
        except EvidenceChainError as exc:
            retry = " (trying again may work)" if exc.retriable else ""
            ledgered = (
                "Nothing was ledgered under it" if isinstance(exc, NOTHING_PRODUCED) else "It has no entry"
            )
            raise ToolError(
                f"lookup {tool_call_id} failed: {type(exc).__name__}: {exc}{retry}. "
                f"{ledgered}: do not cite it."
            ) from exc
        if reply.status != LedgerStatus.READY or reply.projection is None:
            raise ToolError(
                f"lookup {tool_call_id} failed: the ledger holds FAILED ({reply.failure_reason}) for it. "
                "It gives no evidence: do not cite it."
            )
        return _text(reply.projection)

    async def check_diagnosis(self, draft: dict[str, Any], ctx: Context | None = None) -> CallToolResult:
        run = self._run(ctx)
        # A draft refused before it is judged is not counted: one that cannot be written as JSON
        # (stamp_bytes), one over what POST /v1/drafts takes, one the broker refused (too large for the
        # topic, not authorized: never written). An attempt sent that gets no verdict still counts: its
        # draft may have been judged already, and another draft under the same (run_id, draft_id,
        # attempt) would be a conflict in the receipts.
        try:
            stamped = run.stamp_bytes(draft)
        except codec.JSONEncodeError as exc:
            raise ToolError(
                f"the draft was not checked (no attempt counted): it cannot be written as JSON ({exc}); "
                "numbers must fit in 64 bits (write a larger one as a string) and nesting must stay under "
                "254 levels. Call check_diagnosis again with the corrected draft."
            ) from exc
        attempt = run.attempt
        too_large = _too_large(len(stamped), self.client.settings)
        if too_large is not None:
            run.withdraw(attempt)
            raise ToolError(
                f"the draft was not checked (no attempt counted): it is {len(stamped):,} bytes as JSON, over "
                f"{too_large}. Call check_diagnosis again with a shorter draft."
            )
        try:
            reply = await self.client.check(stamped)
        except KafkaRefused as exc:
            counted = "no attempt counted" if run.withdraw(attempt) else f"attempt {attempt} is spent"
            raise ToolError(
                f"the draft was not checked ({counted}): the broker refused it: {exc}. Nothing was "
                "judged; a shorter draft may go through."
            ) from exc
        except EvidenceChainError as exc:
            raise ToolError(
                f"attempt {attempt} got no verdict: {type(exc).__name__}: {exc}. Call "
                "check_diagnosis again with the draft (it is checked as the next attempt)."
            ) from exc
        run.judged(reply.kind)
        verdict = reply.raw.decode("utf-8")
        if reply.kind == VerdictKind.REJECT:
            repair = repair_prompt(reply.verdict, self.language) or ""
            return _text(verdict, f"{repair}\n{AGAIN[self.language]}")
        if reply.kind == VerdictKind.FALLBACK:
            fixed = repair_prompt(reply.verdict, self.language) or ""
            return _text(verdict, f"FALLBACK: publish this fixed report instead of the draft: {fixed}")
        return _text(verdict, f"PASS: published as report {report_id(reply.verdict)}")

    async def get_evidence(self, tool_call_id: str, ctx: Context | None = None) -> CallToolResult:
        run = self._run(ctx)
        try:
            reply = await self.client.entry(run.run_id, tool_call_id)
        except InvalidId as exc:
            raise ToolError(f"{tool_call_id!r} is not a tool call id: {exc}") from exc
        except EvidenceChainError as exc:
            raise ToolError(f"the ledger could not be read: {type(exc).__name__}: {exc}") from exc
        if reply is None:
            raise ToolError(f"this run ({run.run_id}) has no ledger entry for {tool_call_id}")
        return _text(codec.dumps(reply.entry).decode("utf-8"))


def build_server(
    client: EvidenceChainClient, runs: McpRun | McpRuns, *, language: Language = "en"
) -> MCPServer[Any]:
    """The MCP server over ``client``, which the caller starts and closes: of one run (an
    :class:`McpRun`, or :class:`McpRuns` over stdio), or of a run per MCP session (``per_session``)."""
    if isinstance(runs, McpRun):
        runs = McpRuns.of_one(runs)
    tools = EvidenceTools(client, runs, language)
    named = runs.given if runs.per_session else runs.shared.run_id
    server: MCPServer[Any] = MCPServer(
        name="evidence-chain", title="evidence-chain knowledge tools", instructions=instructions(named)
    )
    # the tools, in the order tools/list shows them: what each does, its title and its hints
    offered: tuple[tuple[Callable[..., Any], str, str, str, ToolAnnotations], ...] = (
        (
            tools.lookup_knowledge,
            "lookup_knowledge",
            "Look up knowledge (ledgered)",
            LOOKUP_DESCRIPTION,
            ToolAnnotations(read_only_hint=False, idempotent_hint=False, open_world_hint=True),
        ),
        (
            tools.check_diagnosis,
            "check_diagnosis",
            "Check a diagnosis draft",
            CHECK_DESCRIPTION,
            ToolAnnotations(read_only_hint=False, idempotent_hint=False, open_world_hint=False),
        ),
        (
            tools.get_evidence,
            "get_evidence",
            "Read a ledger entry",
            EVIDENCE_DESCRIPTION,
            ToolAnnotations(read_only_hint=True, open_world_hint=False),
        ),
    )
    for tool, name, title, description, hints in offered:
        server.add_tool(
            tool,
            name=name,
            title=title,
            description=description,
            annotations=hints,
            structured_output=False,
        )
    _advertise_draft_schema(server)
    return server


def _advertise_draft_schema(server: MCPServer[Any]) -> None:
    """``check_diagnosis`` advertises the draft's own JSON Schema (from the models), not ``object``.

    The SDK builds a tool's input schema from the function's signature; the draft is taken as any
    object (the guard judges it, and an unparsable one gets its verdict too), so only the advertised
    schema is replaced.
    """
    tool = server._tool_manager.get_tool("check_diagnosis")  # noqa: SLF001 - no public setter in the SDK
    if tool is None:  # pragma: no cover - registered just above
        raise RuntimeError("check_diagnosis is not registered")
    tool.parameters = draft_input_schema()


async def started_client(settings: Settings) -> EvidenceChainClient:
    """The client the tools run over, started: Kafka is waited for up to ``EC_STARTUP_WAIT_SECONDS``.

    Raises:
        HoldExpired: Kafka did not answer in time.
    """
    if not settings.pyrag_url:
        log.warning(
            "EC_PYRAG_URL is not set: lookup_knowledge will fail until it is (check_diagnosis and "
            "get_evidence work without it)"
        )
    client = EvidenceChainClient(settings)
    what = f"connecting to Kafka at {settings.kafka_bootstrap}"
    await hold(client.start, what=what, policy=RetryPolicy.for_startup(settings))
    return client
