"""Station 6, the EvidenceGuard: check a diagnosis draft against the ledger (SPEC 4).

Pure rules in two steps around one batch read of the ledger: :meth:`EvidenceGuard.plan` parses the
draft and runs the structure checks (A) and says which entries to read; :meth:`EvidenceGuard.judge`
runs the citation (B) and re-read (C) checks on what was read, then the review of claims (D,
:mod:`streams.stations.review`) unless ``guard.review`` is ``off``, and builds the verdict. The edge
does the read in between (at most two Redis round trips), so the same rules run offline and live.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from models.audit import ViolationLink
from models.draft import DIAGNOSIS_DRAFT_ADAPTER, MAX_ATTEMPT, MAX_ID_CHARS, DiagnosisDraft
from models.events import Origin
from models.ids import is_valid_id
from models.limits import GuardSettings
from models.projection import RagToolResult
from models.validation import ContractError, validate
from models.verdict import (
    EvidenceSnapshot,
    FallbackReport,
    Verdict,
    Violation,
    ViolationEvent,
)
from models.vocab import FALLBACK_LIMITATION, AnalysisKind, LedgerStatus, VerdictKind, ViolationCode
from streams import codec
from streams.hashing import sha256_hex
from streams.stations.blank import is_blank
from streams.stations.ledger_view import LedgerLookup
from streams.stations.reread import reread
from streams.stations.review import prepare as prepare_review
from streams.stations.review import review
from streams.trust.keys import Signer, TrustedKeys

Code = ViolationCode
_KINDS = frozenset(AnalysisKind)
_NO_ENTRY = LedgerLookup(None, False)


@dataclass(slots=True)
class GuardPlan:
    """A parsed draft, its structure violations, and the ledger entries it needs."""

    draft_sha256: str
    run_id: str | None
    draft_id: str | None
    attempt: int
    violations: list[Violation] = field(default_factory=list)
    draft: DiagnosisDraft | None = None
    cited: list[str] = field(default_factory=list)
    """Distinct valid tool call ids to read, in first-cited order (empty if none may be checked)."""
    check_citations: bool = False
    """Whether citations are checked at all: the draft parsed and its run_id is valid."""


@dataclass(frozen=True, slots=True)
class _Citation:
    code: ViolationCode | None
    message: str
    result: RagToolResult | None = None
    sha256: str = ""


@dataclass(frozen=True, slots=True)
class _Cited:
    """What B and C found: their violations, which analysis items D reviews, the re-read projections."""

    violations: list[Violation]
    reviewed: list[bool]
    projections: dict[str, RagToolResult]
    digests: dict[str, str]
    """Each re-read projection's ``projection_sha256`` (C checked it against the stored bytes)."""


_ITEM_PATH = re.compile(r"analysis\[(\d+)\](?:\.tool_call_ids\[(\d+)\])?")
MAX_LINKS = 32
"""Most violations linked in one audit record (a hostile draft cannot inflate it; SPEC 4 A.1)."""
MAX_LINKED_IDS = 8


def violation_links(plan: GuardPlan, violations: Sequence[Violation]) -> list[ViolationLink]:
    """The violations with the tool call ids each is about, for the audit trail.

    ``analysis[i].tool_call_ids[j]`` is about that one citation; any other path inside
    ``analysis[i]`` is about the item's citations; a path elsewhere is about none.
    """
    items = list(plan.draft.get("analysis") or []) if plan.draft is not None else []
    out: list[ViolationLink] = []
    for violation in violations[:MAX_LINKS]:
        found = _ITEM_PATH.match(violation["path"])
        ids: list[str] = []
        if found and int(found.group(1)) < len(items) and isinstance(items[int(found.group(1))], dict):
            cited = [c for c in items[int(found.group(1))].get("tool_call_ids") or [] if isinstance(c, str)]
            if found.group(2) is None:
                ids = cited
            elif int(found.group(2)) < len(cited):
                ids = [cited[int(found.group(2))]]
        out.append(
            {"code": violation["code"], "path": violation["path"], "tool_call_ids": ids[:MAX_LINKED_IDS]}
        )
    return out


def _violation(code: ViolationCode, path: str, message: str) -> Violation:
    return {"code": code, "path": path, "message": message}


_MAX_SHOWN = 80


def _shown(value: Any) -> str:
    """A value from the draft as a message quotes it: its ``repr``, cut so no input inflates the verdict."""
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else f"{text[: _MAX_SHOWN - 1]}…"


def _readable(doc: Any) -> tuple[str | None, str | None, int]:
    """What an early-ended check can still read: run_id, draft_id, attempt (SPEC 4)."""
    if not isinstance(doc, dict):
        return None, None, 1
    run_id = doc.get("run_id")
    draft_id = doc.get("draft_id")
    attempt = doc.get("attempt")
    return (
        run_id if isinstance(run_id, str) else None,
        draft_id if isinstance(draft_id, str) and 0 < len(draft_id) <= MAX_ID_CHARS else None,
        _attempt(attempt)
        if isinstance(attempt, int) and not isinstance(attempt, bool) and attempt <= MAX_ATTEMPT
        else 1,
    )


def _attempt(value: int | None) -> int:
    """``attempt`` as the guard counts it: absent, null or below 1 reads as 1."""
    return 1 if value is None or value < 1 else value


class EvidenceGuard:
    """Collects every violation of a draft (except that unparsable or too large ends the check)."""

    def __init__(
        self, settings: GuardSettings, *, trusted: TrustedKeys | None = None, signer: Signer | None = None
    ) -> None:
        self.settings = settings
        self.trusted = trusted
        self.signer = signer
        if settings.review == "enforce":
            prepare_review()  # its one-time tables now, not on the first draft that needs them

    # -- step 1: parse and structure (A) ---------------------------------------------------------

    def plan(self, raw: bytes) -> GuardPlan:
        """Parse the draft's exact bytes and run the structure checks."""
        digest = sha256_hex(raw)
        if len(raw) > self.settings.max_draft_bytes:
            message = f"draft is {len(raw)} bytes, over max_draft_bytes={self.settings.max_draft_bytes}"
            return GuardPlan(digest, None, None, 1, [_violation(Code.DRAFT_TOO_LARGE, "", message)])
        try:
            # A repeated name is not JSON here (SPEC 4 A.1), so such a draft, like any text that is
            # not JSON, gives nothing to read: run_id and draft_id null, attempt 1.
            doc = codec.loads_unique(raw)
        except codec.JSONDecodeError as exc:
            return GuardPlan(
                digest, None, None, 1, [_violation(Code.DRAFT_UNPARSABLE, "", f"not JSON: {exc}")]
            )
        run_id, draft_id, attempt = _readable(doc)
        if not isinstance(doc, dict):
            message = "the draft must be a JSON object"
            return GuardPlan(digest, None, None, 1, [_violation(Code.DRAFT_UNPARSABLE, "", message)])
        if codec.nested_deeper_than(raw, doc):
            message = f"the draft nests arrays/objects more than {codec.MAX_DEPTH} levels deep"
            return GuardPlan(
                digest, run_id, draft_id, attempt, [_violation(Code.DRAFT_UNPARSABLE, "", message)]
            )
        try:
            draft = validate(DIAGNOSIS_DRAFT_ADAPTER, doc)
        except ContractError as exc:
            message = (
                f"{exc}; fix the field (draft_id must be a string of 1-128 characters, item ids strings of "
                f"at most 128, attempt an integer of at most {MAX_ATTEMPT:,})"
            )
            return GuardPlan(
                digest, run_id, draft_id, attempt, [_violation(Code.DRAFT_UNPARSABLE, "", message)]
            )
        too_large = self._too_large(draft)
        if too_large is not None:
            return GuardPlan(
                digest, run_id, draft_id, attempt, [_violation(Code.DRAFT_TOO_LARGE, "", too_large)]
            )
        plan = GuardPlan(digest, run_id, draft_id, attempt, self._structure(draft), draft)
        if is_valid_id(run_id):
            plan.check_citations = True
            cited = dict.fromkeys(
                tcid for item in draft.get("analysis") or [] for tcid in item.get("tool_call_ids") or []
            )
            plan.cited = [tcid for tcid in cited if is_valid_id(tcid)]
        return plan

    def _too_large(self, draft: DiagnosisDraft) -> str | None:
        s = self.settings
        analysis = draft.get("analysis") or []
        actions = draft.get("action_plan") or []
        if len(analysis) > s.max_items or len(actions) > s.max_items:
            return f"more than {s.max_items} items in analysis or action_plan"
        lists: list[tuple[str, list[str]]] = []
        for i, item in enumerate(analysis):
            lists.append((f"analysis[{i}].tool_call_ids", item.get("tool_call_ids") or []))
            lists.append((f"analysis[{i}].document_ids", item.get("document_ids") or []))
        conclusion = draft.get("conclusion")
        if conclusion is not None:
            lists.append(("conclusion.based_on_analysis_ids", conclusion.get("based_on_analysis_ids") or []))
        for i, action in enumerate(actions):
            lists.append(
                (f"action_plan[{i}].based_on_analysis_ids", action.get("based_on_analysis_ids") or [])
            )
        for path, entries in lists:
            if len(entries) > s.max_list_entries:
                return f"{path} has {len(entries)} entries, over {s.max_list_entries}"
        distinct = {tcid for item in analysis for tcid in item.get("tool_call_ids") or []}
        if len(distinct) > s.max_cited_tool_calls:
            return f"{len(distinct)} distinct tool calls cited, over {s.max_cited_tool_calls}"
        return None

    def _structure(self, draft: DiagnosisDraft) -> list[Violation]:
        out: list[Violation] = []
        add = out.append
        run_id = draft.get("run_id")
        if not is_valid_id(run_id):  # a blank text is never a valid id; is_blank only names the cause
            if run_id is None:
                why = "absent or null"
            elif is_blank(run_id):
                why = "blank"
            else:
                why = "not 1-128 characters of [A-Za-z0-9._-]"
            add(_violation(Code.RUN_ID_MISSING, "run_id", f"run_id is {why}"))
        analysis = draft.get("analysis") or []
        actions = draft.get("action_plan") or []
        if not analysis:
            add(_violation(Code.ANALYSIS_EMPTY, "analysis", "the draft has no analysis items"))
        analysis_ids = {item["id"] for item in analysis}
        seen: set[str] = set()

        def check_id(item_id: str, path: str) -> None:
            if item_id in seen:
                add(_violation(Code.ID_DUPLICATE, path, f"id {_shown(item_id)} is used twice"))
            seen.add(item_id)

        def check_refs(refs: list[str] | None, path: str) -> None:
            if not refs:
                add(_violation(Code.REFERENCE_MISSING, path, "names no analysis item"))
                return
            for k, ref in enumerate(refs):
                if ref not in analysis_ids:
                    add(
                        _violation(
                            Code.REFERENCE_UNKNOWN_ANALYSIS,
                            f"{path}[{k}]",
                            f"{_shown(ref)} is not an analysis id",
                        )
                    )

        for i, item in enumerate(analysis):
            path = f"analysis[{i}]"
            check_id(item["id"], f"{path}.id")
            if is_blank(item.get("content")):
                add(_violation(Code.CONTENT_EMPTY, f"{path}.content", "content is blank"))
            if item.get("kind") not in _KINDS:
                add(
                    _violation(
                        Code.ANALYSIS_KIND_INVALID,
                        f"{path}.kind",
                        "kind must be NORMAL or NEGATIVE_OBSERVATION",
                    )
                )
            if not item.get("tool_call_ids"):
                add(_violation(Code.ANALYSIS_CITATION_MISSING, f"{path}.tool_call_ids", "cites no tool call"))
        conclusion = draft.get("conclusion")
        if conclusion is not None:
            if is_blank(conclusion.get("content")):
                add(_violation(Code.CONTENT_EMPTY, "conclusion.content", "content is blank"))
            check_refs(conclusion.get("based_on_analysis_ids"), "conclusion.based_on_analysis_ids")
        for i, action in enumerate(actions):
            path = f"action_plan[{i}]"
            check_id(action["id"], f"{path}.id")
            if is_blank(action.get("content")):
                add(_violation(Code.CONTENT_EMPTY, f"{path}.content", "content is blank"))
            check_refs(action.get("based_on_analysis_ids"), f"{path}.based_on_analysis_ids")
        if all(is_blank(entry) for entry in draft.get("limitations") or []):
            add(_violation(Code.LIMITATIONS_MISSING, "limitations", "limitations must name at least one"))
        return out

    # -- step 2: citations (B) and re-read (C) ---------------------------------------------------

    def judge(
        self,
        plan: GuardPlan,
        lookups: Mapping[str, LedgerLookup],
        *,
        event_id: str | None = None,
        origin: Origin | None = None,
    ) -> Verdict:
        """Check every citation occurrence against what the ledger returned, and build the verdict."""
        violations = list(plan.violations)
        snapshot: dict[str, EvidenceSnapshot] = {}
        if plan.draft is not None and plan.check_citations:
            cited = self._citations(plan.draft, plan.run_id, lookups, snapshot)
            violations += cited.violations
            if self.settings.review == "enforce":  # D after A-C, in the same verdict (SPEC 4.2)
                violations += review(plan.draft, cited.reviewed, cited.projections, cited.digests)
        limit = self.settings.max_violations
        if not violations:
            verdict = VerdictKind.PASS
        elif plan.attempt < self.settings.max_attempts:
            verdict = VerdictKind.REJECT
        else:
            verdict = VerdictKind.FALLBACK
        report: FallbackReport | None = None
        if verdict is VerdictKind.FALLBACK:
            report = {"conclusion": None, "limitations": [FALLBACK_LIMITATION]}
        judged: Verdict = {
            "event_id": event_id,
            "origin": origin,
            "run_id": plan.run_id,
            "draft_id": plan.draft_id,
            "draft_sha256": plan.draft_sha256,
            "attempt": plan.attempt,
            "verdict": verdict,
            "violation_count": len(violations),
            "violations_truncated": len(violations) > limit,
            "violations": violations[:limit],
            "evidence_snapshot": list(snapshot.values()),
            "fallback_report": report,
            "source_timestamp": origin["timestamp"] if origin is not None else None,
        }
        if self.signer is not None:
            judged["signature"] = self.signer.sign_verdict(judged)
        return judged

    def _citations(
        self,
        draft: DiagnosisDraft,
        run_id: str | None,
        lookups: Mapping[str, LedgerLookup],
        snapshot: dict[str, EvidenceSnapshot],
    ) -> _Cited:
        cache: dict[str, _Citation] = {}
        out: list[Violation] = []
        reviewed: list[bool] = []
        for i, item in enumerate(draft.get("analysis") or []):
            before = len(out)
            known_documents: set[str] = set()
            any_passed = False
            kind = item.get("kind")
            for j, tcid in enumerate(item.get("tool_call_ids") or []):
                path = f"analysis[{i}].tool_call_ids[{j}]"
                citation = cache.get(tcid)
                if citation is None:
                    lookup = lookups.get(tcid, _NO_ENTRY)
                    citation = cache[tcid] = _check_citation(tcid, run_id, lookup, self.trusted)
                result = citation.result
                if result is None:
                    out.append(_violation(citation.code or Code.CITATION_NOT_FOUND, path, citation.message))
                    continue
                any_passed = True
                known_documents.update(e["document_id"] for e in result["evidence"])
                snapshot.setdefault(tcid, _snapshot(result, citation.sha256))
                found = result["evidence_status"] == "EVIDENCE_FOUND"
                if kind == AnalysisKind.NORMAL and not found:
                    message = f"NORMAL item cites {_shown(tcid)}, which found no evidence"
                    out.append(_violation(Code.NORMAL_CITES_NO_EVIDENCE, path, message))
                elif kind == AnalysisKind.NEGATIVE_OBSERVATION and found:
                    message = f"NEGATIVE_OBSERVATION item cites {_shown(tcid)}, which found evidence"
                    out.append(_violation(Code.NEGATIVE_CITES_EVIDENCE, path, message))
            if any_passed:
                for k, document_id in enumerate(item.get("document_ids") or []):
                    if document_id not in known_documents:
                        message = f"{_shown(document_id)} is in none of the item's cited projections"
                        out.append(
                            _violation(
                                Code.CITATION_DOCUMENT_UNKNOWN, f"analysis[{i}].document_ids[{k}]", message
                            )
                        )
            # every violation added above is B or C at one of this item's citations or document_ids
            reviewed.append(bool(item.get("tool_call_ids")) and len(out) == before)
        projections = {tcid: c.result for tcid, c in cache.items() if c.result is not None}
        digests = {tcid: c.sha256 for tcid, c in cache.items() if c.result is not None}
        return _Cited(out, reviewed, projections, digests)


def _check_citation(
    tool_call_id: str, run_id: str | None, lookup: LedgerLookup, trusted: TrustedKeys | None
) -> _Citation:
    """B then C for one cited tool call: found → READY → same run → re-read."""
    if not is_valid_id(tool_call_id):
        return _Citation(Code.CITATION_NOT_FOUND, f"{_shown(tool_call_id)} is not a valid tool call id")
    entry = lookup.entry
    if entry is None:
        if lookup.foreign_owner:
            return _Citation(Code.CITATION_CROSS_RUN, f"{_shown(tool_call_id)} belongs to another run")
        return _Citation(
            Code.CITATION_NOT_FOUND, f"no ledger entry for {_shown(tool_call_id)} in run {_shown(run_id)}"
        )
    status = entry.get("status")
    if status != LedgerStatus.READY:
        return _Citation(Code.CITATION_NOT_READY, f"{_shown(tool_call_id)} is {_shown(status)}, not READY")
    if entry.get("run_id") != run_id:
        return _Citation(
            Code.CITATION_CROSS_RUN, f"the entry's stored run {_shown(entry.get('run_id'))} differs"
        )
    outcome = reread(entry, tool_call_id, trusted)
    if outcome.result is None:
        return _Citation(outcome.code, f"{_shown(tool_call_id)}: {outcome.detail[:200]}")
    return _Citation(None, "", outcome.result, str(entry.get("projection_sha256")))


def _snapshot(result: RagToolResult, sha256: str) -> EvidenceSnapshot:
    return {
        "tool_call_id": result["tool_call_id"],
        "evidence_status": result["evidence_status"],
        "relevance_level": result["relevance_level"],
        "truncated": result["truncated"],
        "projection_sha256": sha256,
        "evidence": result["evidence"],
    }


def violation_events(verdict: Verdict) -> list[ViolationEvent]:
    """One ``violations`` event per listed violation; its id is the verdict's plus the index."""
    base = verdict["event_id"]
    return [
        {
            "event_id": f"{base}#{index}" if base is not None else None,
            "origin": verdict["origin"],
            "run_id": verdict["run_id"],
            "draft_id": verdict["draft_id"],
            "attempt": verdict["attempt"],
            "code": violation["code"],
            "path": violation["path"],
            "message": violation["message"],
            "source_timestamp": verdict["source_timestamp"],
        }
        for index, violation in enumerate(verdict["violations"])
    ]
