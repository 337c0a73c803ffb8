"""The project agent: ``postprocessed`` (read as JSON text) → RagToolResult → ``projected``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from models.vocab import Station
from streams.agents.base import StationProcessor
from streams.pipeline import process_lookup
from streams.runtime import Outbound, Record


class ProjectProcessor(StationProcessor):
    """One ``projected`` value per LookupResult whose ids can be keyed; a dead letter per rejection."""

    station = Station.PROJECT

    def messages_for(self, record: Record) -> list[Outbound]:
        """Everything one postprocessed record produces."""
        outcome = process_lookup(record.value, self.settings, fallback_origin=record.coordinates)
        event, projection = outcome.event, outcome.projection
        run_id = event["run_id"] if event else outcome.rejection["run_id"] if outcome.rejection else None
        tool_call_id = event["tool_call_id"] if event else None
        key = self.key_for(run_id, record)
        messages: list[Outbound] = []
        if event is not None:
            messages.append(self.out("projected", key, event))
        if outcome.rejection is not None:
            messages += self.reject(record, outcome.origin, outcome.rejection)
        fields: dict[str, Any] = {"status": event["status"] if event else None}
        if projection is not None:
            result = projection.result
            fields = {
                "evidence_status": result["evidence_status"],
                "returned_count": result["returned_count"],
                "relevance_level": result["relevance_level"],
                "truncated": result["truncated"],
                "projection_bytes": len(projection.canonical),
                "projection_sha256": projection.sha256,
            }
        elif event is not None:
            fields["failure_reason"] = event["failure_reason"]
        messages.append(
            self.audit(record, outcome.origin, run_id=run_id, tool_call_id=tool_call_id, fields=fields)
        )
        return messages

    async def handle(self, records: Sequence[Record]) -> None:
        """Process a batch and deliver all its messages."""
        await self.deliver([m for record in records for m in self.messages_for(record)])
