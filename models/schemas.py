"""The JSON Schemas (draft 2020-12) of the topic values, generated from the models (SPEC 1-5).

``evidence-chain schemas`` writes them to ``docs/schemas/<topic>.schema.json``; ``docs/contracts.md``
says how consumers may rely on them. The two inputs (``raw-hits``, ``diagnosis-drafts``) are open, as
their readers are tolerant (unknown fields are ignored). Every value the project produces is closed:
each object it builds has ``additionalProperties: false``, so a contract test catches a field the
code emits but the model does not declare. Only what is open by nature stays open: py-rag's
``retrieval_trace`` and grade, echoed as received. An audit record is a union by ``station``
(:mod:`models.audit`), each branch with its station's figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter

from models.audit import AuditRecord
from models.draft import DiagnosisDraft
from models.events import DeadLetter
from models.ledger import LedgerEntry
from models.lookup import FailedLookup, LookupResult
from models.projection import ProjectedEvent, RagToolResult
from models.rag import RawHitsRecord
from models.semantic import JudgementEvent, SemanticReviewEvent
from models.verdict import ReportEvent, Verdict, ViolationEvent
from models.vocab import Topic

DIALECT = "https://json-schema.org/draft/2020-12/schema"
"""``$schema`` of every file."""

ID_PREFIX = "urn:evidence-chain:schema:"
"""``$id`` of a topic's schema is this plus the topic's unprefixed name: a name, not a location."""

_KEY = "Kafka key: the run_id (ASCII)"
_KEY_OUT = f"{_KEY}; without a valid run_id, the consumed record's own key."
_ENVELOPE = (
    "Every produced event carries event_id (drop repeats by it), origin and source_timestamp; "
    "no wall-clock time, so a re-delivery repeats the bytes."
)


@dataclass(frozen=True, slots=True)
class TopicValue:
    """What one topic carries: the model of its value and how its schema is written."""

    shape: Any
    """The TypedDict (or union of them) of the value."""
    description: str
    produced: bool = True
    """Produced by the project: the schema is closed. Inputs are open (tolerant reader)."""
    embedded: Mapping[str, Any] = field(default_factory=dict)
    """String fields that hold JSON text of a model (``contentMediaType``/``contentSchema``)."""


TOPIC_VALUES: dict[Topic, TopicValue] = {
    Topic.RAW_HITS: TopicValue(
        RawHitsRecord,
        "A py-rag answer to one tool call, written by the agent harness (SPEC 2). "
        f"{_KEY}, partitioned with Kafka's default murmur2 partitioner. Unknown fields anywhere are "
        "ignored. Bounds this schema cannot express: the value is at most max_message_bytes (default "
        "1 MiB, else OVERSIZED), strict UTF-8 JSON (no NaN/Infinity, no number overflowing a double), "
        "and no value is nested more than 64 arrays/objects deep, unknown fields included (else "
        "SCHEMA_VIOLATION). A record this schema rejects is dead-lettered, and a FAILED ledger entry is "
        "written when its ids are valid.",
        produced=False,
    ),
    Topic.POSTPROCESSED: TopicValue(
        LookupResult | FailedLookup,
        "The LookupResult of one raw-hits record (SPEC 3.4): status OK with the governed evidence, "
        f"or status FAILED with the ids and the dead-letter reason only. {_KEY_OUT} {_ENVELOPE}",
    ),
    Topic.PROJECTED: TopicValue(
        ProjectedEvent,
        "The frozen agent projection of one lookup (SPEC 3.5): the RagToolResult's canonical bytes as "
        "a string (contentSchema: RagToolResult, closed at every level) and their SHA-256; FAILED "
        f"values carry no projection. {_KEY_OUT} {_ENVELOPE}",
        embedded={"projection": RagToolResult},
    ),
    Topic.LEDGER: TopicValue(
        LedgerEntry,
        "A write-once ledger entry as stored in Redis, for WRITTEN and DUPLICATE writes alike (SPEC "
        "3.6): the durable, replayable record of what each agent was shown; not compacted. "
        f"{_KEY_OUT} {_ENVELOPE}",
        embedded={"projection": RagToolResult},
    ),
    Topic.DIAGNOSIS_DRAFTS: TopicValue(
        DiagnosisDraft,
        "An agent's diagnosis draft, written by the agent harness (SPEC 4). "
        f"{_KEY}, partitioned with Kafka's default murmur2 partitioner. The guard judges every "
        "record: this schema is what it can parse; a draft it rejects gets a REJECT or FALLBACK "
        "verdict with DRAFT_UNPARSABLE, never a dead letter. Unknown fields are ignored. Bounds this "
        "schema cannot express: at most max_draft_bytes (default 256 KiB) and nested at most 64 "
        "levels deep; at most 100 items in analysis or action_plan, 50 entries in one id list and "
        "50 distinct tool calls cited (defaults; more is DRAFT_TOO_LARGE).",
        produced=False,
    ),
    Topic.VERDICTS: TopicValue(
        Verdict,
        f"The guard's verdict on one draft, keys in the order of 'required' (SPEC 4). {_KEY_OUT} {_ENVELOPE}",
    ),
    Topic.VIOLATIONS: TopicValue(
        ViolationEvent,
        "One event per violation listed in a verdict; event_id is the verdict's plus '#<index>' "
        f"(SPEC 4). {_KEY_OUT} {_ENVELOPE}",
    ),
    Topic.REPORTS: TopicValue(
        ReportEvent,
        "What may leave the chain (SPEC 4.3): one event per PASS or FALLBACK verdict, none for a REJECT. "
        "report is a PASS draft's reviewed fields and nothing else (an unknown field of the draft never "
        "rides along), or the FALLBACK's fixed report. event_id is 'publish:' plus the draft record's "
        "coordinates (the verdict's id with 'publish' for 'guard'); verdict_event_id names the verdict. "
        "Produced in the verdict's batch; signed when the guard signs (netstrings "
        "evidence-chain/report/v1 over the ids and the SHA-256 of report's compact JSON). Downstream "
        f"systems read this topic, never diagnosis-drafts. {_KEY_OUT} {_ENVELOPE}",
    ),
    Topic.SEMANTIC_REVIEW: TopicValue(
        SemanticReviewEvent,
        "A draft that passed the guard's checks A-D, handed to the semantic review (SPEC 4.4; only with "
        "EC_SEMANTIC__MODE advise or enforce): the guard's PASS verdict, the draft's reviewed fields, "
        "the exact projection text of each cited tool call, and what the guard's claim on the draft's "
        "(run_id, draft_id, attempt) said. Internal: only the semantic agent reads it. event_id is "
        f"'semantic-review:' plus the draft record's coordinates. {_KEY_OUT} {_ENVELOPE}",
    ),
    Topic.JUDGEMENTS: TopicValue(
        JudgementEvent,
        "The semantic judge's answer about one handed-over draft (SPEC 4.4): what it was asked (case: "
        "the claims and the evidence each cites, in the prompt version's words), of which model, the "
        "digest of both, its raw answer and the label, evidence and reason it gave each claim "
        "(NOT_ASKED: over the characters-per-draft cap, no call; or a case the judge declined, 400, "
        "413 or 422). A replay, a rebuild or an auditor "
        "reads this and calls no model. event_id is 'semantic:' plus the draft record's coordinates; "
        "verdict_event_id names the draft's verdict. Signed when the guard signs (netstrings "
        f"evidence-chain/judgement/v1). {_KEY_OUT} {_ENVELOPE}",
    ),
    Topic.AUDIT: TopicValue(
        AuditRecord,
        "One record per station per consumed record, and one per dead letter (SPEC 5). processed_at "
        "is the only wall-clock field of any topic, so a repeat differs from the first record there "
        f"(and in a ledger outcome). {_KEY_OUT}",
    ),
    Topic.DEAD_LETTERS: TopicValue(
        DeadLetter,
        "A record a station could not process, with its original bytes and where to find them "
        "(SPEC 5). The Kafka headers name the original record and the reason (kafka_dlt-*, ec-*; "
        f"see docs/asyncapi.yaml). {_KEY_OUT} {_ENVELOPE}",
    ),
}
"""Every topic's value, by topic."""


def schema_file(topic: Topic) -> str:
    """The file name of a topic's schema: its unprefixed name plus ``.schema.json``."""
    return f"{topic.value}.schema.json"


def schema_id(topic: Topic) -> str:
    """The ``$id`` of a topic's schema."""
    return f"{ID_PREFIX}{topic.value}"


_SCHEMA_MAPS = ("properties", "$defs")
"""Keywords whose value maps names to subschemas (a field may be named like a keyword)."""


def _close(schema: Any) -> None:
    """``additionalProperties: false`` on every object that declares properties (every TypedDict).

    A ``dict[str, Any]`` or ``Any`` (py-rag's trace) declares none and stays open.
    """
    if isinstance(schema, list):
        for item in schema:
            _close(item)
        return
    if not isinstance(schema, dict):
        return
    if "properties" in schema:
        schema.setdefault("additionalProperties", False)
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            for sub in value.values():
                _close(sub)
        else:
            _close(value)


def _asyncapi_discriminator(schema: dict[str, Any]) -> None:
    """A union by a property (the audit record's ``station``) named as AsyncAPI's Schema Object names it,
    by the property's name: the parser refuses pydantic's OpenAPI form (``{propertyName, mapping}``). A
    JSON Schema validator reads the ``oneOf``, whose branches each hold the property to one ``const``."""
    found = schema.get("discriminator")
    if isinstance(found, dict):
        schema["discriminator"] = found["propertyName"]


def _generate(shape: Any, produced: bool) -> dict[str, Any]:
    schema = TypeAdapter(shape).json_schema()
    _asyncapi_discriminator(schema)
    if produced:
        _close(schema)
    return schema


def _merge_defs(into: dict[str, Any], defs: Mapping[str, Any]) -> None:
    for name, definition in defs.items():
        if into.setdefault(name, definition) != definition:
            raise ValueError(f"two different $defs named {name!r}")


def _embed(schema: dict[str, Any], name: str, shape: Any, produced: bool) -> None:
    """Describe the JSON text of string field ``name`` as ``shape`` (a string branch of it, if nullable)."""
    inner = _generate(shape, produced)
    defs = schema.setdefault("$defs", {})
    _merge_defs(defs, inner.pop("$defs", {}))
    title = inner["title"]
    _merge_defs(defs, {title: inner})
    prop = schema["properties"][name]
    branches = [b for b in prop.get("anyOf", [prop]) if b.get("type") == "string"]
    if len(branches) != 1:
        raise ValueError(f"{name} is not a string field")
    branches[0]["contentMediaType"] = "application/json"
    branches[0]["contentSchema"] = {"$ref": f"#/$defs/{title}"}


def topic_schema(topic: Topic) -> dict[str, Any]:
    """The JSON Schema of one topic's value.

    Raises:
        ValueError: the models cannot be combined as declared in :data:`TOPIC_VALUES` (a bug here).
    """
    value = TOPIC_VALUES[topic]
    schema = _generate(value.shape, value.produced)
    for name, shape in value.embedded.items():
        _embed(schema, name, shape, value.produced)
    schema.update(
        {
            "$schema": DIALECT,
            "$id": schema_id(topic),
            "title": f"{topic.value} value",
            "description": value.description,
        }
    )
    return schema
