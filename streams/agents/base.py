"""What every station processor shares: outputs, dead letters, audit records, retry-and-hold."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from models.events import Origin, Rejection
from models.ids import is_valid_id
from models.vocab import Station
from streams import json
from streams.envelope import audit_record, dead_letter, event_id
from streams.runtime import Backoff, Outbound, Record, Sink, hold_until_done
from streams.settings import Settings

log = logging.getLogger(__name__)


class StationProcessor:
    """Base of the four processors: collects a batch's outbound messages and delivers them at once."""

    station: Station

    def __init__(self, settings: Settings, sink: Sink) -> None:
        self.settings = settings
        self.sink = sink
        self.backoff = Backoff(settings.retry_initial_backoff_ms / 1000, settings.retry_max_backoff_ms / 1000)
        self.topics = {
            name: settings.topic(name)
            for name in (
                "postprocessed",
                "projected",
                "ledger",
                "verdicts",
                "violations",
                "audit",
                "dead-letters",
            )
        }

    @staticmethod
    def key_for(run_id: Any, record: Record) -> bytes | None:
        """Outputs are keyed by run id; without a valid one, by the consumed record's own key."""
        return run_id.encode("utf-8") if is_valid_id(run_id) else record.key

    def out(self, topic: str, key: bytes | None, value: Any) -> Outbound:
        """An outbound message to one of the SPEC's topics (by short name)."""
        return Outbound(self.topics[topic], key, value if isinstance(value, bytes) else json.dumps(value))

    def audit(
        self,
        record: Record,
        origin: Origin | None,
        *,
        run_id: str | None,
        tool_call_id: str | None,
        fields: dict[str, Any],
        station: Station | None = None,
        event: str | None = None,
    ) -> Outbound:
        """The audit record of this station (or of the dead-letter station) for one consumed record."""
        station = station or self.station
        value = audit_record(
            station=station,
            event=event or event_id(station, origin or record.coordinates),
            run_id=run_id if is_valid_id(run_id) else None,
            tool_call_id=tool_call_id if is_valid_id(tool_call_id) else None,
            origin=origin,
            source={"topic": record.topic, "partition": record.partition, "offset": record.offset},
            fields=fields,
        )
        return self.out("audit", self.key_for(run_id, record), value)

    def reject(self, record: Record, origin: Origin | None, rejection: Rejection) -> list[Outbound]:
        """One dead letter for a rejected record, and its dead-letter audit record."""
        letter = dead_letter(
            rejection,
            station=self.station,
            origin=origin,
            source=record.coordinates,
            key=record.key,
            value=record.value,
            max_value_bytes=self.settings.dead_letters.dead_letter_max_value_bytes,
        )
        log.warning(
            "%s: %s dead-lettered %s: %s", record.where, self.station, rejection["reason"], rejection["error"]
        )
        key = self.key_for(rejection["run_id"], record)
        return [
            self.out("dead-letters", key, letter),
            self.audit(
                record,
                origin,
                run_id=rejection["run_id"],
                tool_call_id=rejection["tool_call_id"],
                fields={"reason": rejection["reason"], "error": rejection["error"], "station": self.station},
                station=Station.DEAD_LETTER,
                event=letter["event_id"],
            ),
        ]

    async def deliver(self, messages: Sequence[Outbound]) -> None:
        """Send every message of the batch; hold and retry while Kafka is unavailable."""
        if messages:
            await hold_until_done(
                lambda: self.sink.send_all(messages),
                what=f"{self.station}: sending {len(messages)} messages",
                backoff=self.backoff,
            )

    async def handle(self, records: Sequence[Record]) -> None:
        """Process one batch; returns only when all its effects are done."""
        raise NotImplementedError
