"""A signed run through the real stations, in memory, as the audit sink would receive it.

The bundled sample (``deploy/sample``: run ``run-demo-1``'s three tool calls and two drafts, and
``run-demo-2``) goes postprocess → project → ledger → guard with a signing key; then one more
``raw-hits`` record for ``call_gw`` with other hits, which the ledger refuses (``CONFLICT``): the
agent was shown the first entry. What comes out is what the ``audit``, ``ledger``, ``verdicts``,
``diagnosis-drafts`` and ``reports`` topics would hold, ready for :meth:`AuditStore.apply`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from models.audit import AuditRecord
from models.vocab import Station
from streams import codec
from streams.audit.evidence import Evidence, TopicValue, applied_at, evidence_of
from streams.audit.store import check_record
from streams.settings import Settings
from streams.trust import Signer, generate_key_pair
from tests.streams.conftest import FakeSink, handle, records, run_chain

SAMPLE = Path(__file__).resolve().parents[2] / "deploy" / "sample"
RUN = "run-demo-1"
CONFLICTED = "call_gw"


@dataclass(frozen=True)
class SignedRun:
    """What the topics hold after the run, and the keys it was signed with."""

    settings: Settings
    signer: Signer
    trusted_keys_file: Path
    audit: list[AuditRecord]
    ledger: list[TopicValue]
    verdicts: list[TopicValue]
    drafts: list[TopicValue]
    reports: list[TopicValue]

    def evidence(self) -> Evidence:
        return evidence_of(self.ledger, self.verdicts, self.drafts, applied_at(), 256 * 1024, self.reports)

    def verdict_docs(self) -> list[dict]:
        return [codec.loads(v.value or b"") for v in self.verdicts]


def sample_lines(name: str) -> list[bytes]:
    return [line for line in (SAMPLE / name).read_bytes().splitlines() if line.strip()]


def conflicting_hit() -> bytes:
    """``call_gw`` of run-demo-1 again, with other hits: a different projection for a written key."""
    first = next(codec.loads(line) for line in sample_lines("raw-hits.jsonl") if b'"call_gw"' in line)
    first["response"]["hits"] = first["response"]["hits"][:1]
    first["response"]["hits"][0]["excerpt"] = "a later, different excerpt the agent never saw"
    return codec.dumps(first)


def _values(sink: FakeSink, topic: str) -> list[TopicValue]:
    return [TopicValue(topic, 0, i, m.value) for i, m in enumerate(sink.on(topic))]


async def signed_run(keys_dir: Path, more_drafts: Sequence[bytes] = ()) -> SignedRun:
    """The sample run, signed; ``more_drafts`` are judged after the sample's drafts."""
    signer, private, public = generate_key_pair(keys_dir, "ledger", "ledger")
    # one key signs the entries and the verdicts of this run: trusted in both roles
    public.write_text(f"{signer.trusted_line('ledger')}\n{signer.trusted_line('guard')}\n", encoding="utf-8")
    settings = Settings(topic_prefix="t.", signing_key_file=str(private), trusted_keys_file=str(public))
    sink, ledger = await run_chain(settings, [*sample_lines("raw-hits.jsonl"), conflicting_hit()])
    drafts = [*sample_lines("drafts.jsonl"), *more_drafts]
    await handle(Station.GUARD, settings, sink, records("t.diagnosis-drafts", drafts), ledger)
    return SignedRun(
        settings=settings,
        signer=signer,
        trusted_keys_file=public,
        audit=[check_record(codec.loads(m.value)) for m in sink.on("t.audit")],
        ledger=_values(sink, "t.ledger"),
        verdicts=_values(sink, "t.verdicts"),
        drafts=[TopicValue("t.diagnosis-drafts", 0, i, value) for i, value in enumerate(drafts)],
        reports=_values(sink, "t.reports"),
    )
