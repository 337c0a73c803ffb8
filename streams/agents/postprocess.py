"""The postprocess agent: raw-hits → validate/adapt/postprocess/pack/assemble → ``postprocessed``."""

from __future__ import annotations

from collections.abc import Sequence

from models.vocab import Station
from streams import json
from streams.agents.base import StationProcessor
from streams.pipeline import process_raw_hits
from streams.runtime import Outbound, Record


class PostprocessProcessor(StationProcessor):
    """One LookupResult (or FailedLookup) per raw-hits record with valid ids; a dead letter per rejection."""

    station = Station.POSTPROCESS

    def messages_for(self, record: Record) -> list[Outbound]:
        """Everything one raw-hits record produces."""
        origin = record.coordinates  # a raw-hits record starts its chain
        outcome = process_raw_hits(record.value, self.settings, origin)
        lookup, rejection = outcome.lookup, outcome.rejection
        run_id = lookup["run_id"] if lookup else rejection["run_id"] if rejection else None
        tool_call_id = lookup["tool_call_id"] if lookup else rejection["tool_call_id"] if rejection else None
        key = self.key_for(run_id, record)
        messages: list[Outbound] = []
        if lookup is not None:
            messages.append(Outbound(self.topics["postprocessed"], key, json.dumps(lookup)))
        if rejection is not None:
            messages += self.reject(record, origin, rejection)
        messages.append(
            self.audit(record, origin, run_id=run_id, tool_call_id=tool_call_id, fields=outcome.audit)
        )
        return messages

    async def handle(self, records: Sequence[Record]) -> None:
        """Process a batch and deliver all its messages."""
        await self.deliver([m for record in records for m in self.messages_for(record)])
