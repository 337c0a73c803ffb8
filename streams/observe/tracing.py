"""Optional OpenTelemetry tracing (``pip install 'evidence-chain[otel]'``, ``EC_TRACING=true``).

Off by default; when off, or when the packages are missing, every call here is a no-op and costs one
attribute check. When on:

- a span per batch (``process <topic>``, with ``messaging.batch.message_count``) and one per record
  (``process <topic>``, kind CONSUMER) with the messaging semantic-convention attributes
  (``messaging.system=kafka``, ``messaging.operation.type=process``, ``messaging.destination.name``,
  ``messaging.destination.partition.id``, ``messaging.kafka.offset``, ``messaging.consumer.group.name``);
- a record's span continues the trace whose W3C ``traceparent`` (and ``tracestate``) the record
  carries in its Kafka headers, and every message made from the record carries its span's context
  on: one trace runs from raw-hits through postprocessed and projected to the ledger event, and
  from a draft to its verdict and violations;
- Redis calls are instrumented (``opentelemetry-instrumentation-redis``).

Spans go to the OTLP/HTTP exporter configured by the standard ``OTEL_*`` variables
(``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_SERVICE_NAME``, ...).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from streams.messages import Output, Record

TRACE_HEADERS = ("traceparent", "tracestate")


class Tracer:
    """Spans for one agent's batches and records; the no-op when ``tracer`` is None."""

    def __init__(self, tracer: Any = None, group: str | None = None) -> None:
        self._tracer = tracer
        self.group = group

    @property
    def enabled(self) -> bool:
        return self._tracer is not None

    @contextlib.contextmanager
    def batch(self, topic: str | None, count: int) -> Iterator[None]:
        if self._tracer is None:
            yield
            return
        attributes = {
            "messaging.system": "kafka",
            "messaging.operation.type": "process",
            "messaging.destination.name": topic,
            "messaging.batch.message_count": count,
        }
        with self._tracer.start_as_current_span(f"process {topic}", attributes=attributes):
            yield

    def records(self, records: Sequence[Record]) -> list[Any]:
        """One started span per record, each continuing the record's own trace (end them with :meth:`end`)."""
        if self._tracer is None:
            return []
        from opentelemetry.propagate import extract
        from opentelemetry.trace import SpanKind

        spans = []
        for record in records:
            carrier = {k: v.decode("latin-1") for k, v in record.headers if k in TRACE_HEADERS}
            attributes: dict[str, str | int | None] = {
                "messaging.system": "kafka",
                "messaging.operation.type": "process",
                "messaging.destination.name": record.topic or "",
                "messaging.destination.partition.id": str(record.partition),
                "messaging.kafka.offset": record.offset,
            }
            if self.group:
                attributes["messaging.consumer.group.name"] = self.group
            spans.append(
                self._tracer.start_span(
                    f"process {record.topic}",
                    context=extract(carrier),
                    kind=SpanKind.CONSUMER,
                    attributes=attributes,
                )
            )
        return spans

    @staticmethod
    def carry(span: Any, messages: list[Output]) -> list[Output]:
        """``messages`` with the span's context in their headers (replacing any the record had)."""
        if span is None:
            return messages
        from opentelemetry.propagate import inject
        from opentelemetry.trace import set_span_in_context

        carrier: dict[str, str] = {}
        inject(carrier, context=set_span_in_context(span))
        added = tuple((k, v.encode("latin-1")) for k, v in carrier.items())
        return [
            replace(m, headers=tuple(h for h in m.headers if h[0] not in TRACE_HEADERS) + added)
            for m in messages
        ]

    @staticmethod
    def end(spans: Sequence[Any], error: BaseException | None = None) -> None:
        for span in spans:
            if error is not None:
                span.record_exception(error)
            span.end()


_installed: Any = None


def tracer_for(enabled: bool, agent: str, group: str) -> Tracer:
    """The tracer of one agent: real when ``enabled`` and OpenTelemetry is installed, else a no-op.

    The first real one installs the SDK's provider with the OTLP exporter and instruments Redis.
    """
    if not enabled:
        return Tracer()
    try:
        from opentelemetry import trace
    except ImportError:  # the extra is not installed: say so once, run without
        import logging

        logging.getLogger(__name__).warning("EC_TRACING=true but opentelemetry is not installed: tracing off")
        return Tracer()
    global _installed
    if _installed is None:
        _installed = _install_provider()
    return Tracer(trace.get_tracer(f"evidence-chain.{agent}"), group)


def _install_provider() -> Any:
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # nobody configured one: ours, exporting OTLP/HTTP
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider = TracerProvider(resource=Resource.create({"service.name": "evidence-chain"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)
    with contextlib.suppress(ImportError):
        from opentelemetry.instrumentation.redis import RedisInstrumentor

        RedisInstrumentor().instrument()
    return provider
