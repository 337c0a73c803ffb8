"""The semantic review under faults (SPEC 4.4, issue 41): a worker SIGKILLed with judge calls in flight,
and a judge down for a minute in the middle of a flood of drafts (acceptance 3), in enforce mode.

The fake judge never answers twice alike (``vary``: each reason names its call), so a draft judged a
second time after its verdict went out would show as a second, different judgement or verdict. The
checks: every draft gets its one verdict (repeats of a record are byte-identical: at-least-once), every
handed-over draft its one judgement, no report without a judgement behind it, every PASS or FALLBACK
published exactly once (one report per draft by its signed fields), nothing dead-lettered.

Size: acceptance 3's 2,000 drafts (``EC_FAULTS_SEMANTIC_DRAFTS``; about 125 s alone here, of which the
outage is the full 60 s; a smaller number for a quick local loop). ``make bench`` runs 2,000 drafts
through the same station for its throughput (benchmarks/semantic.py).
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

from streams import codec
from tests.faults.support import HookedWorker, Run, fault_env, wait_for
from tests.integration.helpers import load_golden_ledger
from tests.judge import FakeJudge, distinct_drafts, serve
from tests.services import FaultKafka, FaultRedis

OUTAGE_SECONDS = 60.0
DRAFTS = int(os.environ.get("EC_FAULTS_SEMANTIC_DRAFTS", "2000"))


def judged_env(run: Run, port: int, **extra: str) -> dict[str, str]:
    return fault_env(
        run.prefix,
        run.kafka,
        run.redis,
        EC_AGENTS="guard,semantic",
        EC_SEMANTIC__MODE="enforce",
        EC_SEMANTIC__JUDGE_URL=f"http://127.0.0.1:{port}/v1",
        EC_SEMANTIC__JUDGE_MODEL="fake-judge",
        EC_SEMANTIC__MAX_IN_FLIGHT="8",
        EC_SEMANTIC__TIMEOUT_SECONDS="5",
        EC_RETRY_MAX_BACKOFF_MS="2000",
        **extra,
    )


async def count_verdicts(run: Run) -> int:
    values = await run.read("verdicts", until=lambda v: True, wait_seconds=2.0)
    return len({codec.loads(v)["draft_id"] for v in values})


async def wait_all_verdicts(run: Run, count: int, worker: HookedWorker, timeout_s: float = 240) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        worker.supervise()
        if await count_verdicts(run) >= count:
            return
        await asyncio.sleep(1.0)
    raise AssertionError(f"not every draft got its verdict\n{worker.log_tail()}")


async def check_one_of_each(run: Run, drafts: list[bytes]) -> dict[str, Any]:
    """The invariants of the module's docstring; returns the figures for the test's own asserts."""
    wanted = {codec.loads(d)["draft_id"] for d in drafts}
    verdicts = await run.read("verdicts", until=lambda v: len(v) >= len(drafts), settle=2.0)
    judgements = await run.read("judgements", until=lambda v: True, settle=1.0, wait_seconds=5)
    reports = await run.read("reports", until=lambda v: True, settle=1.0, wait_seconds=5)
    letters = await run.read("dead-letters", until=lambda v: True, wait_seconds=2.0)
    by_draft: dict[str, set[bytes]] = defaultdict(set)
    for value in verdicts:
        by_draft[codec.loads(value)["draft_id"]].add(value)
    assert set(by_draft) == wanted, "a draft got no verdict: lost"
    assert all(len(v) == 1 for v in by_draft.values()), "a draft got two different verdicts"
    judged: dict[str, set[bytes]] = defaultdict(set)
    for value in judgements:
        judged[codec.loads(value)["draft_id"]].add(value)
    assert all(len(v) == 1 for v in judged.values()), "a draft was judged twice, differently"
    final = {d: codec.loads(next(iter(v))) for d, v in by_draft.items()}
    publishing = {d for d, v in final.items() if v["verdict"] in ("PASS", "FALLBACK")}
    # every verdict that publishes rests on a judgement (enforce: the guard passes nothing itself)
    assert publishing <= set(judged), "a draft was published unjudged"
    distinct: dict[str, set[bytes]] = defaultdict(set)
    for value in reports:
        event = codec.loads(value)
        distinct[event["draft_id"]].add(codec.dumps({k: v for k, v in event.items() if k != "event_id"}))
    assert set(distinct) == publishing, "a PASS or FALLBACK not published, or a REJECT published"
    assert all(len(v) == 1 for v in distinct.values()), "a draft published twice, differently"
    assert letters == [], "dead-lettered"
    kinds = defaultdict(int)
    for verdict in final.values():
        kinds[verdict["verdict"]] += 1
    return {"kinds": dict(kinds), "reports": len(reports), "judgements": len(judgements)}


async def test_a_worker_sigkilled_with_judge_calls_in_flight_loses_and_repeats_nothing(
    fault_kafka: FaultKafka, fault_redis: FaultRedis, tmp_path: Path
) -> None:
    judge = FakeJudge(latency_seconds=0.4, vary=True)
    runner, port = await serve(judge)
    run = Run(f"f-{uuid.uuid4().hex[:6]}-", fault_kafka.bootstrap, fault_redis.url)
    drafts = distinct_drafts(240, overclaim_every=5, last_attempt_every=7)
    try:
        await run.prepare()
        await load_golden_ledger(run.redis, run.settings.ns)
        await run.publish("diagnosis-drafts", drafts)
        worker = HookedWorker(judged_env(run, port), tmp_path / "worker.log").start()
        try:
            for _ in range(2):
                answered = judge.answered
                await wait_for(
                    lambda a=answered: judge.answered >= a + 40 and judge.in_flight > 0, worker, "calls"
                )
                in_flight = judge.in_flight
                worker.kill()  # SIGKILL with calls out: their answers go nowhere
                assert in_flight > 0
                worker.start()
            await wait_all_verdicts(run, len(drafts), worker)
            figures = await check_one_of_each(run, drafts)
        finally:
            worker.stop()
        assert worker.exits == [-9, -9], worker.log_tail()
        assert figures["kinds"].keys() >= {"PASS", "REJECT", "FALLBACK"}
        # calls lost in flight were asked again; calls whose judgement was recorded were not
        assert judge.answered >= len(drafts)
    finally:
        await runner.cleanup()


async def test_a_judge_down_for_a_minute_mid_flood_holds_its_drafts_and_publishes_each_once(
    fault_kafka: FaultKafka, fault_redis: FaultRedis, tmp_path: Path
) -> None:
    """Acceptance 3: the judge down for 60 s in the middle of the drafts (enforce): nothing unjudged is
    published, nothing is lost, and once it returns every PASS or FALLBACK is published exactly once."""
    judge = FakeJudge(latency_seconds=0.05, vary=True)
    runner, port = await serve(judge)
    run = Run(f"f-{uuid.uuid4().hex[:6]}-", fault_kafka.bootstrap, fault_redis.url)
    drafts = distinct_drafts(DRAFTS, overclaim_every=6, last_attempt_every=9)
    try:
        await run.prepare()
        await load_golden_ledger(run.redis, run.settings.ns)
        await run.publish("diagnosis-drafts", drafts)
        worker = HookedWorker(judged_env(run, port), tmp_path / "worker.log").start()
        try:
            await wait_for(
                lambda: judge.answered >= len(drafts) // 3, worker, "a third judged", timeout_s=180
            )
            judge.down = True  # 503 to every call, as a server that is restarting
            went_down = time.monotonic()
            before = await count_verdicts(run)
            await asyncio.sleep(OUTAGE_SECONDS / 2)
            during = await count_verdicts(run)
            reports_during = await run.read("reports", until=lambda v: True, wait_seconds=2.0)
            await asyncio.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - went_down)))
            judge.down = False
            assert worker.running, worker.log_tail()  # held, not crashed: 60 s < EC_MAX_HOLD_SECONDS
            await wait_all_verdicts(run, len(drafts), worker)
            figures = await check_one_of_each(run, drafts)
        finally:
            worker.stop()
        # while the judge was down, no more than the batches already judged went out
        assert during - before <= 2 * 100, (before, during)  # at most the batches in flight (EC_BATCH_SIZE)
        judged_by_then = {codec.loads(r)["draft_id"] for r in reports_during}
        assert len(judged_by_then) < len(drafts)
        assert worker.exits == [], worker.log_tail()  # never exited, never restarted
        assert "semantic: judging run" in (tmp_path / "worker.log").read_text()  # it held, and said so
        assert figures["kinds"].keys() >= {"PASS", "REJECT", "FALLBACK"}
    finally:
        await runner.cleanup()
