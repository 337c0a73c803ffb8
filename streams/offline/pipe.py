"""``pipe``: the stations before the ledger on JSON lines, without Kafka; one output line per input line.

The stations run as :func:`~streams.pipeline.chain` runs them for the agents: the very station functions,
the same bytes between them. An offline line has no coordinates, so its outputs carry no event id.

``pipe`` holds at most :func:`pipe_keep_bytes` of one line (twice ``max_message_bytes``): a line up
to that length goes through the stations whole, exactly as the agents see a record; of a longer one
only the first bytes are kept, to find its ids in, and it is ``OVERSIZED`` without being parsed.
"""

from __future__ import annotations

from typing import Any

from models.events import Rejection
from models.vocab import DeadLetterReason, Station
from streams import codec
from streams.envelope import rejection
from streams.messages import Record
from streams.offline.lines import Line, dead_letter_line, rejection_of, top_level_strings
from streams.pipeline import Outcome, Projected, StationRules, chain
from streams.settings import Settings

# Offline, a rejected line prints a dead letter instead of a FAILED LookupResult, so every
# LookupResult printed is status OK; the two envelope fields carry nothing and are left out.
_OFFLINE_LOOKUP_OMITS = ("status", "failure_reason")

_MIN_KEEP_BYTES = 64 * 1024
"""``pipe`` keeps lines up to this long whole even under a smaller ``max_message_bytes``."""

_ID_NAMES = ("run_id", "tool_call_id", "toolCallId")


def pipe_keep_bytes(settings: Settings, source: str = "raw-hits") -> int:
    """The most ``pipe`` keeps of one line: twice ``max_message_bytes`` (at least 64 KiB).

    A LookupResult (``--from lookup``) is a ``postprocessed`` event, which may be as large as the
    topics allow (``topic_max_message_bytes``), so that much of it is kept whole too.
    """
    keep = max(2 * settings.input.max_message_bytes, _MIN_KEEP_BYTES)
    return max(keep, settings.topic_max_message_bytes) if source == "lookup" else keep


def pipe_bounded_line(
    line: Line, settings: Settings, rules: StationRules, *, source: str, emit: str
) -> bytes:
    """The one output line of ``pipe`` for one input line that may have been cut (``rules``: the
    stations' rules, built once for the whole input; ``settings``: the limits a cut line is told of)."""
    if not line.cut:
        return pipe_line(line.value, rules, source=source, emit=emit)
    return dead_letter_line(_oversized(line, settings, source))


def _oversized(line: Line, settings: Settings, source: str) -> Rejection:
    """The rejection of a line too long to keep, its ids read from its first bytes (not parsed whole)."""
    found = top_level_strings(line.value, _ID_NAMES) or {}
    run_id, tool_call_id = found.get("run_id"), found.get("tool_call_id")
    if source == "lookup":
        tool_call_id = tool_call_id or found.get("toolCallId")  # the projector's alias
        error = (
            f"LookupResult is {line.length} bytes, over the {pipe_keep_bytes(settings, source)} bytes pipe "
            "keeps of one line (the topics' max.message.bytes); raise EC_TOPIC_MAX_MESSAGE_BYTES"
        )
    else:  # the words of the postprocess station's own OVERSIZED rejection
        error = (
            f"value is {line.length} bytes, over max_message_bytes={settings.input.max_message_bytes}; "
            "split the response or raise EC_INPUT__MAX_MESSAGE_BYTES"
        )
    return rejection(DeadLetterReason.OVERSIZED, error, run_id, tool_call_id)


def pipe_line(line: bytes, rules: StationRules, *, source: str, emit: str) -> bytes:
    """The one output line of ``pipe`` for one whole input line.

    The stations run as :func:`~streams.pipeline.chain` runs them for the agents, except that the
    chain stops at the first rejection: offline, that rejection is the line printed.
    """
    if source == "lookup":
        stations: tuple[Station, ...] = (Station.PROJECT,)
    elif emit == "lookup":
        stations = (Station.POSTPROCESS,)
    else:
        stations = (Station.POSTPROCESS, Station.PROJECT)
    step = chain(Record.offline(line), rules, stations, through_rejections=False)
    if isinstance(step, Outcome) and step.station == Station.PROJECT:
        return _projection_line(step)
    if emit == "lookup" and isinstance(step, Outcome) and step.rejection is None and step.outputs:
        shown = {k: v for k, v in step.detail.items() if k not in _OFFLINE_LOOKUP_OMITS}
        return codec.dumps_line(shown)
    return dead_letter_line(rejection_of(step))


def _projection_line(step: Any) -> bytes:
    done = step.detail if isinstance(step, Outcome) else None
    if isinstance(done, Projected) and done.projection is not None:
        return done.projection.canonical + b"\n"
    if isinstance(done, Projected) and step.rejection is None and done.event is not None:
        # a FAILED LookupResult: its dead letter was written upstream; say why here too
        event = done.event
        return dead_letter_line(
            rejection(
                event.get("failure_reason") or DeadLetterReason.INTERNAL_ERROR,
                "the LookupResult is FAILED upstream",
                event.get("run_id"),
                event.get("tool_call_id"),
            )
        )
    return dead_letter_line(rejection_of(step))
