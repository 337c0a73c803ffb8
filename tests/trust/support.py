"""What the trust tests share: the golden guard cases, signed here with keys made for the test."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from streams import codec
from streams.offline.verify import load_ledger, verdict_line
from streams.pipeline import StationRules
from streams.settings import Settings
from streams.trust import Signer
from tests.golden import GOLDEN
from tests.support import run_now


def golden_entries() -> list[dict[str, Any]]:
    return [
        codec.loads(line) for line in (GOLDEN / "guard" / "ledger.jsonl").read_bytes().splitlines() if line
    ]


def signed(entry: dict[str, Any], signer: Signer) -> dict[str, Any]:
    return {**entry, **signer.sign_entry(entry)}


def trust_file(tmp_path: Path, *, ledger: Sequence[Signer] = (), guard: Sequence[Signer] = ()) -> str:
    """A trusted keys file (SPEC 3.7): a ``ledger <hex>`` line per ``ledger`` signer, ``guard <hex>`` per
    ``guard`` signer."""
    named = [("ledger", s) for s in ledger] + [("guard", s) for s in guard]
    path = tmp_path / f"trusted-{'-'.join(f'{role}{s.key_id}' for role, s in named)}.keys"
    path.write_text("".join(f"# {s.key_id}\n{s.trusted_line(role)}\n" for role, s in named))  # type: ignore[arg-type]
    return str(path)


def _no_line_skipped(warning: str) -> None:
    raise AssertionError(f"every entry given is a ledger entry, yet: {warning}")


def verdicts(
    tmp_path: Path, entries: list[dict[str, Any]], drafts: list[bytes], **settings: Any
) -> list[dict[str, Any]]:
    ledger_path = tmp_path / "ledger.jsonl"
    ledger_path.write_bytes(b"".join(codec.dumps_line(e) for e in entries))
    ledger = load_ledger(str(ledger_path), warn=_no_line_skipped)
    rules = StationRules.from_settings(Settings(**settings))
    return [codec.loads(run_now(verdict_line(draft, rules, ledger.read_many))) for draft in drafts]


def drafts() -> list[bytes]:
    return [line for line in (GOLDEN / "guard" / "drafts.jsonl").read_bytes().splitlines() if line]


def draft(draft_id: str) -> bytes:
    return next(d for d in drafts() if f'"draft_id":"{draft_id}"'.encode() in d.replace(b" ", b""))


def report_event(signer: Signer | None, **fields: Any) -> dict[str, Any]:
    """A PASS ``reports`` event of run ``run-A``'s draft ``d-1`` attempt 1 as the guard writes it (its
    ``event_id`` at its verdict's coordinates), with ``fields`` changed, signed by ``signer`` (or not)."""
    event: dict[str, Any] = {
        "event_id": "publish:t.diagnosis-drafts:0:7:1",
        "origin": {"topic": "t.diagnosis-drafts", "partition": 0, "offset": 7, "timestamp": 1},
        "run_id": "run-A",
        "draft_id": "d-1",
        "attempt": 1,
        "verdict": "PASS",
        "verdict_event_id": "guard:t.diagnosis-drafts:0:7:1",
        "draft_sha256": "ab" * 32,
        "report": {
            "analysis": [],
            "conclusion": {"content": "ok", "based_on_analysis_ids": []},
            "action_plan": [],
            "limitations": ["x"],
        },
        "source_timestamp": 1,
    } | fields
    if signer is not None:
        event["signature"] = signer.sign_report(event)
    return event
