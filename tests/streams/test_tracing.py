"""Tracing (the otel extra): one trace from a raw-hits record through postprocessed and projected to
its ledger event, and from a draft to its verdict; the messaging attributes on each record's span;
and nothing at all when tracing is off."""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from models.vocab import Station
from streams import codec
from streams.ledger.memory import MemoryLedgerStore
from streams.messages import Record
from streams.observe.tracing import Tracer, tracer_for
from streams.settings import Settings
from streams.worker.runner import BatchRunner, RunnerConfig
from tests.streams.conftest import FakeSink, Sent
from tests.streams.loop_fakes import RAW

SETTINGS = Settings(topic_prefix="t.")
CONFIG = RunnerConfig.from_settings(SETTINGS)
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE}-00f067aa0ba902b7-01".encode()


def traced() -> tuple[Tracer, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Tracer(provider.get_tracer("test"), group="g"), exporter


def trace_of(message: Sent) -> str:
    parent = dict(message.headers)["traceparent"].decode()
    return parent.split("-")[1]


def consumed(message: Sent, offset: int) -> Record:
    return Record(message.topic, 1, offset, 1_700_000_000_000, message.key, message.value, message.headers)


async def test_one_trace_runs_from_raw_hits_to_the_ledger_event_and_from_a_draft_to_its_verdict() -> None:
    tracer, exporter = traced()
    ledger = MemoryLedgerStore()
    raw = Record(
        "t.raw-hits", 0, 7, 1_700_000_000_000, b"run-golden-1", RAW[0], (("traceparent", TRACEPARENT),)
    )
    post = FakeSink()
    await BatchRunner(Station.POSTPROCESS, CONFIG, post, tracer=tracer).run([raw])
    assert {trace_of(m) for m in post.messages} == {TRACE}  # postprocessed and its audit record
    project = FakeSink()
    await BatchRunner(Station.PROJECT, CONFIG, project, tracer=tracer).run(
        [consumed(post.on("t.postprocessed")[0], 3)]
    )
    written = FakeSink()
    await BatchRunner(Station.LEDGER, CONFIG, written, ledger, tracer=tracer).run(
        [consumed(project.on("t.projected")[0], 5)]
    )
    (event,) = written.on("t.ledger")
    assert trace_of(event) == TRACE and len([h for h in event.headers if h[0] == "traceparent"]) == 1

    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["process t.raw-hits", "process t.postprocessed", "process t.projected"]
    assert {format(s.context.trace_id, "032x") for s in spans} == {TRACE}
    first = spans[0]
    assert first.attributes is not None
    assert first.attributes["messaging.system"] == "kafka"
    assert first.attributes["messaging.operation.type"] == "process"
    assert first.attributes["messaging.destination.partition.id"] == "0"
    assert first.attributes["messaging.kafka.offset"] == 7
    assert first.attributes["messaging.consumer.group.name"] == "g"
    # each hop's span is the child of the one before: the context travelled in the headers
    assert spans[1].parent is not None and spans[1].parent.span_id == first.context.span_id
    assert spans[2].parent is not None and spans[2].parent.span_id == spans[1].context.span_id

    entry = codec.loads(event.value)
    draft = codec.dumps(
        {
            "run_id": entry["run_id"],
            "draft_id": "d1",
            "analysis": [
                {"id": "a1", "kind": "NORMAL", "content": "x", "tool_call_ids": [entry["tool_call_id"]]}
            ],
            "limitations": ["l"],
        }
    )
    other = "0af7651916cd43dd8448eb211c80319c"
    verdicts = FakeSink()
    draft_record = Record(
        "t.diagnosis-drafts",
        0,
        0,
        None,
        None,
        draft,
        (("traceparent", f"00-{other}-b7ad6b7169203331-01".encode()),),
    )
    await BatchRunner(Station.GUARD, CONFIG, verdicts, ledger, tracer=tracer).run([draft_record])
    assert {trace_of(m) for m in verdicts.on("t.verdicts")} == {other}


async def test_off_means_no_headers_and_no_spans() -> None:
    sink = FakeSink()
    runner = BatchRunner(Station.POSTPROCESS, CONFIG, sink, tracer=tracer_for(False, "postprocess", "g"))
    assert runner.tracer.enabled is False
    await runner.run([Record("t.raw-hits", 0, 0, None, None, RAW[0], (("traceparent", TRACEPARENT),))])
    assert all(m.headers == () for m in sink.messages)
