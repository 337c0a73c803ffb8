"""The Redis index rebuilt from its topics (streams.ledger.rebuild): ``ledger rebuild``'s entries and
``ledger rebuild-judgements``' records, against the memory twin of the store.

A recorded judgement is what the semantic station judges a draft from, and then signs as the guard, so
the rebuild records only a judgement that holds (a red team's finding: it recorded whatever the topic
held): with trusted keys one a trusted guard key signed; always one whose digest is that of its model
and case.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from models.semantic import JudgementRecord
from models.vocab import Station, Topic
from streams import codec
from streams.ledger.memory import MemoryLedgerStore
from streams.ledger.rebuild import REFUSED_SHOWN, EntryRestore, JudgementRestore
from streams.messages import Record
from streams.pipeline import PendingJudge, PendingRead, StationRules, finish_judge, run_station
from streams.stations.semantic import case_digest, declined
from streams.trust import Signer
from streams.trust.keys import TrustedKeys
from tests.stations.test_semantic import _settings, guard_record, handed, judged
from tests.support import lookups_from, memory_ledger, run_now
from tests.trust.support import draft, golden_entries

NOW_MS = 1_800_000_000_000


def _record(value: bytes, offset: int = 0, topic: str = "t.judgements") -> Record:
    return Record(topic, 0, offset, NOW_MS, b"run-g", value)


def judgement(
    signer: Signer | None,
    labels: dict[str, str] | None = None,
    keep: Callable[[PendingJudge], JudgementRecord] | None = None,
) -> tuple[dict[str, Any], bytes]:
    """A ``judgements`` event of golden draft d-pass as the semantic station writes it (signed by
    ``signer`` as the guard, or not), and the record the station keeps for it: the judge's answer with
    ``labels``, or what ``keep`` says (a case the judge declined)."""
    rules = StationRules.with_keys(_settings(), signer, None)
    guard_step = run_station(Station.GUARD, guard_record(draft("d-pass")), rules)
    assert isinstance(guard_step, PendingRead)
    outcome = guard_step.finish(lookups_from(memory_ledger(golden_entries()), guard_step.keys))
    step = run_station(Station.SEMANTIC, handed(outcome), rules)
    assert isinstance(step, PendingJudge)
    kept: JudgementRecord = judged(step, labels) if keep is None else keep(step)
    done = finish_judge(step, kept, True, handed(outcome))
    (value,) = [o.value for o in done.outputs if o.topic == Topic.JUDGEMENTS]
    return codec.loads(value), codec.dumps(kept)


@pytest.fixture
def guard() -> tuple[Signer, TrustedKeys]:
    signer = Signer.from_private_key(Ed25519PrivateKey.generate())
    return signer, TrustedKeys.from_hex(guard=[signer.public_hex])


def rebuild(
    store: MemoryLedgerStore, trusted: TrustedKeys | None, *values: bytes, max_chars: int | None = None
) -> tuple[Counter[str], list[str]]:
    """One batch of ``judgements`` values through the rebuild: its counts, and the refusals it names."""
    restore = JudgementRestore(store, trusted, max_chars)
    counts = run_now(restore([_record(value, offset) for offset, value in enumerate(values)]))
    return counts, restore.refused


def recorded(store: MemoryLedgerStore, event: dict[str, Any]) -> bytes | None:
    (found,) = run_now(store.recorded_judgements([(event["run_id"], event["digest"])]))
    return found


def test_a_signed_judgement_is_recorded_as_the_station_keeps_it(guard: tuple[Signer, TrustedKeys]) -> None:
    signer, trusted = guard
    event, kept = judgement(signer, {"conclusion.content": "unsupported"})
    store = MemoryLedgerStore()
    assert rebuild(store, trusted, codec.dumps(event)) == (Counter(recorded=1), [])
    assert recorded(store, event) == kept  # the very bytes the station records when it asks
    assert rebuild(store, trusted, codec.dumps(event)) == (Counter(present=1), [])


def test_a_repeat_in_one_batch_is_present_and_another_record_for_the_case_is_different() -> None:
    """Counted as Redis holds them after the batch: the first of a case recorded, a repeat present, a
    record the first one kept out different (the counts read what was looked up before the batch)."""
    event, _ = judgement(None)
    other = {**event, "answer": event["answer"] + " ", "event_id": "semantic:elsewhere"}
    store = MemoryLedgerStore()
    values = [codec.dumps(event), codec.dumps(event), codec.dumps(other)]
    assert rebuild(store, None, *values) == (Counter(recorded=1, present=1, different=1), [])


def _labels_all_supported(event: dict[str, Any]) -> dict[str, Any]:
    return {**event, "claims": [{**claim, "label": "supported"} for claim in event["claims"]]}


def _answer_all_supported(event: dict[str, Any]) -> dict[str, Any]:
    return {**event, "answer": event["answer"].replace("unsupported", "supported")}


def _unsigned(event: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in event.items() if name != "signature"}


@pytest.mark.parametrize("forge", [_labels_all_supported, _answer_all_supported, _unsigned])
def test_with_trusted_keys_a_judgement_no_trusted_guard_key_signed_is_not_recorded(
    guard: tuple[Signer, TrustedKeys], forge: Any
) -> None:
    """The digest names the case, not the answer: a forged 'all supported' under a genuine case's digest
    would have the station pass the draft, and sign the pass, without asking the judge."""
    signer, trusted = guard
    event, _ = judgement(signer, {"conclusion.content": "unsupported"})
    store = MemoryLedgerStore()
    counts, refused = rebuild(store, trusted, codec.dumps(forge(event)))
    assert counts == Counter(refused=1)
    assert recorded(store, event) is None
    assert [said.partition(": ")[0] for said in refused] == ["t.judgements[0]@0"]
    assert refused[0].startswith("t.judgements[0]@0: not recorded: ")


def test_another_keys_signature_is_not_a_trusted_guard_keys(guard: tuple[Signer, TrustedKeys]) -> None:
    _, trusted = guard
    stranger = Signer.from_private_key(Ed25519PrivateKey.generate())
    event, _ = judgement(stranger)
    store = MemoryLedgerStore()
    assert rebuild(store, trusted, codec.dumps(event))[0] == Counter(refused=1)
    assert recorded(store, event) is None


def test_without_trusted_keys_the_digest_must_still_be_that_of_its_model_and_case() -> None:
    event, kept = judgement(None)
    case = event["case"]
    shown = [{**case["evidence"][0], "text": "something else"}, *case["evidence"][1:]]
    rewritten = {**event, "case": {**case, "evidence": shown}}  # the digest names the case it was asked
    other_model = {**event, "model": "another-model"}
    other_digest = {**event, "digest": case_digest("judge-m", rewritten["case"])}  # of a case not asked
    store = MemoryLedgerStore()
    counts, refused = rebuild(store, None, *(codec.dumps(e) for e in (rewritten, other_model, other_digest)))
    assert counts == Counter(refused=3)
    assert all("digest" in said for said in refused), refused
    assert recorded(store, event) is None
    assert rebuild(store, None, codec.dumps(event)) == (Counter(recorded=1), [])
    assert recorded(store, event) == kept


def test_what_is_not_a_judged_event_is_skipped_and_refusals_are_named_up_to_a_bound() -> None:
    event, _ = judgement(None)
    not_asked = {**event, "status": "NOT_ASKED", "answer": None, "claims": []}
    forged = codec.dumps({**event, "model": "another-model"})
    store = MemoryLedgerStore()
    values = [b"not json", b"[1]", codec.dumps(not_asked), *[forged] * (REFUSED_SHOWN + 5)]
    counts, refused = rebuild(store, None, *values)
    assert counts == Counter(skipped=3, refused=REFUSED_SHOWN + 5)
    assert len(refused) == REFUSED_SHOWN
    assert refused[0].startswith("t.judgements[0]@3: ")


def test_entries_are_restored_with_the_lifetime_they_have_left() -> None:
    store = MemoryLedgerStore(clock=lambda: NOW_MS / 1000)
    live, gone = golden_entries()[:2]
    live = {**live, "written_at": NOW_MS - 1000, "expires_at": NOW_MS + 60_000}
    gone = {**gone, "written_at": NOW_MS - 120_000, "expires_at": NOW_MS - 60_000}
    batch = [_record(codec.dumps(e), i, "t.ledger") for i, e in enumerate((live, gone, {"run_id": 1}))]
    restore = EntryRestore(store, ttl_ms=60_000, clock=lambda: NOW_MS)
    assert run_now(restore(batch)) == Counter(written=1, expired=1, malformed=1)
    assert store.entries[(live["run_id"], live["tool_call_id"])]["expires_at"] == NOW_MS + 60_000
    assert run_now(restore(batch[:1])) == Counter(duplicate=1)


def test_a_case_the_judge_declined_is_restored_so_a_replay_does_not_ask_again(
    guard: tuple[Signer, TrustedKeys],
) -> None:
    """A NOT_ASKED event within the characters cap is a case the judge declined (400, 413, 422): its
    record (no answer) is restored, as the station kept it; over the cap there is none to restore (the
    station never looks such a case up), and one that does not hold is refused like a judged one."""
    signer, trusted = guard
    event, kept = judgement(signer, keep=lambda step: declined(step.plan))
    chars = sum(len(c["text"]) for c in event["case"]["claims"])
    store = MemoryLedgerStore()
    assert rebuild(store, trusted, codec.dumps(event), max_chars=chars - 1) == (Counter(skipped=1), [])
    assert rebuild(store, trusted, codec.dumps(event)) == (Counter(skipped=1), [])  # no cap given
    assert recorded(store, event) is None
    counts, refused = rebuild(store, trusted, codec.dumps(_unsigned(event)), max_chars=48_000)
    assert counts == Counter(refused=1) and recorded(store, event) is None
    assert rebuild(store, trusted, codec.dumps(event), max_chars=48_000) == (Counter(recorded=1), [])
    assert recorded(store, event) == kept  # the very bytes the station records when the judge declines
