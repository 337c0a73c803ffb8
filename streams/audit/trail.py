"""The whole trail of one run, as ``evidence-chain inspect`` shows it: the audit store's rows of its tool
calls and drafts, what the Redis ledger holds for each tool call, and what each verdict published.

The rows come from the audit store (``audit-sink`` writes it). Each tool call's entry comes from Redis
when it answers (status and sha256, never the projection); when it does not, the trail says why and
holds the audit rows alone. Per draft it holds the report published on ``reports`` for its verdict
(SPEC 4.3): only reports that hold (with trusted keys, a trusted guard key signed them), each once by its
signed fields, one per ``(run_id, draft_id, attempt)``; none for a REJECT, or a report the sink has not
stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from typing_extensions import TypedDict

from models.audit import ToolCallRow, VerdictRow
from models.verdict import ReportEvent
from streams.audit.factory import store_from_settings
from streams.errors import RedisUnavailable, Refused
from streams.ledger.redis import RedisLedgerStore
from streams.redaction import redact_url
from streams.settings import Settings
from streams.trust import EntryFault, check_entry, distinct_reports, trusted_for


class ShownEntry(TypedDict):
    """What ``inspect`` shows of a tool call's Redis entry (never its projection)."""

    status: str | None
    evidence_status: str | None
    projection_sha256: str | None
    failure_reason: str | None
    event_id: str | None


def _in_run(row: Mapping[str, object], name: str, value: object) -> dict[str, object]:
    """A row of the run's document: without its run id (the document's), then ``name``."""
    return {k: v for k, v in row.items() if k != "run_id"} | {name: value}


@dataclass(frozen=True, slots=True)
class InspectedCall:
    """A tool call of the run: its ``tool_invocation`` row and its Redis entry (None: not in Redis)."""

    row: ToolCallRow
    ledger_entry: ShownEntry | None

    def as_json(self) -> dict[str, object]:
        return _in_run(self.row, "ledger_entry", self.ledger_entry)


@dataclass(frozen=True, slots=True)
class InspectedDraft:
    """A verdict of the run: its ``tool_invocation`` row and what it published (None: nothing)."""

    row: VerdictRow
    report: ReportEvent | None

    def as_json(self) -> dict[str, object]:
        return _in_run(self.row, "report", self.report)


@dataclass(frozen=True, slots=True)
class RunTrail:
    """One run's tool calls and drafts, and why the Redis ledger could not be read (None: it was)."""

    run_id: str
    calls: list[InspectedCall]
    drafts: list[InspectedDraft]
    ledger_error: str | None

    def as_json(self) -> dict[str, object]:
        """The run as one JSON document (``inspect --json``)."""
        return {
            "run_id": self.run_id,
            "tool_calls": [call.as_json() for call in self.calls],
            "drafts": [draft.as_json() for draft in self.drafts],
            "ledger_error": self.ledger_error,
        }


def read_trail(settings: Settings, run_id: str) -> RunTrail | None:
    """The trail of ``run_id`` from the audit store and the Redis ledger; None when the audit store knows
    nothing of the run (or does not exist yet).

    Raises:
        ConfigurationError: the audit store cannot be used as it is.
    """
    tool_calls: list[ToolCallRow] = []
    drafts: list[VerdictRow] = []
    reports: list[ReportEvent] = []
    if settings.audit_dsn is not None or Path(settings.audit_db).is_file():
        store = store_from_settings(settings, readonly=True)
        try:
            tool_calls, drafts = store.run_trail(run_id)
            reports = store.stored_reports(run_id)
        finally:
            store.close()
    if not tool_calls and not drafts:
        return None
    entries, ledger_error = asyncio.run(
        _ledger_entries(settings, run_id, [t["tool_call_id"] for t in tool_calls])
    )
    calls = [InspectedCall(row, entries.get(row["tool_call_id"])) for row in tool_calls]
    # SPEC 4.3: only reports that hold (trusted keys: a trusted guard key signed them), each once by its
    # signed fields and one per (run, draft, attempt) — a copy under a new event_id replaces nothing
    published: dict[str | None, ReportEvent] = {}
    trusted = trusted_for(settings.trusted_keys_file)
    for kept in distinct_reports(reports, trusted, run_id=run_id).reports:
        published.setdefault(kept.get("verdict_event_id"), kept)
    # the verdict's event id is its guard audit record's: the report names it (verdict_event_id)
    judged = [InspectedDraft(row, published.get(row["event_id"])) for row in drafts]
    return RunTrail(run_id, calls, judged, ledger_error)


async def _ledger_entries(
    settings: Settings, run_id: str, tool_call_ids: Sequence[str]
) -> tuple[dict[str, ShownEntry | None], str | None]:
    """The Redis entry of each tool call (None when absent), or why Redis could not be read."""
    if not tool_call_ids:
        return {}, None
    store = RedisLedgerStore.from_settings(settings)
    try:
        lookups = await store.read_many([(run_id, t) for t in tool_call_ids])
    except (RedisUnavailable, Refused) as exc:
        # never the URL itself: it may hold a password
        where = redact_url(settings.redis_url.get_secret_value())
        return {}, (
            f"the Redis ledger at {where} could not be read ({type(exc).__name__}); "
            "ledger status and sha256 are not shown (check EC_REDIS_URL, or `make up`)"
        )
    finally:
        await store.close()
    entries: dict[str, ShownEntry | None] = {}
    for (_, tool_call_id), lookup in lookups.items():
        entry = lookup.entry
        if entry is None:
            entries[tool_call_id] = None
        elif check_entry(entry, None, (run_id, tool_call_id)).fault is EntryFault.KEY:
            # SPEC 3.7: another key's entry under this key is no one's evidence; none of it is shown
            entries[tool_call_id] = ShownEntry(
                status="LEDGER_INTEGRITY",
                evidence_status=None,
                projection_sha256=None,
                failure_reason=None,
                event_id=None,
            )
        else:
            entries[tool_call_id] = ShownEntry(
                status=entry.get("status"),
                evidence_status=entry.get("evidence_status"),
                projection_sha256=entry.get("projection_sha256"),
                failure_reason=entry.get("failure_reason"),
                event_id=entry.get("event_id"),
            )
    return entries, None
