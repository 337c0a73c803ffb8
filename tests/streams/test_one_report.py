"""One report per draft (SPEC 4.3, issue 38 item 3), through the guard's batch runner over the memory
ledger (the fake of Redis, with the same write-once claims).

The first draft judged under a ``(run_id, draft_id, attempt)`` owns it: the same bytes sent again
publish nothing new, another draft under the triple publishes nothing (its verdict is emitted as ever,
byte for byte), the owner's own record re-delivered publishes the same bytes again, and a claim that
cannot be taken holds the batch instead of dead-lettering it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from models.vocab import ReportOutcome, Station
from streams import codec
from streams.errors import RedisUnavailable
from streams.ledger.memory import MemoryLedgerStore
from streams.messages import Record
from streams.settings import Settings
from streams.stations.publish import ReportClaim
from streams.worker.runner import BatchRunner, RunnerConfig
from tests.golden import GOLDEN
from tests.streams.conftest import FakeSink, records

TOPIC = "t.diagnosis-drafts"


def golden_ledger() -> MemoryLedgerStore:
    store = MemoryLedgerStore()
    lines = (GOLDEN / "guard" / "ledger.jsonl").read_bytes().splitlines()
    store.load(codec.loads(line) for line in lines if line)
    return store


def draft(name: str = "d-pass", /, **changes: Any) -> bytes:
    """A golden draft, with ``changes`` to its fields."""
    for line in (GOLDEN / "guard" / "drafts.jsonl").read_bytes().splitlines():
        if f'"draft_id":"{name}"'.encode() in line:
            return codec.dumps({**codec.loads(line), **changes})
    raise AssertionError(name)


async def judge(
    settings: Settings, store: MemoryLedgerStore, batch: Sequence[Record], sink: FakeSink | None = None
) -> tuple[FakeSink, list[Any]]:
    sink = sink or FakeSink()
    runner = BatchRunner(Station.GUARD, RunnerConfig.from_settings(settings), sink, store)
    outcomes = await runner.run(list(batch))
    return sink, outcomes


async def test_the_same_draft_sent_again_publishes_nothing_new(settings: Settings) -> None:
    store = golden_ledger()
    raw = draft()
    sink, outcomes = await judge(settings, store, records(TOPIC, [raw, raw]))
    _, later = await judge(settings, store, records(TOPIC, [raw], start=2), sink)
    verdicts = sink.values("t.verdicts")
    assert [v["verdict"] for v in verdicts] == ["PASS"] * 3  # every send is judged and answered
    (report,) = sink.values("t.reports")  # one report, the first record's
    assert report["verdict_event_id"] == verdicts[0]["event_id"]
    claims = [o.audit["report_claim"] for o in (*outcomes, *later)]
    assert claims == [ReportOutcome.OWNED, ReportOutcome.REPEAT, ReportOutcome.REPEAT]
    assert [o.audit["report_event_id"] is None for o in (*outcomes, *later)] == [False, True, True]


async def test_another_draft_under_the_same_triple_is_judged_and_never_published(settings: Settings) -> None:
    first, other = draft(), draft(limitations=["另一份草稿，同一个 draft_id 和 attempt"])
    assert first != other
    store = golden_ledger()
    sink, outcomes = await judge(settings, store, records(TOPIC, [first, other]))
    verdicts = sink.raw("t.verdicts")
    assert len(verdicts) == 2 and [codec.loads(v)["verdict"] for v in verdicts] == ["PASS", "PASS"]
    (report,) = sink.values("t.reports")
    assert report["draft_sha256"] == codec.loads(verdicts[0])["draft_sha256"]
    assert [o.audit["report_claim"] for o in outcomes] == [ReportOutcome.OWNED, ReportOutcome.CONFLICT]
    # the verdicts are the bytes each draft gets alone, on a ledger that never saw the other
    for index, raw in enumerate((first, other)):
        alone, _ = await judge(settings, golden_ledger(), records(TOPIC, [raw], start=index))
        assert alone.raw("t.verdicts") == [verdicts[index]]
        assert len(alone.raw("t.reports")) == 1


async def test_a_rejected_draft_owns_its_triple_too(settings: Settings) -> None:
    """The first draft judged owns the triple, whatever its verdict: a repaired draft sent under the
    same attempt is a conflict (as on the page and in the receipts), so it publishes nothing."""
    store = golden_ledger()
    rejected = draft("d-pass", analysis=[], draft_id="d-x")
    passing = draft("d-pass", draft_id="d-x")
    sink, outcomes = await judge(settings, store, records(TOPIC, [rejected, passing]))
    assert [v["verdict"] for v in sink.values("t.verdicts")] == ["REJECT", "PASS"]
    assert sink.values("t.reports") == []
    assert [o.audit["report_claim"] for o in outcomes] == [ReportOutcome.OWNED, ReportOutcome.CONFLICT]
    # the next attempt is another triple: published
    sink, _ = await judge(
        settings, store, records(TOPIC, [draft("d-pass", draft_id="d-x", attempt=2)], start=2)
    )
    assert [r["attempt"] for r in sink.values("t.reports")] == [2]


async def test_the_owners_record_redelivered_publishes_the_same_bytes_again(settings: Settings) -> None:
    store = golden_ledger()
    fallback = draft("d-pass", analysis=[], draft_id="d-last", attempt=2)  # no attempt left: FALLBACK
    batch = records(TOPIC, [draft(), fallback])
    first, _ = await judge(settings, store, batch)
    again, outcomes = await judge(settings, store, batch)  # at-least-once: the same records again
    assert [r["verdict"] for r in first.values("t.reports")] == ["PASS", "FALLBACK"]
    assert again.raw("t.reports") == first.raw("t.reports")
    assert again.raw("t.verdicts") == first.raw("t.verdicts")
    assert [o.audit["report_claim"] for o in outcomes] == [ReportOutcome.OWNED] * 2


async def test_the_claim_lives_as_long_as_the_ledger(settings: Settings) -> None:
    now = [1_000.0]
    store = MemoryLedgerStore(ttl_seconds=60, clock=lambda: now[0])
    claim = ReportClaim("run-g", "d-1", 1, "ab" * 32, "guard:t:0:1:1")
    other = ReportClaim("run-g", "d-1", 1, "cd" * 32, "guard:t:0:2:1")
    assert await store.claim_reports([claim, other]) == [None, claim.owner]
    now[0] += 61
    assert await store.claim_reports([other]) == [None]


class FlakyClaims(MemoryLedgerStore):
    """The memory ledger whose first ``failures`` claims fail as an unreachable Redis does."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures
        self.claim_calls = 0

    async def claim_reports(self, claims: Sequence[ReportClaim]) -> list[str | None]:
        self.claim_calls += 1
        if self.failures:
            self.failures -= 1
            raise RedisUnavailable("claims: Redis is down")
        return await super().claim_reports(claims)


async def test_redis_down_at_the_claim_holds_the_batch_and_dead_letters_nothing(settings: Settings) -> None:
    store = FlakyClaims(failures=3)
    lines = (GOLDEN / "guard" / "ledger.jsonl").read_bytes().splitlines()
    store.load(codec.loads(line) for line in lines if line)
    sink, outcomes = await judge(settings, store, records(TOPIC, [draft()]))
    assert store.claim_calls == 4
    assert sink.on("t.dead-letters") == []
    assert len(sink.values("t.reports")) == 1
    assert outcomes[0].audit["report_claim"] == ReportOutcome.OWNED
