"""The whole agent loop against running workers, with a scripted model in place of an LLM.

    python -m examples.agent_loop                  # against running workers (the EC_* settings)
    evidence-chain demo --mode loop                # starts a worker on a fresh prefix, then runs this
    make run                                       # the sample's tables, then this loop

What an agent harness does with evidence-chain, step by step (design note §9):

1. The model asks the knowledge base; the harness sends py-rag's raw answer as one ``raw-hits`` record
   through :meth:`EvidenceChainClient.lookup` and shows the model **the ledger's exact bytes**
   (``reply.projection``) — never py-rag's answer, never a re-serialized copy.
2. The model writes a draft. The harness stamps ``run_id``, ``draft_id`` and ``attempt`` (SPEC 1: only
   the harness writes drafts) and sends it through :meth:`EvidenceChainClient.check`.
3. REJECT: :func:`repair_prompt` turns the verdict into fixed instructions (code and path only,
   nothing of the model's own words) and the model tries again. PASS or FALLBACK (the guard's answer
   from attempt ``max_attempts`` on): the guard itself publishes what may leave the chain on the
   ``reports`` topic — the draft's reviewed fields, or the fixed report (SPEC 4.3) — and the harness
   reads it back with :meth:`EvidenceChainClient.reports`. Downstream systems read ``reports``, never
   the drafts.

Run A's model cites a tool call it remembers from an earlier run, is told so, and fixes it:
REJECT (CITATION_CROSS_RUN) → PASS. Run B's model calls a lookup that found nothing its evidence and
never changes its mind: REJECT (NORMAL_CITES_NO_EVIDENCE) → FALLBACK. Run C's model states numbers its
evidence never said (the excerpt says ``proxy_read_timeout`` defaults to 60s, the model writes 30s and
"raise it to 120s"), is told, and drops them: REJECT (CLAIM_NUMBER_UNSUPPORTED) → PASS.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from rich.console import Console, Group
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from models.vocab import Topic
from streams import codec
from streams.cli.display import cell, console, printable
from streams.client import EvidenceChainClient, LedgerReply, VerdictReply, repair_prompt
from streams.errors import EvidenceChainError, ReplyTimeout
from streams.settings import get_settings

Language = Literal["zh", "en"]
VERDICT_STYLE = {"PASS": "green", "REJECT": "yellow", "FALLBACK": "red"}

# --- what py-rag answered: raw-hits records as the harness sends them (like deploy/sample) ------------

GATEWAY_HITS: tuple[dict[str, Any], ...] = (
    {
        "evidence_key": "gw-timeout-md#chunk-1",
        "document_id": "gw-timeout-md",
        "source": "runbooks/gateway-timeout.md",
        "title": "网关超时排查",
        "breadcrumb": "网关超时排查 > 处理步骤",
        "excerpt": "先确认 504 出现在哪一跳：查看网关 access log 的 upstream_response_time，"
        "超过 proxy_read_timeout 的请求即为上游慢。",
        "quality_score": 0.91,
        "relevance_level": "PRECISE",
    },
    {
        "evidence_key": "gw-timeout-md#chunk-2",
        "document_id": "gw-timeout-md",
        "source": "runbooks/gateway-timeout.md",
        "title": "网关超时排查",
        "breadcrumb": "网关超时排查 > 常见原因",
        "excerpt": "常见原因：上游连接池耗尽、keepalive 配置过小、上游实例 GC 停顿。",
        "quality_score": 0.88,
        "relevance_level": "PRECISE",
    },
)


NGINX_HITS: tuple[dict[str, Any], ...] = (
    {
        "evidence_key": "nginx-upstream-md#chunk-0",
        "document_id": "nginx-upstream-md",
        "source": "docs/nginx-upstream.md",
        "title": "Nginx upstream 配置",
        "breadcrumb": "Nginx upstream 配置 > 超时",
        "excerpt": "proxy_read_timeout 默认 60s：两次读操作之间的最长等待，超过即断开连接，网关返回 504。",
        "quality_score": 0.9,
        "relevance_level": "PRECISE",
    },
)


@dataclass(frozen=True)
class ToolCall:
    """One knowledge lookup the model made, and py-rag's answer to it."""

    tool_call_id: str
    query: str
    hits: tuple[dict[str, Any], ...] = ()

    def raw_hits(self, run_id: str) -> dict[str, Any]:
        """The ``raw-hits`` record: py-rag's response as it came, keyed by the run and the tool call."""
        found = bool(self.hits)
        return {
            "run_id": run_id,
            "tool_call_id": self.tool_call_id,
            "response": {
                "query": self.query,
                "mode": "hybrid",
                "hits": list(self.hits),
                "relevance_level": "PRECISE" if found else None,
                "evidence_status": "supported" if found else "no_evidence",
                "retrieval_trace": {
                    "mode": "hybrid",
                    "recall_count": len(self.hits),
                    "no_evidence_basis": None if found else "no candidate above recall threshold",
                },
            },
        }


# --- the scripted models: what an LLM would write, fixed ----------------------------------------------

Shown = Mapping[str, Mapping[str, Any]]
"""What the model was shown, by tool call id: each projection as the model reads it (parsed JSON)."""


class Model(Protocol):
    """Writes a draft from what it was shown and the last repair prompt (None on the first attempt)."""

    def write(self, shown: Shown, repair: str | None) -> dict[str, Any]: ...


@dataclass
class BorrowingModel:
    """Cites a tool call it remembers from an earlier run until a repair prompt says CITATION_CROSS_RUN."""

    remembered: str
    """A tool call id of another run, still in the model's context."""
    own: str
    """This run's tool call that found the same evidence."""
    nothing_found: str
    """This run's tool call that found nothing."""

    def write(self, shown: Shown, repair: str | None) -> dict[str, Any]:
        told = repair is not None and "CITATION_CROSS_RUN" in repair
        first = shown[self.own]["evidence"][0]["document_id"]  # copied from the ledger bytes, not guessed
        return {
            "analysis": [
                {
                    "id": "a1",
                    "kind": "NORMAL",
                    "content": "504 来自网关到上游的读超时：upstream_response_time 超过 proxy_read_timeout",
                    "tool_call_ids": [self.own if told else self.remembered],
                    "document_ids": [first],
                },
                {
                    "id": "a2",
                    "kind": "NEGATIVE_OBSERVATION",
                    "content": "知识库没有证书过期的记录，证书问题需看告警确认",
                    "tool_call_ids": [self.nothing_found],
                },
            ],
            "conclusion": {"content": "上游响应慢于 proxy_read_timeout", "based_on_analysis_ids": ["a1"]},
            "action_plan": [
                {
                    "id": "p1",
                    "content": "检查上游连接池与 keepalive 配置",
                    "based_on_analysis_ids": ["a1", "a2"],
                }
            ],
            "limitations": ["未查看实时指标与网关日志"],
        }


@dataclass
class StubbornModel:
    """Presents a lookup that found nothing as evidence, whatever the repair prompt says."""

    nothing_found: str

    def write(self, shown: Shown, repair: str | None) -> dict[str, Any]:
        return {
            "analysis": [
                {
                    "id": "a1",
                    "kind": "NORMAL",
                    "content": "磁盘已写满，写入超时由此引起",
                    "tool_call_ids": [self.nothing_found],
                }
            ],
            "conclusion": {"content": "磁盘写满导致接口超时", "based_on_analysis_ids": ["a1"]},
            "action_plan": [],
            "limitations": ["只查了知识库"],
        }


@dataclass
class OverclaimingModel:
    """States numbers its evidence never said until a repair prompt says CLAIM_NUMBER_UNSUPPORTED."""

    own: str
    """This run's tool call whose excerpt gives ``proxy_read_timeout``'s default."""

    def write(self, shown: Shown, repair: str | None) -> dict[str, Any]:
        told = repair is not None and "CLAIM_NUMBER_UNSUPPORTED" in repair
        first = shown[self.own]["evidence"][0]["document_id"]
        finding = (
            "proxy_read_timeout 默认 60s，上游一次读等待超过它，网关返回 504"
            if told
            else "proxy_read_timeout 默认 30s，上游一次读等待超过它，网关返回 504"
        )
        action = (
            "对照上游实际耗时评估是否调大 proxy_read_timeout" if told else "将 proxy_read_timeout 调到 120s"
        )
        return {
            "analysis": [
                {
                    "id": "a1",
                    "kind": "NORMAL",
                    "content": finding,
                    "tool_call_ids": [self.own],
                    "document_ids": [first],
                }
            ],
            "conclusion": {"content": "上游读等待超过 proxy_read_timeout", "based_on_analysis_ids": ["a1"]},
            "action_plan": [{"id": "p1", "content": action, "based_on_analysis_ids": ["a1"]}],
            "limitations": ["未查看上游实际耗时"],
        }


# --- the harness -----------------------------------------------------------------------------------


@dataclass
class Transcript:
    """One run of the loop: what the model was shown, what it wrote, and what came back."""

    run_id: str
    shown: dict[str, LedgerReply] = field(default_factory=dict)
    drafts: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[VerdictReply] = field(default_factory=list)
    replies: list[str | None] = field(default_factory=list)
    """Per verdict: the repair prompt (REJECT), the fixed report (FALLBACK) or None (PASS)."""
    report: dict[str, Any] | None = None
    """The last verdict's event on ``reports``, read back from the topic (PASS, FALLBACK)."""

    @property
    def kinds(self) -> list[str]:
        """The verdicts in order: ``["REJECT", "PASS"]``."""
        return [v.kind for v in self.verdicts]


async def investigate(
    client: EvidenceChainClient,
    run_id: str,
    calls: Sequence[ToolCall],
    model: Model,
    out: Console,
    *,
    language: Language = "zh",
) -> Transcript:
    """One run: the lookups, then drafts until PASS or FALLBACK (at most ``max_attempts``)."""
    transcript = Transcript(run_id)
    for call in calls:
        reply = await client.lookup(call.raw_hits(run_id))
        transcript.shown[call.tool_call_id] = reply
        show_lookup(out, call, reply)
    # The model reads the exact text the ledger holds; a FAILED lookup shows it only the reason.
    shown = {t: codec.loads(r.projection) for t, r in transcript.shown.items() if r.projection is not None}
    repair: str | None = None
    for attempt in range(1, client.settings.guard.max_attempts + 1):
        # The harness stamps the ids and the attempt: the model's own values never decide them.
        draft = {**model.write(shown, repair), "run_id": run_id, "draft_id": f"{run_id}-d{attempt}"}
        draft["attempt"] = attempt
        transcript.drafts.append(draft)
        show_draft(out, draft)
        verdict = await client.check(draft)
        answer = repair_prompt(verdict.verdict, language)
        transcript.verdicts.append(verdict)
        transcript.replies.append(answer)
        show_verdict(out, verdict, answer, language)
        if answer is None or verdict.kind == "FALLBACK":
            break
        repair = answer
    last = transcript.verdicts[-1]
    if last.kind in ("PASS", "FALLBACK"):
        # What left the chain: the guard published it in the verdict's batch; read it back from the topic.
        event_id = last.verdict["event_id"]
        published = await client.reports(run_id, verdict_event_id=event_id)
        transcript.report = next(r for r in published if r.get("verdict_event_id") == event_id)
        show_report(out, transcript.report, client)
    return transcript


async def agent_loop(
    client: EvidenceChainClient, out: Console, *, tag: str = "loop", language: Language = "zh"
) -> list[Transcript]:
    """Run A (REJECT → PASS), run B (REJECT → FALLBACK) and run C (REJECT for an unsupported number →
    PASS); returns the three transcripts."""
    earlier = ToolCall("call_0_gw", "网关 504 超时怎么排查", GATEWAY_HITS)
    out.print(Rule(Text(f"Agent loop (scripted model, repair prompts in {language})")))
    remembered = await client.lookup(earlier.raw_hits(f"{tag}-0"))
    out.print(
        Text.assemble(
            "An earlier run ",
            (printable(remembered.run_id), "bold"),
            " looked up ",
            (printable(remembered.tool_call_id), "bold"),
            f" ({remembered.status}); the model still has that id in its context.",
        )
    )
    gateway = ToolCall("call_a_gw", "网关 504 超时怎么排查", GATEWAY_HITS)
    cert = ToolCall("call_a_cert", "证书过期告警")
    out.print(Rule(Text(f"Run A {tag}-a: the model borrows another run's tool call, is told, fixes it")))
    run_a = await investigate(
        client,
        f"{tag}-a",
        [gateway, cert],
        BorrowingModel(remembered.tool_call_id, gateway.tool_call_id, cert.tool_call_id),
        out,
        language=language,
    )
    disk = ToolCall("call_b_disk", "磁盘写满告警")
    out.print(Rule(Text(f"Run B {tag}-b: the model calls 'nothing found' evidence and never changes it")))
    run_b = await investigate(
        client, f"{tag}-b", [disk], StubbornModel(disk.tool_call_id), out, language=language
    )
    nginx = ToolCall("call_c_nginx", "proxy_read_timeout 默认值", NGINX_HITS)
    out.print(
        Rule(Text(f"Run C {tag}-c: the model states numbers its evidence never said, is told, drops them"))
    )
    run_c = await investigate(
        client, f"{tag}-c", [nginx], OverclaimingModel(nginx.tool_call_id), out, language=language
    )
    summary = Table(title=Text("Agent loop: verdicts per run, and what each published on reports"))
    for column in ("run", "verdicts", "published (read back from reports)"):
        summary.add_column(column)
    for run in (run_a, run_b, run_c):
        kind = (run.report or {}).get("verdict")
        published = {"PASS": "the draft's reviewed fields", "FALLBACK": "the fixed report"}.get(str(kind))
        summary.add_row(cell(run.run_id), cell(" → ".join(run.kinds)), cell(published, empty="nothing"))
    out.print(summary)
    return [run_a, run_b, run_c]


# --- what a person sees ----------------------------------------------------------------------------


def show_lookup(out: Console, call: ToolCall, reply: LedgerReply) -> None:
    """One lookup: the ledger entry's figures and the exact text the model is shown."""
    table = Table(title=Text(f"lookup {printable(call.tool_call_id)}: {printable(call.query)}"))
    for column in ("tool call", "status", "evidence", "items", "truncated", "sha256", "from ledger"):
        table.add_column(column)
    view = codec.loads(reply.projection) if reply.projection is not None else {}
    table.add_row(
        cell(reply.tool_call_id),
        cell(reply.status),
        cell(view.get("evidence_status", reply.failure_reason)),
        cell(view.get("returned_count")),
        cell(view.get("truncated")),
        cell((reply.projection_sha256 or "-")[:12]),
        cell("yes" if reply.from_ledger else "no (produced)"),
    )
    shown = reply.projection if reply.projection is not None else f"tool failed: {reply.failure_reason}"
    out.print(table, Panel(Text(printable(shown)), title=Text("shown to the model (the ledger's bytes)")))


def show_draft(out: Console, draft: Mapping[str, Any]) -> None:
    """The model's draft, one row per analysis item."""
    table = Table(title=Text(f"draft {printable(draft['draft_id'])}, attempt {draft['attempt']}"))
    for column in ("id", "kind", "cites", "documents", "content"):
        table.add_column(column)
    for item in draft.get("analysis") or []:
        table.add_row(
            cell(item.get("id")),
            cell(item.get("kind")),
            cell(", ".join(item.get("tool_call_ids") or [])),
            cell(", ".join(item.get("document_ids") or []) or None, empty="-"),
            cell(item.get("content")),
        )
    conclusion = draft.get("conclusion")
    if isinstance(conclusion, Mapping):
        refs = ", ".join(conclusion.get("based_on_analysis_ids") or [])
        table.add_row(
            cell("conclusion"), cell(""), cell(f"← {refs}"), cell(""), cell(conclusion.get("content"))
        )
    for action in draft.get("action_plan") or []:
        refs = ", ".join(action.get("based_on_analysis_ids") or [])
        table.add_row(
            cell(action.get("id")), cell("action"), cell(f"← {refs}"), cell(""), cell(action.get("content"))
        )
    out.print(table)


def show_verdict(out: Console, verdict: VerdictReply, answer: str | None, language: Language) -> None:
    """The verdict, then the repair prompt (REJECT) or the fixed report (FALLBACK)."""
    v = verdict.verdict
    codes = [f"{x['code']} @ {x['path'] or '<draft>'}" for x in v["violations"]]
    table = Table(title=Text(f"verdict on {printable(v['draft_id'])}"))
    for column in ("attempt", "verdict", "violations", "draft sha256"):
        table.add_column(column)
    table.add_row(
        cell(v["attempt"]),
        cell(verdict.kind, VERDICT_STYLE.get(verdict.kind, "")),
        # line by line: printable() escapes a newline, and each violation should keep its own line
        Text("\n".join(printable(code) for code in codes)) if codes else cell("-"),
        cell(str(v["draft_sha256"])[:12]),
    )
    out.print(table)
    if answer is None:
        out.print(Text("PASS: the guard publishes the draft's reviewed fields on reports.", style="green"))
        return
    if verdict.kind == "FALLBACK":
        title = "FALLBACK: no attempt left; the guard publishes the fixed report instead of the draft"
    else:
        title = f"repair prompt ({language}) that goes back to the model"
    # Line by line: printable() escapes newlines, and the prompt's own lines should stay lines.
    body = Group(*(Text(printable(line)) for line in answer.splitlines()))
    out.print(Panel(body, title=Text(title), border_style=VERDICT_STYLE.get(verdict.kind, "")))


def show_report(out: Console, event: Mapping[str, Any], client: EvidenceChainClient) -> None:
    """The report as read back from ``reports``: what a ticket or a chat channel would receive."""
    report = event.get("report") or {}
    lines = [Text(printable(f"event {event.get('event_id')} (verdict {event.get('verdict_event_id')})"))]
    for item in report.get("analysis") or []:
        cites = ", ".join(item.get("tool_call_ids") or [])
        lines.append(
            Text(printable(f"analysis {item.get('id')} [{item.get('kind')}, {cites}]: {item.get('content')}"))
        )
    conclusion = report.get("conclusion")
    lines.append(Text(printable(f"conclusion: {conclusion.get('content') if conclusion else None}")))
    for action in report.get("action_plan") or []:
        lines.append(Text(printable(f"action {action.get('id')}: {action.get('content')}")))
    lines.append(Text(printable(f"limitations: {'; '.join(report.get('limitations') or [])}")))
    signature = event.get("signature")
    if signature is None:
        lines.append(Text("unsigned (the guard has no signing key)", style="dim"))
    elif client.trusted is not None:
        why_not = client.trusted.verify_report(event)
        state = "verified" if why_not is None else f"NOT verified: {why_not}"
        lines.append(Text(printable(f"signed by guard key {signature.get('key_id')}: {state}")))
    else:
        lines.append(
            Text(printable(f"signed by key {signature.get('key_id')} (no trusted keys to check it)"))
        )
    title = f"published on {client.settings.topic(Topic.REPORTS)}: {event.get('verdict')} report, read back"
    out.print(
        Panel(Group(*lines), title=Text(title), border_style=VERDICT_STYLE.get(str(event.get("verdict")), ""))
    )


# --- the command -----------------------------------------------------------------------------------


async def _run(args: argparse.Namespace, out: Console) -> None:
    settings = get_settings()
    async with EvidenceChainClient(settings, timeout_ms=args.timeout_ms) as client:
        await agent_loop(client, out, tag=args.tag, language=args.language)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m examples.agent_loop``: both runs against the workers the EC_* settings name."""
    parser = argparse.ArgumentParser(prog="python -m examples.agent_loop", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--tag", default="loop", help="run ids are <tag>-0, <tag>-a, <tag>-b, <tag>-c (default: loop)"
    )
    parser.add_argument("--language", choices=("zh", "en"), default="zh", help="of the repair prompts")
    parser.add_argument(
        "--timeout-ms", type=int, default=None, help="per lookup/check (EC_GATEWAY_TIMEOUT_MS)"
    )
    parser.add_argument("--width", type=int, default=None, help="of the output (default: the terminal's)")
    args = parser.parse_args(argv)
    out = console(width=args.width)
    try:
        asyncio.run(_run(args, out))
    except ReplyTimeout as exc:
        print(
            f"agent_loop: {exc}\n(is a worker running? `evidence-chain worker`, or use `evidence-chain "
            "demo --mode loop`, which starts one)",
            file=sys.stderr,
        )
        return 1
    except EvidenceChainError as exc:
        print(f"agent_loop: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
