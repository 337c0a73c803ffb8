"""The guard agent: ``diagnosis-drafts`` → EvidenceGuard (reads the Redis ledger) → verdicts + violations.

If Redis cannot be reached the batch is held: no verdict is emitted and no offset committed, so
the guard never emits PASS without having read every cited entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from models.vocab import Station
from streams.agents.base import StationProcessor
from streams.envelope import event_id
from streams.ledger_store import LedgerStore
from streams.pipeline import internal_error
from streams.runtime import Outbound, Record, Sink, hold_until_done
from streams.settings import Settings
from streams.stations.guard import EvidenceGuard, GuardPlan, violation_events


class GuardProcessor(StationProcessor):
    """Checks each draft; all cited entries of a batch are read in at most two Redis round trips."""

    station = Station.GUARD

    def __init__(self, settings: Settings, sink: Sink, store: LedgerStore) -> None:
        super().__init__(settings, sink)
        self.store = store
        self.guard = EvidenceGuard(settings.guard)

    async def handle(self, records: Sequence[Record]) -> None:
        """Plan every draft, read the ledger once for the whole batch, judge, deliver."""
        plans: list[GuardPlan | None] = []
        messages: list[Outbound] = []
        for record in records:
            try:
                plans.append(self.guard.plan(record.value))
            except Exception as exc:  # noqa: BLE001 - an unexpected failure is an INTERNAL_ERROR dead letter
                plans.append(None)
                messages += self.reject(record, record.coordinates, internal_error(exc))
        wanted = [(p.run_id or "", t) for p in plans if p is not None for t in p.cited]
        lookups = (
            await hold_until_done(
                lambda: self.store.read_many(wanted),
                what=f"guard: reading {len(wanted)} ledger entries",
                backoff=self.backoff,
            )
            if wanted
            else {}
        )
        for record, plan in zip(records, plans, strict=True):
            if plan is None:
                continue
            origin = record.coordinates
            try:
                mine = {t: lookups[(plan.run_id or "", t)] for t in plan.cited}
                verdict = self.guard.judge(
                    plan, mine, event_id=event_id(Station.GUARD, origin), origin=origin
                )
            except Exception as exc:  # noqa: BLE001 - an unexpected failure is an INTERNAL_ERROR dead letter
                messages += self.reject(record, origin, internal_error(exc))
                continue
            key = self.key_for(verdict["run_id"], record)
            messages.append(self.out("verdicts", key, verdict))
            messages += [self.out("violations", key, event) for event in violation_events(verdict)]
            fields: dict[str, Any] = {
                "draft_id": verdict["draft_id"],
                "attempt": verdict["attempt"],
                "verdict": verdict["verdict"],
                "violation_codes": [v["code"] for v in verdict["violations"]],
                "cited_tool_call_ids": plan.cited,
            }
            messages.append(
                self.audit(record, origin, run_id=verdict["run_id"], tool_call_id=None, fields=fields)
            )
        await self.deliver(messages)
