"""The topology: which station reads which topic and writes which, declared once (SPEC 1).

The app, the Kafka edge, replay, reset and the CLI all read this table; nothing else names a
station's topics. Pure data, no I/O. Besides its own outputs, every station also writes
:data:`COMMON_OUTPUTS` (an audit record per input, a dead letter per rejection).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from models.vocab import Station, Topic


@dataclass(frozen=True, slots=True)
class Wiring:
    """One station's place in the topology."""

    input: Topic
    """The one topic the station consumes."""
    outputs: tuple[Topic, ...]
    """The topics of its own results, the main one first (the next station's input, if any)."""

    @property
    def output(self) -> Topic:
        """The main output: what the next station of the chain consumes."""
        return self.outputs[0]


TOPOLOGY: Mapping[Station, Wiring] = MappingProxyType(
    {
        # The order is the chain's order; the worker starts its agents in it.
        Station.POSTPROCESS: Wiring(Topic.RAW_HITS, (Topic.POSTPROCESSED,)),
        Station.PROJECT: Wiring(Topic.POSTPROCESSED, (Topic.PROJECTED,)),
        Station.LEDGER: Wiring(Topic.PROJECTED, (Topic.LEDGER,)),
        Station.GUARD: Wiring(
            Topic.DIAGNOSIS_DRAFTS,
            (Topic.VERDICTS, Topic.VIOLATIONS, Topic.REPORTS, Topic.SEMANTIC_REVIEW),
        ),
        # issue 41: the drafts the guard hands over (EC_SEMANTIC__MODE advise or enforce) → the judge's
        # answer, and (enforce) the one final verdict of the attempt, its violations and report
        Station.SEMANTIC: Wiring(
            Topic.SEMANTIC_REVIEW, (Topic.JUDGEMENTS, Topic.VERDICTS, Topic.VIOLATIONS, Topic.REPORTS)
        ),
    }
)
"""Station → the topic it reads → the topics it writes."""

COMMON_OUTPUTS: tuple[Topic, ...] = (Topic.AUDIT, Topic.DEAD_LETTERS)
"""Topics every station writes besides its own outputs."""

AUDIT_SINK_INPUTS: tuple[Topic, ...] = (
    Topic.AUDIT,
    Topic.LEDGER,
    Topic.VERDICTS,
    Topic.DIAGNOSIS_DRAFTS,
    Topic.REPORTS,
    Topic.JUDGEMENTS,
)
"""What the audit sink (not a station) consumes: the audit records, and the evidence a run page and a
receipt need after the Redis entries expire — each ledger entry as stored, each verdict, each draft,
each published report (what left the chain for each draft), and each judgement of the semantic review
(what the model said of each claim)."""


def station_reading(topic: Topic) -> Station | None:
    """The station that consumes ``topic``, or None when no station does."""
    return next((station for station, wiring in TOPOLOGY.items() if wiring.input == topic), None)


def chain_from(topic: Topic, through: Station) -> tuple[Station, ...]:
    """The stations a record of ``topic`` passes, each reading the previous one's main output, up to
    and including ``through``; empty when ``through`` is not downstream of ``topic``."""
    stations: list[Station] = []
    station = station_reading(topic)
    while station is not None and station not in stations:
        stations.append(station)
        if station == through:
            return tuple(stations)
        station = station_reading(TOPOLOGY[station].output)
    return ()
