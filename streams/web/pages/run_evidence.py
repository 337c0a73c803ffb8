"""The evidence of one run as an auditor reads it: what each tool call showed the agent, and each draft's
claims beside the evidence they cite (issue 19, item 7). Pure: from what the audit store holds to a
JSON document; :mod:`streams.web.pages.anchors` draws it.

- Per tool call, the stored ledger entry (the first one of its key: what the agent was shown), its
  projection's items exactly as the agent saw them, whether its bytes hash to ``projection_sha256``,
  and its signature: ``verified``, ``not verified`` (with the reason) or ``unsigned`` under the trusted
  keys; ``not checked`` without them. A write the ledger refused (``CONFLICT``) is listed beside the
  entry, never in its place. An entry whose stored ``run_id`` and ``tool_call_id`` are not the row's
  (SPEC 3.7: an entry is evidence for one key) is not shown at all: ``key_mismatch`` says so.
- Per draft, the analysis items (from the stored draft bytes, the verdict's ``draft_sha256``), each with
  the evidence items it cites (by their place in the entry, which holds them once) and the document ids
  it names that none of them holds, and the violations whose path is inside it; the conclusion and the
  action plan likewise; the verdict's signature; and ``report``: the event published on ``reports``
  for that verdict (SPEC 4.3, as the topic carried it), or None (a REJECT, or not stored). With trusted
  keys a verdict or a report that does not hold is never shown (SPEC 4.3): the verdict's content is
  ``withheld`` (its signature state says why), the report is dropped; reports are kept once by their
  signed fields and one per ``(run_id, draft_id, attempt)`` (:func:`streams.trust.distinct_reports`), so
  a copy re-sent under a new ``event_id`` neither replaces nor repeats the first.
- The chain at a glance: hits → blocks → shown → ledger → cited → verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import NotRequired

from typing_extensions import TypedDict

from models.audit import StationRecord, ToolCallFigures, ToolCallRow, VerdictRow
from models.draft import DIAGNOSIS_DRAFT_ADAPTER
from models.ids import is_valid_id
from models.ledger import LedgerEntry
from models.review import EvidenceSource, Specific
from models.semantic import JudgementEvent
from models.validation import ContractError, validate
from models.verdict import ReportEvent, Verdict, Violation
from streams import codec
from streams.audit.store import VERDICT_OUTCOMES, StoredEntry
from streams.codec import JSONObject
from streams.stations.review import claims, reviewed_texts
from streams.trust import EntryFault, TrustedKeys, check_entry, check_verdict, distinct_reports
from streams.trust.integrity import judgement_for


class SignatureState(TypedDict):
    """A signature as the page shows it; ``signed`` only when no trusted keys checked it."""

    state: str
    """``verified``, ``not verified``, ``unsigned`` or ``not checked``."""
    key_id: object
    reason: str | None
    signed: NotRequired[bool]


class ShownItem(TypedDict):
    """One evidence item of a projection, as the agent saw it."""

    document_id: object
    source: object
    title: object
    breadcrumb: object
    excerpt: object
    cut: bool
    """The excerpt is at the cap: it may have been cut (the projection's ``truncated`` says something was)."""


class RefusedWrite(TypedDict):
    """A write the ledger refused (``CONFLICT``), with the refused projection's figures."""

    origin_partition: object
    origin_offset: object
    projection_sha256: object
    evidence_status: object
    returned_count: object
    truncated: object


class EntryView(TypedDict):
    """One tool call's stored entry as the page shows it (see the module docstring)."""

    tool_call_id: str
    status: object
    failure_reason: object
    evidence_status: object
    relevance_level: object
    truncated: object
    query: object
    returned_count: object
    items: list[ShownItem]
    unreadable: str | None
    key_mismatch: bool
    projection_sha256: object
    hash_ok: bool | None
    signature: SignatureState
    event_id: object
    ledger_record: str
    later_differs: bool
    refused: list[RefusedWrite]


class Cited(TypedDict):
    """What an item cites of one tool call: the positions of the items it names (None: it names none)."""

    tool_call_id: str
    stored: bool
    evidence_status: object
    item_count: int
    items: list[int] | None


class LeftOut(TypedDict):
    count: int
    unsupported: int


class Specifics(TypedDict):
    specifics: list[Specific]
    specifics_left_out: LeftOut | None


class JudgedRef(TypedDict):
    tool_call_id: object
    document_id: object


class JudgedClaim(TypedDict):
    """The semantic judge's word on one claim (SPEC 4.4)."""

    label: object
    reason: object
    evidence: list[JudgedRef]


class AnalysisView(Specifics):
    """An analysis item with what it cites, its specifics, the judge's word and its violations."""

    path: str
    id: object
    kind: object
    content: object
    tool_call_ids: list[str]
    document_ids: list[str]
    cites: list[Cited]
    unmatched_document_ids: list[str]
    judged: JudgedClaim | None
    violations: list[Violation]


class ConclusionView(Specifics):
    content: object
    based_on_analysis_ids: list[str]
    judged: JudgedClaim | None
    violations: list[Violation]


class ActionView(Specifics):
    id: object
    content: object
    based_on_analysis_ids: list[str]
    violations: list[Violation]


class JudgementSummary(TypedDict):
    event_id: object
    mode: object
    status: object
    model: object
    prompt_version: object


class DraftView(TypedDict):
    """One verdict's draft, item by item (:func:`draft_view`)."""

    stored_draft: bool
    stored_verdict: bool
    analysis: list[AnalysisView]
    conclusion: ConclusionView | None
    action_plan: list[ActionView]
    limitations: list[str]
    limitation_violations: list[Violation]
    other_violations: list[Violation]
    violations_truncated: object
    violation_count: object
    draft_sha256: object
    signature: SignatureState | None
    report: ReportEvent | None
    judgement: JudgementSummary | None
    withheld: NotRequired[str]
    """Why a verdict that does not hold is not shown (SPEC 4.3)."""
    attempts: NotRequired[list[int]]


class ChainStep(TypedDict):
    step: str
    count: int
    detail: str


class EvidenceDocument(TypedDict):
    """The evidence part of a run's document (:func:`evidence_document`)."""

    signatures_checked: bool
    entries: dict[str, EntryView]
    drafts: dict[str, DraftView]
    chain: list[ChainStep]


OriginKey = tuple[object, object, object, object]
"""``(tool_call_id, origin topic, partition, offset)``: one record's chain."""

_ITEM_FIELDS = ("document_id", "source", "title", "breadcrumb", "excerpt")


def signature_state(
    key_id: object, why_not: str | None, trusted: TrustedKeys | None, signed: bool | None = None
) -> SignatureState:
    """``{state, key_id, reason}``: ``verified``, ``not verified``, ``unsigned`` or ``not checked``; and,
    not checked, ``signed`` when given."""
    if trusted is None:
        state: SignatureState = {
            "state": "not checked",
            "key_id": key_id,
            "reason": "no trusted keys (EC_TRUSTED_KEYS_FILE)",
        }
        if signed is not None:
            state["signed"] = signed
        return state
    if why_not is None:
        return {"state": "verified", "key_id": key_id, "reason": None}
    if why_not == "unsigned":
        return {"state": "unsigned", "key_id": None, "reason": None}
    return {"state": "not verified", "key_id": key_id, "reason": why_not}


def _projection(entry: LedgerEntry) -> tuple[JSONObject | None, str | None]:
    """The entry's projection parsed, or why it cannot be shown."""
    projection = entry.get("projection")
    if not isinstance(projection, str):
        return None, None if entry.get("status") == "FAILED" else "the entry holds no projection"
    try:
        shown = codec.loads(projection)
    except codec.JSONDecodeError:
        return None, "the stored projection is not JSON"
    if not isinstance(shown, dict):
        return None, "the stored projection is not a JSON object"
    return shown, None


def _items(shown: JSONObject | None, max_excerpt_chars: int) -> list[ShownItem]:
    listed = shown.get("evidence") if shown is not None else None
    out: list[ShownItem] = []
    for item in listed if isinstance(listed, list) else []:
        if not isinstance(item, dict):
            continue
        excerpt = item.get("excerpt")
        out.append(
            {
                "document_id": item.get("document_id"),
                "source": item.get("source"),
                "title": item.get("title"),
                "breadcrumb": item.get("breadcrumb"),
                "excerpt": excerpt,
                # an excerpt at the cap may have been cut (the projection's `truncated` says something was)
                "cut": isinstance(excerpt, str) and len(excerpt) >= max_excerpt_chars,
            }
        )
    return out


def entry_view(
    stored: StoredEntry,
    refused: Sequence[RefusedWrite],
    trusted: TrustedKeys | None,
    max_excerpt_chars: int,
    run_id: str | None = None,
) -> EntryView:
    """One tool call's stored entry as the page shows it (see the module docstring); with ``run_id``
    (the run the page is of), an entry that is not ``(run_id, tool_call_id)``'s is shown as nothing
    but that fact (:func:`streams.trust.check_entry` with the key, before anything else)."""
    entry = stored.entry
    if run_id is not None and check_entry(entry, None, (run_id, stored.tool_call_id)).fault is EntryFault.KEY:
        return {
            "tool_call_id": stored.tool_call_id,
            "status": None,
            "failure_reason": None,
            "evidence_status": None,
            "relevance_level": None,
            "truncated": None,
            "query": None,
            "returned_count": None,
            "items": [],
            "unreadable": "LEDGER_INTEGRITY: the stored entry is another run's or tool call's, not this "
            "one's (an entry is evidence for one key); nothing of it is shown",
            "key_mismatch": True,
            "projection_sha256": None,
            "hash_ok": None,
            "signature": signature_state(None, "not this key's entry", trusted, signed=False),
            "event_id": None,
            "ledger_record": stored.where,
            "later_differs": stored.later_differs,
            "refused": [r.copy() for r in refused],
        }
    shown, unreadable = _projection(entry)
    projection = entry.get("projection")
    hashes = isinstance(projection, str) and check_entry(entry, None).holds  # the hash; the signature below
    why_not = trusted.verify_entry(entry) if trusted is not None else None
    return {
        "tool_call_id": stored.tool_call_id,
        "status": entry.get("status"),
        "failure_reason": entry.get("failure_reason"),
        "evidence_status": entry.get("evidence_status"),
        "relevance_level": shown.get("relevance_level") if shown else None,
        "truncated": shown.get("truncated") if shown else None,
        "query": shown.get("query") if shown else None,
        "returned_count": shown.get("returned_count") if shown else None,
        "items": _items(shown, max_excerpt_chars),
        "unreadable": unreadable,
        "projection_sha256": entry.get("projection_sha256"),
        "hash_ok": hashes if isinstance(projection, str) else None,
        "signature": signature_state(entry.get("key_id"), why_not, trusted, signed="key_id" in entry),
        "event_id": entry.get("event_id"),
        "ledger_record": stored.where,
        "later_differs": stored.later_differs,
        "refused": [r.copy() for r in refused],
        "key_mismatch": False,
    }


def _origin_key(tool_call_id: object, origin: object) -> OriginKey:
    where: Mapping[str, object] = origin if isinstance(origin, Mapping) else {}
    return (tool_call_id, where.get("topic"), where.get("partition"), where.get("offset"))


def by_origin(records: Sequence[StationRecord]) -> dict[OriginKey, dict[str, ToolCallFigures]]:
    """Audit figures grouped by (tool call, origin topic, partition, offset): ``{station: fields}``."""
    out: dict[OriginKey, dict[str, ToolCallFigures]] = {}
    for row in records:
        origin = {
            "topic": row["origin_topic"],
            "partition": row["origin_partition"],
            "offset": row["origin_offset"],
        }
        out.setdefault(_origin_key(row["tool_call_id"], origin), {})[str(row["station"])] = row["fields"]
    return out


def refused_writes(
    grouped: Mapping[OriginKey, Mapping[str, ToolCallFigures]],
) -> dict[str, list[RefusedWrite]]:
    """Per tool call, each write the ledger refused (``CONFLICT``), with the refused projection's figures."""
    out: dict[str, list[RefusedWrite]] = {}
    for (tool_call_id, _, partition, offset), stations in grouped.items():
        ledger = stations.get("ledger")
        if ledger is None or ledger.get("outcome") != "CONFLICT":
            continue
        project: Mapping[str, object] = stations.get("project") or {}
        out.setdefault(str(tool_call_id), []).append(
            {
                "origin_partition": partition,
                "origin_offset": offset,
                "projection_sha256": project.get("projection_sha256"),
                "evidence_status": project.get("evidence_status"),
                "returned_count": project.get("returned_count"),
                "truncated": project.get("truncated"),
            }
        )
    return out


# --- drafts --------------------------------------------------------------------------------------------


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _inside(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((f"{prefix}.", f"{prefix}["))


def _cited(
    tool_call_ids: Sequence[str], document_ids: Sequence[str], entries: Mapping[str, EntryView]
) -> list[Cited]:
    """The evidence an item cites: per tool call, ``items``: the positions in its entry's ``items`` of
    those the item names, or None when it names none (it cites them all). The items themselves are in
    the entry, once per page: an item citing 50 lookups does not copy 50 projections (issue 38 M7)."""
    out: list[Cited] = []
    for tool_call_id in tool_call_ids:
        entry = entries.get(tool_call_id)
        listed = list(entry["items"]) if entry else []
        named = [index for index, item in enumerate(listed) if item["document_id"] in document_ids]
        out.append(
            {
                "tool_call_id": tool_call_id,
                "stored": entry is not None,
                "evidence_status": entry["evidence_status"] if entry else None,
                "item_count": len(listed),
                "items": named if document_ids else None,
            }
        )
    return out


def _unmatched(
    tool_call_ids: Sequence[str], document_ids: Sequence[str], entries: Mapping[str, EntryView]
) -> list[str]:
    """The document ids an item names that none of the stored entries it cites holds."""
    found = {
        item["document_id"] for t in tool_call_ids if (entry := entries.get(t)) for item in entry["items"]
    }
    return [d for d in dict.fromkeys(document_ids) if d not in found]


MAX_SPECIFICS_SHOWN = 50
"""Specifics listed per text; the rest are counted (``specifics_left_out``), so one long text cannot
make a page of megabytes."""


def _some_specifics(found: Sequence[Specific]) -> Specifics:
    """``specifics`` (at most :data:`MAX_SPECIFICS_SHOWN`) and ``specifics_left_out``: how many more,
    and how many of those are not supported (None when none are left out)."""
    rest = found[MAX_SPECIFICS_SHOWN:]
    left_out = (
        LeftOut(count=len(rest), unsupported=sum(1 for s in rest if not s["supported"])) if rest else None
    )
    return {"specifics": list(found[:MAX_SPECIFICS_SHOWN]), "specifics_left_out": left_out}


def _claims(
    verdict: Verdict | None, doc: JSONObject, entries: Mapping[str, EntryView]
) -> dict[str, list[Specific]]:
    """Per reviewed text's path (``analysis[0].content`` …), its specifics and where each was found
    (:func:`streams.stations.review.claims`): the texts the guard reviewed, judged again on the stored
    entries. An item is reviewed when its citations got no violation in the verdict and each cited
    entry is stored here; a draft the guard could not read, or whose run_id failed, has none."""
    if verdict is None or not is_valid_id(doc.get("run_id")):
        return {}
    try:
        draft = validate(DIAGNOSIS_DRAFT_ADAPTER, doc)
    except ContractError:
        return {}
    faulted = {str(v.get("path") or "") for v in verdict.get("violations") or [] if isinstance(v, dict)}
    reviewed = []
    for index, item in enumerate(draft.get("analysis") or []):
        cited = item.get("tool_call_ids") or []
        prefixes = (f"analysis[{index}].tool_call_ids[", f"analysis[{index}].document_ids[")
        reviewed.append(
            bool(cited)
            and all(t in entries for t in cited)
            and not any(path.startswith(prefixes) for path in faulted)
        )
    projections: dict[str, EvidenceSource] = {
        tool_call_id: {
            "query": entry.get("query"),
            "evidence_status": entry.get("evidence_status"),
            "evidence": entry.get("items") or [],
        }
        for tool_call_id, entry in entries.items()
    }
    return {
        text.path: claims(text.content, text.evidence)
        for text in reviewed_texts(draft, reviewed, projections)
    }


def draft_view(
    verdict: Verdict | None,
    draft: bytes | None,
    entries: Mapping[str, EntryView],
    trusted: TrustedKeys | None,
    report: ReportEvent | None = None,
    *,
    review: bool = True,
    judgement: JudgementEvent | None = None,
) -> DraftView:
    """One verdict's draft, item by item, with the evidence each item cites and the violations inside it,
    and ``report``: what was published for that verdict (the ``reports`` event, or None). Each analysis
    item, the conclusion and each action has ``specifics``: every number, identifier and quotation of a
    reviewed text with ``kind``, ``value``, ``supported`` and the ``tool_call_id``/``document_id`` it
    was found in (SPEC 4.2), the first :data:`MAX_SPECIFICS_SHOWN` of them (``specifics_left_out`` counts
    the rest); an empty list when the text is not reviewed or ``review`` is off. ``judgement``: the semantic
    review's (SPEC 4.4), when the draft was judged: each analysis item and the conclusion then has
    ``judged``, the judge's label and reason and the evidence (tool call, document) it relied on."""
    listed = verdict.get("violations") if verdict is not None else None
    violations = [v.copy() for v in listed or [] if isinstance(v, dict)]
    judged = judged_claims(judgement)
    placed: set[int] = set()

    def at(prefix: str) -> list[Violation]:
        found = []
        for index, violation in enumerate(violations):
            if index not in placed and _inside(str(violation.get("path") or ""), prefix):
                placed.add(index)
                found.append(violation)
        return found

    parsed: object = None
    if draft is not None:
        try:
            parsed = codec.loads(draft)
        except codec.JSONDecodeError:
            parsed = None
    doc: JSONObject = parsed if isinstance(parsed, dict) else {}  # the stored draft, read field by field
    specifics = _claims(verdict, doc, entries) if review else {}
    analysis: list[AnalysisView] = []
    listed_items = doc.get("analysis")
    for index, found_item in enumerate(listed_items if isinstance(listed_items, list) else []):
        item: JSONObject = found_item if isinstance(found_item, dict) else {}
        tool_call_ids, document_ids = _strings(item.get("tool_call_ids")), _strings(item.get("document_ids"))
        analysis.append(
            {
                "path": f"analysis[{index}]",
                "id": item.get("id"),
                "kind": item.get("kind"),
                "content": item.get("content"),
                "tool_call_ids": tool_call_ids,
                "document_ids": document_ids,
                "cites": _cited(tool_call_ids, document_ids, entries),
                "unmatched_document_ids": _unmatched(tool_call_ids, document_ids, entries),
                **_some_specifics(specifics.get(f"analysis[{index}].content", [])),
                "judged": judged.get(f"analysis[{index}].content"),
                "violations": at(f"analysis[{index}]"),
            }
        )
    conclusion = doc.get("conclusion")
    conclusion_view: ConclusionView | None = (
        {
            "content": conclusion.get("content"),
            "based_on_analysis_ids": _strings(conclusion.get("based_on_analysis_ids")),
            **_some_specifics(specifics.get("conclusion.content", [])),
            "judged": judged.get("conclusion.content"),
            "violations": at("conclusion"),
        }
        if isinstance(conclusion, dict)
        else None
    )
    actions: list[ActionView] = []
    plan = doc.get("action_plan")
    for index, found_action in enumerate(plan if isinstance(plan, list) else []):
        action: JSONObject = found_action if isinstance(found_action, dict) else {}
        actions.append(
            {
                "id": action.get("id"),
                "content": action.get("content"),
                "based_on_analysis_ids": _strings(action.get("based_on_analysis_ids")),
                **_some_specifics(specifics.get(f"action_plan[{index}].content", [])),
                "violations": at(f"action_plan[{index}]"),
            }
        )
    why_not = trusted.verify_verdict(verdict) if trusted is not None and verdict is not None else None
    signature = verdict.get("signature") if verdict else None
    key_id = signature.get("key_id") if signature else None
    return {
        "stored_draft": bool(doc),
        "stored_verdict": verdict is not None,
        "analysis": analysis,
        "conclusion": conclusion_view,
        "action_plan": actions,
        "limitations": _strings(doc.get("limitations")),
        "limitation_violations": at("limitations"),
        "other_violations": [v for i, v in enumerate(violations) if i not in placed],
        "violations_truncated": None if verdict is None else verdict.get("violations_truncated"),
        "violation_count": None if verdict is None else verdict.get("violation_count"),
        "draft_sha256": None if verdict is None else verdict.get("draft_sha256"),
        "signature": None
        if verdict is None
        else signature_state(key_id, why_not, trusted, signed="signature" in verdict),
        "report": None if report is None else report.copy(),
        "judgement": None
        if judgement is None
        else {
            "event_id": judgement.get("event_id"),
            "mode": judgement.get("mode"),
            "status": judgement.get("status"),
            "model": judgement.get("model"),
            "prompt_version": judgement.get("prompt_version"),
        },
    }


def judged_claims(judgement: JudgementEvent | None) -> dict[str, JudgedClaim]:
    """The semantic judge's word on each claim of a judgement (SPEC 4.4), by the claim's path: its label,
    its reason and the evidence items it relied on, named by tool call and document."""
    if judgement is None:
        return {}
    found = judgement.get("case")
    case: JSONObject = found if isinstance(found, dict) else {}  # a stored judgement, read field by field
    refs: dict[object, JudgedRef] = {
        item.get("ref"): {"tool_call_id": item.get("tool_call_id"), "document_id": item.get("document_id")}
        for item in case.get("evidence") or []
        if isinstance(item, dict)
    }
    return {
        str(claim.get("path")): {
            "label": claim.get("label"),
            "reason": claim.get("reason"),
            "evidence": [
                refs.get(ref, {"tool_call_id": None, "document_id": ref})
                for ref in claim.get("evidence") or []
            ],
        }
        for claim in judgement.get("claims") or []
        if isinstance(claim, dict)
    }


# --- the chain at a glance -----------------------------------------------------------------------------


def chain_steps(
    tool_calls: Sequence[ToolCallRow],
    entries: Mapping[str, EntryView],
    drafts: Sequence[VerdictRow],
    first: Mapping[str, ToolCallFigures] | None = None,
) -> list[ChainStep]:
    """The run's steps, each ``{step, count, detail}``: hits → blocks → shown → ledger → cited → verdict.

    Hits and blocks of a tool call are the postprocess figures of the record whose entry the ledger kept
    (``first``, by tool call id) when known, else its latest figures (a refused later record's, maybe).
    """
    first = first or {}

    def total(name: str) -> int:
        counted = 0
        for call in tool_calls:
            figures: Mapping[str, object] = first.get(call["tool_call_id"]) or call
            value = figures.get(name)
            counted += value if isinstance(value, int) and not isinstance(value, bool) else 0
        return counted

    statuses = Counter(str(e["status"]) for e in entries.values())
    shown = sum(len(e["items"]) for e in entries.values())
    cited = {t for d in drafts for t in d.get("cited_tool_call_ids") or [] if isinstance(t, str)}
    outcomes = Counter(str(d.get("verdict")) for d in drafts)
    return [
        {"step": "hits", "count": total("candidate_count"), "detail": "candidates from py-rag"},
        {"step": "blocks", "count": total("evidence_block_count"), "detail": "evidence blocks kept"},
        {"step": "shown", "count": shown, "detail": f"items in {len(entries)} projections"},
        {
            "step": "ledger",
            "count": len(entries),
            "detail": " · ".join(f"{n} {s}" for s, n in sorted(statuses.items())) or "no entries stored",
        },
        {"step": "cited", "count": len(cited), "detail": "tool calls cited by drafts"},
        {
            "step": "verdict",
            "count": len(drafts),
            "detail": " · ".join(f"{outcomes[o]} {o}" for o in VERDICT_OUTCOMES if outcomes[o])
            or "no drafts",
        },
    ]


def evidence_document(
    tool_calls: Sequence[ToolCallRow],
    guard_rows: Sequence[VerdictRow],
    stored: Sequence[StoredEntry],
    records: Sequence[StationRecord],
    verdicts: Sequence[Verdict],
    drafts: Mapping[str, bytes],
    trusted: TrustedKeys | None,
    max_excerpt_chars: int,
    reports: Sequence[ReportEvent] = (),
    *,
    review: bool = True,
    run_id: str | None = None,
    judgements: Sequence[JudgementEvent] = (),
) -> EvidenceDocument:
    """The evidence part of a run's document: ``entries`` by tool call, ``drafts`` by verdict event id,
    ``chain``, and whether signatures were checked. ``records`` are the run's station audit records
    (:meth:`AuditStore.station_records`): they tell a refused write from the one the ledger kept;
    ``reports`` the run's published reports (:meth:`AuditStore.stored_reports`), each shown with the
    verdict it names (``verdict_event_id``). ``review``: whether the guard reviews claims
    (``guard.review`` is ``enforce``), so the drafts' texts show their specifics. ``run_id``: the run the
    page is of; an entry or a report of another key is then not shown as this run's (SPEC 3.7, 4.3).
    ``judgements``: the semantic review's (:meth:`AuditStore.stored_judgements`), each shown beside the
    verdict it names when it holds for it (:func:`streams.trust.integrity.judgement_for`: its digest is
    that of its case, its evidence the entries', and with trusted keys a trusted guard key signed it;
    SPEC 4.4), the original of copies whatever their ``origin``."""
    grouped = by_origin(records)
    conflicts = refused_writes(grouped)
    shown = {
        s.tool_call_id: entry_view(s, conflicts.get(s.tool_call_id, ()), trusted, max_excerpt_chars, run_id)
        for s in stored
    }
    # another key's entry is listed (as that fact) but is no one's evidence: nothing cites it
    entries = {tool_call_id: e for tool_call_id, e in shown.items() if not e["key_mismatch"]}
    first = {
        s.tool_call_id: figures
        for s in stored
        if (figures := grouped.get(_origin_key(s.tool_call_id, s.entry.get("origin")), {}).get("postprocess"))
    }
    by_event: dict[str, Verdict] = {}
    withheld: dict[str, str] = {}
    for verdict in verdicts:
        held = check_verdict(verdict, trusted)
        if held.holds:
            by_event.setdefault(str(verdict.get("event_id")), verdict)
        else:
            withheld.setdefault(str(verdict.get("event_id")), held.detail)
    published: dict[str, ReportEvent] = {}
    for kept in distinct_reports(reports, trusted, run_id=run_id).reports:
        published.setdefault(str(kept.get("verdict_event_id")), kept)
    # SPEC 4.4: the judgement that holds for its verdict (judgement_for), never the first by origin
    named: dict[str, list[JudgementEvent]] = {}
    for judgement in judgements:
        named.setdefault(str(judgement.get("verdict_event_id")), []).append(judgement)
    cited = [s.entry for s in stored if s.tool_call_id in entries]
    attempts: dict[str, list[int]] = {}
    for verdict in by_event.values():  # the verdicts that hold: a forged one adds no attempt
        draft_id, attempt = verdict.get("draft_id"), verdict.get("attempt")
        if isinstance(draft_id, str) and isinstance(attempt, int):
            attempts.setdefault(draft_id, []).append(attempt)
    views: dict[str, DraftView] = {}
    for row in guard_rows:
        event = str(row.get("event_id"))
        judged = by_event.get(event)
        sha = judged.get("draft_sha256") if judged else None
        report = published.get(event)
        view = draft_view(
            judged,
            drafts.get(sha) if isinstance(sha, str) else None,
            entries,
            trusted,
            report,
            review=review,
            judgement=None if judged is None else judgement_for(judged, named.get(event, ()), trusted, cited),
        )
        if event in withheld and judged is None:  # SPEC 4.3: a verdict that does not hold is not shown
            view["withheld"] = withheld[event]
            view["signature"] = signature_state(None, withheld[event], trusted)
        view["attempts"] = sorted(set(attempts.get(str(row.get("draft_id")), [])))
        views[event] = view
    return {
        "signatures_checked": trusted is not None,
        "entries": shown,
        "drafts": views,
        "chain": chain_steps(tool_calls, entries, guard_rows, first),
    }
