"""The labelled review sets, judged: what the guard's review of claims makes of drafts people labelled.

`tests/data/review-set/` is the product's set (200 drafts, `LABELS.md` is the policy they were labelled
from); `tests/data/review-set-own/` is the project's own (175 drafts over ten other incidents, written
apart from the rules and labelled from LABELS.md alone); `tests/data/review-set-blind/` (120 drafts over
eight more) was written by someone who read neither the rules nor the other sets. Each holds
`ledger.jsonl` (the entries the drafts cite), `drafts.jsonl` and `labels.jsonl` (`run_id, draft_id,
label, category, unsupported, why`).

:func:`score` runs every draft through the guard station exactly as ``evidence-chain verify`` does
(offline, the ledger from the file) and compares each verdict with its label: a GROUNDED draft should
PASS, an UNGROUNDED one should not. `tests/stations/test_review_set.py` holds the figures;
`benchmarks/review_score.py` (``make bench``) prints them by category into BENCHMARKS.md.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from models.limits import GuardSettings
from streams import codec
from streams.client.repair import repair_prompt
from tests.support import memory_ledger, verdict_of

DATA = Path(__file__).resolve().parent / "data"
SETS = {
    "review-set": DATA / "review-set",
    "review-set-own": DATA / "review-set-own",
    "review-set-blind": DATA / "review-set-blind",
}
"""The labelled sets by name: the product's; the project's own, written apart from the rules; and a third,
written blind (its author read neither the rules nor the other sets), which found what the first two did
not and is kept to catch a rule that fits the others too closely."""


@dataclass
class Judged:
    """One labelled draft and its verdict."""

    label: dict[str, Any]
    verdict: dict[str, Any]

    @property
    def wrong(self) -> bool:
        """A GROUNDED draft refused (a false REJECT), or an UNGROUNDED one passed (a miss)."""
        passed = self.verdict["verdict"] == "PASS"
        return passed if self.label["label"] == "UNGROUNDED" else not passed


@dataclass
class Score:
    """A set's verdicts against its labels."""

    name: str
    judged: list[Judged] = field(default_factory=list)

    def of(self, label: str) -> list[Judged]:
        return [j for j in self.judged if j.label["label"] == label]

    @property
    def false_rejects(self) -> list[Judged]:
        return [j for j in self.of("GROUNDED") if j.wrong]

    @property
    def misses(self) -> list[Judged]:
        return [j for j in self.of("UNGROUNDED") if j.wrong]

    def by_category(self) -> dict[tuple[str, str], tuple[int, list[str]]]:
        """(label, category) → (drafts, the ids judged wrongly)."""
        out: dict[tuple[str, str], tuple[int, list[str]]] = {}
        groups: dict[tuple[str, str], list[Judged]] = defaultdict(list)
        for j in self.judged:
            groups[(j.label["label"], j.label["category"])].append(j)
        for key, items in sorted(groups.items()):
            out[key] = (len(items), [j.label["draft_id"] for j in items if j.wrong])
        return out


def lines(path: Path) -> Iterator[dict[str, Any]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def score(name: str, guard: GuardSettings | None = None) -> Score:
    """The verdicts of set ``name`` (``review-set`` or ``review-set-own``) against its labels."""
    folder = SETS[name]
    ledger = memory_ledger(lines(folder / "ledger.jsonl"))
    labels = {(row["run_id"], row["draft_id"]): row for row in lines(folder / "labels.jsonl")}
    out = Score(name)
    for draft in lines(folder / "drafts.jsonl"):
        verdict = verdict_of(codec.dumps(draft), ledger, guard or GuardSettings())
        out.judged.append(Judged(labels[(draft["run_id"], draft["draft_id"])], dict(verdict)))
    return out


_NAMED = re.compile(r'(?:number|identifier|quotation) ("(?:[^"\\]|\\.)*")')


def named(verdict: dict[str, Any]) -> list[str]:
    """The specifics a verdict's review violations name, as the draft wrote them (an elided one without
    its ellipsis)."""
    out = []
    for violation in verdict["violations"]:
        match = _NAMED.match(violation["message"])
        if match is not None and violation["code"].startswith("CLAIM_"):
            out.append(json.loads(match.group(1)).rstrip("…"))
    return out


def names_as_written(judged: Judged, language: str = "en") -> list[str]:
    """The unsupported specifics of a refused UNGROUNDED draft (its label's) that its repair prompt does
    not name as the draft wrote them: each must be one a violation names — the same words, or one holding
    the other (``12 restarts`` in ``12 restarts per hour``; a long quotation cut at 80 characters)."""
    prompt = repair_prompt(judged.verdict, language) or ""  # type: ignore[arg-type]
    shown = named(judged.verdict)
    missing = []
    for specific in judged.label["unsupported"]:
        wanted = _bare(specific)
        found = [s for s in shown if s and (_bare(s) in wanted or wanted in _bare(s))]
        escaped = [json.dumps(s, ensure_ascii=False)[1:-1] for s in found]
        if not found or not any(e[:60] in prompt or _escaped_invisible(e)[:60] in prompt for e in escaped):
            missing.append(specific)
    return missing


def _bare(text: str) -> str:
    return "".join(c for c in text if not c.isspace() and c not in "“”「」『』\"'‘’«»《》`")


def _escaped_invisible(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" if not c.isprintable() else c for c in text)
