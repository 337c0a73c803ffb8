"""The topic contracts: the committed JSON Schemas and AsyncAPI document against the code that emits.

The golden cases run through the station functions the agents call (``streams.pipeline``), as if
consumed from Kafka, and every message each topic gets (outputs, dead letters and their headers,
audit records) must satisfy that topic's committed schema; a message that breaks it must be caught;
and the committed files must be what ``evidence-chain schemas`` writes (no drift).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from models.limits import (
    SemanticSettings,
)
from models.schemas import DIALECT, TOPIC_VALUES, schema_file, schema_id
from models.vocab import DeadLetterReason, Station, Topic, ViolationCode
from streams import codec
from streams.cli import main
from streams.ledger.memory import MemoryLedgerStore
from streams.messages import Output, Record
from streams.pipeline import (
    Outcome,
    PendingJudge,
    PendingRead,
    StationRules,
    emissions,
    finish_judge,
    finish_read,
    run_station,
)
from streams.settings import Settings
from tests.contracts import ASYNCAPI, SCHEMAS, schema_of, validate, validate_dead_letter_headers
from tests.golden import GOLDEN
from tests.stations.builders import rules
from tests.stations.test_semantic import judged as judgement
from tests.support import memory_ledger, settle

# The SPEC's defaults, spelled out so no EC_* variable in the environment can change a case.
RULES = rules()
PROCESSED_AT = "2026-01-01T00:00:00.000+00:00"
INPUTS = (Topic.RAW_HITS, Topic.DIAGNOSIS_DRAFTS)
PRODUCED = tuple(topic for topic in Topic if topic not in INPUTS)


def lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    return data.removesuffix(b"\n").split(b"\n") if data else []


# -- (a) the schema files -----------------------------------------------------------------------


def test_one_schema_file_per_topic() -> None:
    assert sorted(p.name for p in SCHEMAS.iterdir()) == sorted(schema_file(t) for t in Topic)


@pytest.mark.parametrize("topic", list(Topic))
def test_schema_is_valid_2020_12(topic: Topic) -> None:
    schema = schema_of(topic)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == DIALECT
    assert schema["$id"] == schema_id(topic)
    assert schema["title"] and schema["description"]


def objects(schema: Any, path: str = "$") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every subschema that declares properties, with where it is."""
    if isinstance(schema, dict):
        if "properties" in schema:
            yield path, schema
        for key, value in schema.items():
            yield from objects(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from objects(value, f"{path}/{index}")


def test_the_frozen_projection_is_closed_at_every_level() -> None:
    schema = schema_of(Topic.PROJECTED)
    found = dict(objects(schema))
    assert {"$/$defs/RagToolResult", "$/$defs/EvidenceItem", "$/$defs/Origin", "$"} <= set(found)
    assert [where for where, obj in found.items() if obj.get("additionalProperties") is not False] == []
    # and nothing in it is an object without declared properties (which would be open)
    assert '"additionalProperties": true' not in (SCHEMAS / schema_file(Topic.PROJECTED)).read_text()


@pytest.mark.parametrize("topic", PRODUCED)
def test_produced_values_are_closed(topic: Topic) -> None:
    assert [w for w, obj in objects(schema_of(topic)) if obj.get("additionalProperties") is not False] == []


@pytest.mark.parametrize("topic", INPUTS)
def test_inputs_are_open(topic: Topic) -> None:
    """Tolerant readers (SPEC 2): unknown fields are ignored, so the input schemas allow them."""
    assert [w for w, obj in objects(schema_of(topic)) if obj.get("additionalProperties") is False] == []
    assert TOPIC_VALUES[topic].produced is False


# -- (b) the golden cases through the stations, as consumed from Kafka ---------------------------


class Bus:
    """Every message the stations produce, and a consumed Record for each, offsets counted per topic."""

    def __init__(self) -> None:
        self.messages: list[Output] = []
        self.offsets: dict[str, int] = {}

    def record(self, topic: Topic, value: bytes, key: bytes | None = None) -> Record:
        offset = self.offsets.get(topic, 0)
        self.offsets[topic] = offset + 1
        return Record(str(topic), 0, offset, 1_767_225_600_000 + offset, key, value)

    def emit(self, outcome: Outcome[Any], record: Record) -> list[Output]:
        produced = emissions(outcome, record, RULES, PROCESSED_AT)
        self.messages += produced
        return produced


def main_output(produced: list[Output], topic: Topic) -> list[Output]:
    return [o for o in produced if o.topic == topic]


def through_ledger(bus: Bus, store: MemoryLedgerStore, projected: list[Output]) -> None:
    for message in projected:
        record = bus.record(Topic.PROJECTED, message.value, message.key)
        bus.emit(settle(Station.LEDGER, record, RULES, store), record)


def through_projector(bus: Bus, lookups: list[Output]) -> list[Output]:
    projected: list[Output] = []
    for message in lookups:
        record = bus.record(Topic.POSTPROCESSED, message.value, message.key)
        step = run_station(Station.PROJECT, record, RULES)
        assert isinstance(step, Outcome)
        projected += main_output(bus.emit(step, record), Topic.PROJECTED)
    return projected


@pytest.fixture(scope="module")
def bus() -> Bus:
    """The whole golden set through all four stations, then again (re-delivery: DUPLICATE), then a
    changed projection for an existing key (LEDGER_CONFLICT)."""
    bus = Bus()
    store = MemoryLedgerStore()
    raw_hits = lines(GOLDEN / "pipe" / "input.jsonl")
    for _ in range(2):
        lookups: list[Output] = []
        for raw in raw_hits:
            record = bus.record(Topic.RAW_HITS, raw, b"golden")
            step = run_station(Station.POSTPROCESS, record, RULES)
            assert isinstance(step, Outcome)
            lookups += main_output(bus.emit(step, record), Topic.POSTPROCESSED)
        through_ledger(bus, store, through_projector(bus, lookups))
    fed = [Output(Topic.POSTPROCESSED, None, line) for line in lines(GOLDEN / "project" / "input.jsonl")]
    through_ledger(bus, store, through_projector(bus, fed))

    changed = codec.loads(raw_hits[0])
    changed["response"]["query"] += " (changed)"
    record = bus.record(Topic.RAW_HITS, codec.dumps(changed), None)
    step = run_station(Station.POSTPROCESS, record, RULES)
    assert isinstance(step, Outcome)
    through_ledger(
        bus, store, through_projector(bus, main_output(bus.emit(step, record), Topic.POSTPROCESSED))
    )

    ledger = memory_ledger(codec.loads(line) for line in lines(GOLDEN / "guard" / "ledger.jsonl"))
    for raw in lines(GOLDEN / "guard" / "drafts.jsonl"):
        record = bus.record(Topic.DIAGNOSIS_DRAFTS, raw, b"golden")
        step = run_station(Station.GUARD, record, RULES)
        assert isinstance(step, PendingRead)
        bus.emit(finish_read(step, ledger.read_now(list(step.keys)), record), record)
    # the semantic review on (SPEC 4.4): the PASS drafts handed over and judged, one claim found, and one
    # draft over the characters cap (NOT_ASKED)
    for index, semantic in enumerate(
        [
            SemanticSettings(mode="enforce", judge_model="m"),
            SemanticSettings(mode="advise", judge_model="m", max_chars_per_draft=10),
        ]
    ):
        config = StationRules.from_settings(Settings(semantic=semantic))
        for raw in lines(GOLDEN / "guard" / "drafts.jsonl"):
            record = bus.record(Topic.DIAGNOSIS_DRAFTS, raw, b"golden")
            step = run_station(Station.GUARD, record, config)
            assert isinstance(step, PendingRead)
            produced = bus.emit(finish_read(step, ledger.read_now(list(step.keys)), record), record)
            for handed in main_output(produced, Topic.SEMANTIC_REVIEW):
                record = bus.record(Topic.SEMANTIC_REVIEW, handed.value, handed.key)
                judging = run_station(Station.SEMANTIC, record, config)
                assert isinstance(judging, PendingJudge)
                found = (
                    judgement(judging, {"conclusion.content": "unsupported"}) if judging.plan.asked else None
                )
                bus.emit(finish_judge(judging, found, index == 0, record), record)
    return bus


def values(bus: Bus, topic: Topic) -> list[dict[str, Any]]:
    return [codec.loads(m.value) for m in bus.messages if m.topic == topic]


def test_the_golden_run_reaches_every_kind_of_message(bus: Bus) -> None:
    """So the next test checks every shape, not only the happy one."""
    assert {v["status"] for v in values(bus, Topic.POSTPROCESSED)} == {"OK", "FAILED"}
    assert {v["status"] for v in values(bus, Topic.PROJECTED)} == {"OK", "FAILED"}
    assert {v["status"] for v in values(bus, Topic.LEDGER)} == {"READY", "FAILED"}
    assert {v["verdict"] for v in values(bus, Topic.VERDICTS)} == {"PASS", "REJECT", "FALLBACK"}
    assert values(bus, Topic.VIOLATIONS)
    assert {v["verdict"] for v in values(bus, Topic.REPORTS)} == {"PASS", "FALLBACK"}
    assert {v["mode"] for v in values(bus, Topic.SEMANTIC_REVIEW)} == {"enforce", "advise"}
    assert {v["status"] for v in values(bus, Topic.JUDGEMENTS)} == {"JUDGED", "NOT_ASKED"}
    assert {v["station"] for v in values(bus, Topic.AUDIT)} == set(Station)
    assert {v["fields"].get("outcome") for v in values(bus, Topic.AUDIT) if v["station"] == "ledger"} >= {
        "WRITTEN",
        "DUPLICATE",
        "CONFLICT",
    }
    letters = values(bus, Topic.DEAD_LETTERS)
    assert {v["station"] for v in letters} == {"postprocess", "project", "ledger"}
    assert {v["reason"] for v in letters} >= {
        DeadLetterReason.MALFORMED_JSON,
        DeadLetterReason.INVALID_ID,
        DeadLetterReason.SCHEMA_VIOLATION,
        DeadLetterReason.PROJECTION_BUDGET_EXCEEDED,
        DeadLetterReason.LEDGER_CONFLICT,
    }


@pytest.mark.parametrize("topic", PRODUCED)
def test_every_golden_message_satisfies_its_topic_schema(topic: Topic, bus: Bus) -> None:
    messages = [m for m in bus.messages if m.topic == topic]
    assert messages
    for message in messages:
        validate(topic, message.value)


def test_every_golden_dead_letter_has_the_declared_headers(bus: Bus) -> None:
    letters = [m for m in bus.messages if m.topic == Topic.DEAD_LETTERS]
    assert letters
    for message in letters:
        validate_dead_letter_headers(message.headers)


def test_every_accepted_golden_raw_hits_record_satisfies_the_input_schema() -> None:
    """And the ones rejected for their shape do not: the schema says what the station accepts."""
    bus = Bus()
    for raw in lines(GOLDEN / "pipe" / "input.jsonl"):
        record = bus.record(Topic.RAW_HITS, raw)
        step = run_station(Station.POSTPROCESS, record, RULES)
        assert isinstance(step, Outcome)
        if step.rejection is None:
            validate(Topic.RAW_HITS, raw)
        else:
            with pytest.raises(AssertionError, match="raw-hits"):
                validate(Topic.RAW_HITS, raw)


def test_every_parsable_golden_draft_satisfies_the_input_schema() -> None:
    """A draft the guard cannot parse (DRAFT_UNPARSABLE, DRAFT_TOO_LARGE) may or may not; one it can, must."""
    ledger = memory_ledger(codec.loads(line) for line in lines(GOLDEN / "guard" / "ledger.jsonl"))
    unparsable = {ViolationCode.DRAFT_UNPARSABLE, ViolationCode.DRAFT_TOO_LARGE}
    checked = 0
    for raw in lines(GOLDEN / "guard" / "drafts.jsonl"):
        record = Record.offline(raw)
        step = run_station(Station.GUARD, record, RULES)
        assert isinstance(step, PendingRead)
        verdict = finish_read(step, ledger.read_now(list(step.keys)), record).detail
        codes = {v["code"] for v in verdict["violations"]}
        if ViolationCode.DRAFT_UNPARSABLE in codes:
            with pytest.raises(AssertionError, match="diagnosis-drafts"):
                validate(Topic.DIAGNOSIS_DRAFTS, raw)
        elif not codes & unparsable:
            validate(Topic.DIAGNOSIS_DRAFTS, raw)
            checked += 1
    assert checked >= 5


# -- (c) a message that breaks its topic's schema is caught --------------------------------------


def first(bus: Bus, topic: Topic, **where: Any) -> dict[str, Any]:
    return next(v for v in values(bus, topic) if all(v.get(k) == w for k, w in where.items()))


def raw_hits_sample(_: Bus) -> dict[str, Any]:
    value: dict[str, Any] = codec.loads(lines(GOLDEN / "pipe" / "input.jsonl")[0])
    return value


def draft_sample(_: Bus) -> dict[str, Any]:
    value: dict[str, Any] = codec.loads(lines(GOLDEN / "guard" / "drafts.jsonl")[0])
    return value


def changed(**fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda value: value.update(fields)


def dropped(name: str) -> Callable[[dict[str, Any]], None]:
    return lambda value: value.pop(name)


Sample = Callable[[Bus], dict[str, Any]]
Breaking = Callable[[dict[str, Any]], None]


def produced(topic: Topic, **where: Any) -> Sample:
    return lambda bus: first(bus, topic, **where)


def smuggled(value: dict[str, Any]) -> None:
    """A field the guard never judged, slipped into a published report (SPEC 4.3)."""
    value["report"]["analysis"][0]["note"] = "not reviewed"


BROKEN: dict[Topic, tuple[Sample, Breaking, str]] = {
    Topic.RAW_HITS: (raw_hits_sample, changed(run_id="run:7f3a"), "$.run_id"),
    Topic.POSTPROCESSED: (produced(Topic.POSTPROCESSED, status="OK"), changed(found="yes"), "$.found"),
    Topic.PROJECTED: (produced(Topic.PROJECTED, status="OK"), changed(score=0.9), "$"),
    Topic.LEDGER: (produced(Topic.LEDGER, status="READY"), changed(status="PENDING"), "$.status"),
    Topic.DIAGNOSIS_DRAFTS: (draft_sample, changed(attempt=1_000_001), "$.attempt"),
    Topic.VERDICTS: (produced(Topic.VERDICTS), dropped("verdict"), "$"),
    Topic.VIOLATIONS: (produced(Topic.VIOLATIONS), changed(code="NOT_A_CODE"), "$.code"),
    Topic.REPORTS: (produced(Topic.REPORTS, verdict="PASS"), smuggled, "$.report.analysis[0]"),
    Topic.SEMANTIC_REVIEW: (produced(Topic.SEMANTIC_REVIEW), changed(mode="off"), "$.mode"),
    Topic.JUDGEMENTS: (produced(Topic.JUDGEMENTS, status="JUDGED"), changed(status="MAYBE"), "$.status"),
    Topic.AUDIT: (produced(Topic.AUDIT), changed(station="elsewhere"), "$.station"),
    Topic.DEAD_LETTERS: (produced(Topic.DEAD_LETTERS), changed(value_encoding="hex"), "$.value_encoding"),
}
"""Per topic: a valid sample, one change that breaks its schema, and where the error must point."""


@pytest.mark.parametrize("topic", list(Topic))
def test_a_message_that_breaks_its_schema_is_caught(topic: Topic, bus: Bus) -> None:
    sample, breaking, path = BROKEN[topic]
    value = sample(bus)
    validate(topic, codec.dumps(value))  # the sample itself is fine
    breaking(value)
    with pytest.raises(AssertionError) as caught:
        validate(topic, codec.dumps(value))
    assert str(caught.value).startswith(f"{topic}: {path}:")


def test_a_projection_with_a_field_outside_the_frozen_contract_is_caught(bus: Bus) -> None:
    value = first(bus, Topic.PROJECTED, status="OK")
    projection = codec.loads(value["projection"])
    projection["evidence"][0]["score"] = 0.9
    value["projection"] = codec.dumps(projection).decode()
    with pytest.raises(AssertionError, match=r"^projected: \$\.projection → \$\.evidence\[0\]: .*'score'"):
        validate(Topic.PROJECTED, codec.dumps(value))


def test_a_ledger_entry_whose_projection_is_not_json_is_caught(bus: Bus) -> None:
    value = first(bus, Topic.LEDGER, status="READY")
    value["projection"] = "{not json"
    with pytest.raises(AssertionError, match=r"^ledger: \$\.projection: not JSON text"):
        validate(Topic.LEDGER, codec.dumps(value))


def test_a_value_that_is_not_json_is_caught() -> None:
    with pytest.raises(AssertionError, match=r"^verdicts: \$: not strict JSON"):
        validate(Topic.VERDICTS, b"{nope")


def test_dead_letter_headers_that_break_the_asyncapi_document_are_caught(bus: Bus) -> None:
    headers = next(m for m in bus.messages if m.topic == Topic.DEAD_LETTERS).headers
    validate_dead_letter_headers(headers)
    with pytest.raises(AssertionError, match="ec-reason"):
        validate_dead_letter_headers([h for h in headers if h[0] != "ec-reason"])
    with pytest.raises(AssertionError, match="not in docs/asyncapi.yaml"):
        validate_dead_letter_headers([*headers, ("x-extra", b"1")])
    short = [(n, v[:2] if n == "kafka_dlt-original-partition" else v) for n, v in headers]
    with pytest.raises(AssertionError, match="kafka_dlt-original-partition"):
        validate_dead_letter_headers(short)


# -- (d) no drift: the committed files are what the command writes -------------------------------


def test_committed_schemas_match_the_models(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schemas", "--out", str(SCHEMAS), "--check"]) == 0, capsys.readouterr().err


def test_check_names_every_file_that_drifted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "schemas"
    shutil.copytree(SCHEMAS, out)
    (out / schema_file(Topic.VERDICTS)).write_text("{}\n")
    (out / schema_file(Topic.AUDIT)).unlink()
    (out / "retired.schema.json").write_text("{}\n")
    assert main(["schemas", "--out", str(out), "--check"]) == 1
    err = capsys.readouterr().err
    assert "verdicts.schema.json (differs)" in err
    assert "audit.schema.json (missing)" in err
    assert "retired.schema.json (not a topic)" in err
    assert "raw-hits.schema.json" not in err


def test_writing_is_deterministic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "schemas"
    assert main(["schemas", "--out", str(out)]) == 0
    assert main(["schemas", "--out", str(out)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{len(Topic)} of {len(Topic)} schemas written to {out}",
        f"0 of {len(Topic)} schemas written to {out}",
    ]
    for path in SCHEMAS.iterdir():
        data = (out / path.name).read_bytes()
        assert data == path.read_bytes()
        assert data.endswith(b"}\n")


# -- the AsyncAPI document names the same topics and files ---------------------------------------


def test_asyncapi_has_one_channel_per_topic_with_its_schema() -> None:
    document = yaml.safe_load(ASYNCAPI.read_text(encoding="utf-8"))
    assert document["asyncapi"] == "3.0.0"
    channels = document["channels"]
    assert sorted(c["address"] for c in channels.values()) == sorted(t.value for t in Topic)
    messages = document["components"]["messages"]
    for channel in channels.values():
        (ref,) = [m["$ref"] for m in channel["messages"].values()]
        message = messages[ref.removeprefix("#/components/messages/")]
        assert message["payload"] == {"$ref": f"./schemas/{schema_file(Topic(channel['address']))}"}
        assert "key" in message["bindings"]["kafka"]


def test_asyncapi_operations_wire_the_agents() -> None:
    document = yaml.safe_load(ASYNCAPI.read_text(encoding="utf-8"))
    address = {f"#/channels/{name}": c["address"] for name, c in document["channels"].items()}
    wiring = {
        (op["tags"][0]["name"], op["action"], address[op["channel"]["$ref"]])
        for op in document["operations"].values()
    }
    receives = {(agent, topic) for agent, action, topic in wiring if action == "receive"}
    assert receives == {
        ("postprocess", "raw-hits"),
        ("project", "postprocessed"),
        ("ledger", "projected"),
        ("guard", "diagnosis-drafts"),
        ("semantic", "semantic-review"),
        ("audit-sink", "audit"),
    }
    sends = {(agent, topic) for agent, action, topic in wiring if action == "send"}
    assert {topic for _, topic in sends} == {t.value for t in PRODUCED}
    for agent in ("postprocess", "project", "ledger", "guard", "semantic"):
        assert {(agent, "audit"), (agent, "dead-letters")} <= sends
