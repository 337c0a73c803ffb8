"""``audit-sink`` and ``inspect``: the audit topic into the audit database, and the trail of one run.

The database is the SQLite file ``EC_AUDIT_DB`` or, when ``EC_AUDIT_DSN`` is set, that PostgreSQL
database; ``--db`` takes either (a path, or a ``postgresql://`` DSN — prefer the variable for a DSN
with a password: a command line is visible to every user of the machine). ``inspect`` reads what
``audit-sink`` writes, and the Redis ledger for what each agent was shown (status and sha256) when
Redis answers; without Redis it says so and shows the audit trail alone. Per draft it shows what was
published on ``reports`` (SPEC 4.3): the report event of that verdict, or none (a REJECT, or a report
the sink has not stored). The trail is :mod:`streams.audit.trail`'s; this module draws it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import logging.config
import sys
from collections import Counter
from typing import cast

from pydantic import SecretStr
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from models.audit import ToolCallRow
from models.verdict import Report, ReportEvent
from streams import codec
from streams.audit.factory import require_backend
from streams.audit.sink import SinkProbes, SinkStats, run_sink
from streams.audit.store import describe, is_dsn, target_of
from streams.audit.trail import InspectedCall, InspectedDraft, RunTrail, read_trail
from streams.cli.display import cell, console, printable
from streams.errors import ConfigurationError
from streams.observe.logs import logging_config
from streams.settings import Settings, get_settings
from streams.web.probes import serving

_DB_HELP = (
    "SQLite file, or a postgresql:// DSN (default: EC_AUDIT_DSN when set, else EC_AUDIT_DB); "
    "prefer EC_AUDIT_DSN for a DSN with a password"
)
_VERDICT_STYLE = {"PASS": "green", "REJECT": "yellow", "FALLBACK": "red"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``audit-sink`` and ``inspect``."""
    sink = sub.add_parser(
        "audit-sink",
        help="consume the audit topic into the tool_invocation table (SQLite or PostgreSQL)",
        description="Consume <prefix>audit in consumer group <app_id>-audit-sink into the SQLite file "
        "EC_AUDIT_DB, or the PostgreSQL database EC_AUDIT_DSN, idempotent by event_id (a replay adds "
        "no rows), and with it the evidence: <prefix>ledger, verdicts, diagnosis-drafts and reports "
        "(for serve, receipt and inspect); creates and migrates the schema at start. Stops on "
        "SIGINT/SIGTERM.",
    )
    sink.add_argument("--db", metavar="PATH|DSN", help=_DB_HELP)
    sink.add_argument("--once", action="store_true", help="drain what the topic holds now, then exit")
    sink.add_argument("--batch-size", type=int, default=500, help="records per database transaction")
    sink.add_argument("--loglevel", default="info", choices=("debug", "info", "warning", "error"))
    sink.set_defaults(handler=run_audit_sink)

    inspect = sub.add_parser(
        "inspect",
        help="the whole trail of one run, readable by a person",
        description="Per tool call: candidates in, blocks out, level, truncation, ledger status and "
        "sha256, dead letter; per draft: attempt, verdict, violation codes, and the report published "
        "for it on the reports topic (PASS: the reviewed fields; FALLBACK: the fixed report; REJECT: "
        "none). Reads the audit database written by audit-sink, and the Redis ledger when it answers.",
    )
    inspect.add_argument("run_id", metavar="RUN_ID")
    inspect.add_argument("--db", metavar="PATH|DSN", help=_DB_HELP)
    inspect.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    inspect.set_defaults(handler=run_inspect)


def settings_with_db(db: str | None) -> Settings:
    """The settings, with ``--db`` (a SQLite path, or a PostgreSQL DSN) in place of the environment's."""
    settings = get_settings()
    if not db:
        return settings
    if is_dsn(db):
        return settings.model_copy(update={"audit_dsn": SecretStr(db)})
    return settings.model_copy(update={"audit_db": db, "audit_dsn": None})


async def _serve_and_sink(settings: Settings, batch_size: int, once: bool) -> SinkStats:
    """The sink, with its probes on ``EC_AUDIT_SINK_PORT`` while it runs (0: none)."""
    stats = SinkStats()
    async with contextlib.AsyncExitStack() as probes:
        if settings.audit_sink_port:
            sink = SinkProbes(stats, settings.stall_seconds)
            await probes.enter_async_context(serving(sink, "audit sink", settings.audit_sink_port))
        return await run_sink(settings, batch_size=batch_size, once=once, stats=stats)


def run_audit_sink(args: argparse.Namespace) -> int:
    """The ``audit-sink`` command; prints what it stored when it stops."""
    if args.batch_size < 1:
        raise ConfigurationError(f"--batch-size must be at least 1, not {args.batch_size}")
    settings = settings_with_db(args.db)
    require_backend(target_of(settings))  # before the probes listen: a missing extra is one line, not a log
    logging.config.dictConfig(logging_config(settings.log_format, args.loglevel))
    stats = asyncio.run(_serve_and_sink(settings, args.batch_size, args.once))
    replays = stats.read - stats.evidence - stats.inserted - stats.malformed
    counts = stats.counts
    print(
        f"audit-sink: read {stats.read} records: {stats.inserted} new events, {replays} replays dropped, "
        f"{stats.malformed} malformed; {stats.evidence} ledger entries, verdicts, drafts and reports"
    )
    if counts:
        print(
            f"{describe(settings)}: {counts['events']} events, {counts['tool_calls']} tool calls, "
            f"{counts['verdicts']} verdicts"
        )
    else:
        print(f"{describe(settings)}: the totals could not be read (see the log)")
    return 0


def run_inspect(args: argparse.Namespace) -> int:
    """The ``inspect`` command: exit 1 when the audit database knows nothing of the run."""
    settings = settings_with_db(args.db)
    trail = read_trail(settings, args.run_id)
    if trail is None:
        print(
            f"no audit records for run {printable(args.run_id)}; is the audit sink running "
            "(evidence-chain audit-sink)?",
            file=sys.stderr,
        )
        print(f"(audit database: {describe(settings)})", file=sys.stderr)
        return 1
    if args.json:
        sys.stdout.buffer.write(codec.dumps_line(trail.as_json()))
        sys.stdout.flush()
        return 0
    _render(console(), trail)
    return 0


def _short(sha: object) -> str:
    return sha[:10] if isinstance(sha, str) else "—"


def _cell(value: object) -> Text:
    return cell(value)


def _flow_cell(call: ToolCallRow) -> Text:
    if call["postprocess_status"] == "FAILED":
        return Text(printable(f"FAILED {call['postprocess_failure_reason'] or ''}".strip()), style="red")
    hits, blocks = call["candidate_count"], call["evidence_block_count"]
    return Text(f"{'?' if hits is None else hits}→{'?' if blocks is None else blocks}")


def _returned_cell(call: ToolCallRow) -> Text:
    if call["project_status"] == "FAILED":
        return Text("FAILED", style="red")
    text = _cell(call["returned_count"])
    if call["truncated"]:
        text.append(" truncated", style="yellow")
    return text


def _ledger_cells(inspected: InspectedCall, ledger_error: str | None) -> tuple[Text, Text]:
    """(status/outcome, sha256): from Redis when it answered, else the audit trail's (dim)."""
    call = inspected.row
    outcome = call["ledger_outcome"]
    suffix = f"/{outcome}" if outcome else ""
    if ledger_error is not None:
        return Text(printable(f"{call['ledger_status'] or '—'}{suffix}"), style="dim"), Text(
            "?", style="dim"
        )
    entry = inspected.ledger_entry
    if entry is None:
        status = Text("not in Redis", style="red")
        status.append(printable(f" (audit: {call['ledger_status'] or '—'}{suffix})"), style="dim")
        return status, Text("—", style="dim")
    status = Text(printable(f"{entry['status']}{suffix}"), style="" if entry["status"] == "READY" else "red")
    sha = Text(printable(_short(entry["projection_sha256"])))
    projected = call["projection_sha256"]
    if projected and entry["projection_sha256"] and projected != entry["projection_sha256"]:
        sha.append(printable(f" ≠ projected {_short(projected)}"), style="yellow")
    return status, sha


def _render(console: Console, trail: RunTrail) -> None:
    run_id, tool_calls, drafts, ledger_error = trail.run_id, trail.calls, trail.drafts, trail.ledger_error
    console.print(
        Text(printable(f"run {run_id}: {len(tool_calls)} tool calls, {len(drafts)} drafts"), style="bold")
    )
    if ledger_error is not None:
        console.print(Text(printable(f"note: {ledger_error}"), style="yellow"))
    if tool_calls:
        table = Table(title="tool calls", title_justify="left", box=box.SIMPLE_HEAD)
        table.add_column("tool call", no_wrap=True)
        for column in ("hits→blocks", "level", "returned"):
            table.add_column(column)
        table.add_column("ledger", min_width=13)
        table.add_column("sha256", no_wrap=True)
        for inspected in tool_calls:
            call = inspected.row
            table.add_row(
                cell(call["tool_call_id"]),
                _flow_cell(call),
                _cell(call["relevance_level"]),
                _returned_cell(call),
                *_ledger_cells(inspected, ledger_error),
            )
        console.print(table)
    letters = [c.row for c in tool_calls if c.row["dead_letter_reason"]]
    if letters:
        table = Table(title="dead letters", title_justify="left", box=box.SIMPLE_HEAD)
        table.add_column("tool call", no_wrap=True)
        table.add_column("reason", style="red")
        table.add_column("station")
        table.add_column("error")
        for call in letters:
            table.add_row(
                cell(call["tool_call_id"]),
                _cell(call["dead_letter_reason"]),
                _cell(call["dead_letter_station"]),
                _cell(call["dead_letter_error"]),
            )
        console.print(table)
    if drafts:
        table = Table(title="drafts", title_justify="left", box=box.SIMPLE_HEAD)
        for column in ("draft", "attempt", "verdict"):
            table.add_column(column)
        table.add_column("violations", overflow="fold")
        table.add_column("cites", overflow="fold")
        for draft in (d.row for d in drafts):
            codes = Counter(draft["violation_codes"])
            listed = ", ".join(f"{code}×{n}" if n > 1 else code for code, n in codes.items())
            table.add_row(
                _cell(draft["draft_id"]),
                _cell(draft["attempt"]),
                cell(draft["verdict"], _VERDICT_STYLE.get(str(draft["verdict"]), "")),
                cell(listed or None),
                cell(", ".join(draft["cited_tool_call_ids"])),
            )
        console.print(table)
    _render_reports(console, drafts)


def report_summary(event: ReportEvent | None) -> str:
    """One line for what a verdict published: none, the fixed fallback report, or the reviewed fields
    (with the limitations said to be the agent's own words, which the review does not judge: SPEC 4.3)."""
    if event is None:
        return "nothing published"
    if event.get("verdict") == "FALLBACK":
        return "the fixed fallback report"
    published: object = event.get("report")  # a stored event, as the topic carried it: read field by field
    report = cast(Report, published if isinstance(published, dict) else {})
    analysis, actions = report.get("analysis") or [], report.get("action_plan") or []
    conclusion = "a conclusion" if report.get("conclusion") else "no conclusion (evidence insufficient)"
    items = f"{len(analysis)} analysis item{'' if len(analysis) == 1 else 's'}"
    limitations = report.get("limitations") or []
    plural = "" if len(limitations) == 1 else "s"
    said = f"{len(limitations)} limitation{plural} in the agent's own words (not reviewed)"
    return f"{items}, {conclusion}, {len(actions)} action{'' if len(actions) == 1 else 's'}, {said}"


def _render_reports(console: Console, drafts: list[InspectedDraft]) -> None:
    """What left the chain, per draft: the report published on ``reports`` for its verdict, if any."""
    if not drafts:
        return
    table = Table(title="published (reports)", title_justify="left", box=box.SIMPLE_HEAD)
    for column in ("draft", "attempt", "verdict", "published"):
        table.add_column(column)
    table.add_column("conclusion", overflow="fold")
    for inspected in drafts:
        draft, event = inspected.row, inspected.report
        report: object = None if event is None else event.get("report")
        conclusion = report.get("conclusion") if isinstance(report, dict) else None
        shown = conclusion.get("content") if isinstance(conclusion, dict) else None
        if event is not None and shown is None and isinstance(report, dict):
            # SPEC 4.3: the agent's own words, never judged by the review: shown as such
            said = "; ".join(str(x) for x in report.get("limitations") or [])
            shown = f"limitations (the agent's own words, not reviewed): {said}" if said else None
        table.add_row(
            _cell(draft["draft_id"]),
            _cell(draft["attempt"]),
            cell(draft["verdict"], _VERDICT_STYLE.get(str(draft["verdict"]), "")),
            cell(report_summary(event), "" if event is not None else "dim"),
            cell(shown),
        )
    console.print(table)
