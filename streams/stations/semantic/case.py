"""The judge's case: which claims of a draft are judged, against which evidence, and its digest.

Pure: a function of the handed-over draft and the projections it cites (the ledger's bytes), so the
same draft and evidence always give the same case and the same digest, and a replay finds what was
recorded for it.

Which claims: every analysis item (against the evidence items of the tool calls it cites, only those
in its ``document_ids`` when it names some — what the review of claims, SPEC 4.2, judges it against)
and the conclusion (against the evidence of the items it builds on). Actions are instructions, not
statements of fact, and ``limitations`` are the agent's own words: neither is judged (the review of
claims still checks the actions' specifics).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from models.semantic import CaseClaim, CaseEvidence, CitedProjection, JudgeCase
from models.verdict import Report
from models.vocab import EvidenceStatus
from streams import codec
from streams.codec import JSONObject
from streams.trust.messages import judgement_digest

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")


def language_of(texts: Sequence[str]) -> Literal["zh", "en"]:
    """``zh`` when at least one in ten of the letters of ``texts`` is a CJK ideograph, else ``en``.

    Chinese drafts carry many ASCII identifiers (config keys, commands), so a majority rule would
    send most of them the English prompt; a tenth is far above what an English draft quoting one
    Chinese title holds.
    """
    joined = "\n".join(texts)
    cjk = len(_CJK.findall(joined))
    latin = len(_LATIN.findall(joined))
    return "zh" if cjk and cjk * 10 >= cjk + latin else "en"


def _projections(cited: Sequence[CitedProjection]) -> dict[str, JSONObject]:
    """Each cited tool call's projection, parsed (the guard's C already checked these bytes)."""
    out: dict[str, JSONObject] = {}
    for item in cited:
        parsed = codec.loads(item["projection"])
        if isinstance(parsed, dict):
            out.setdefault(item["tool_call_id"], parsed)
    return out


def build_case(draft: Report, cited: Sequence[CitedProjection], *, prompt_version: str) -> JudgeCase:
    """What the judge is shown of one draft: its claims, and the evidence each cites as ``E1``, ``E2``, …
    (numbered in the order first cited; one item cited by two claims is shown once)."""
    projections = _projections(cited)
    evidence: list[CaseEvidence] = []
    refs: dict[tuple[str, str | None], str] = {}

    def ref(tool_call_id: str, item: JSONObject | None, projection: JSONObject) -> str:
        document_id = None if item is None else str(item.get("document_id"))
        key = (tool_call_id, document_id)
        if key not in refs:
            refs[key] = f"E{len(refs) + 1}"
            relevance = projection.get("relevance_level")
            evidence.append(
                {
                    "ref": refs[key],
                    "tool_call_id": tool_call_id,
                    "document_id": document_id,
                    "title": None
                    if item is None or not isinstance(item.get("title"), str)
                    else item["title"],
                    "relevance": relevance if isinstance(relevance, str) else None,
                    "found": item is not None,
                    "text": str(projection.get("query") or "")
                    if item is None
                    else str(item.get("excerpt") or ""),
                }
            )
        return refs[key]

    claims: list[CaseClaim] = []
    by_id: dict[str, list[str]] = {}
    for index, item in enumerate(draft.get("analysis") or []):
        named = set(item.get("document_ids") or [])
        cites: list[str] = []
        for tool_call_id in dict.fromkeys(item.get("tool_call_ids") or []):
            projection = projections.get(tool_call_id)
            if projection is None:
                continue
            if projection.get("evidence_status") != EvidenceStatus.EVIDENCE_FOUND:
                cites.append(ref(tool_call_id, None, projection))
                continue
            for shown in projection.get("evidence") or []:
                if isinstance(shown, dict) and (not named or shown.get("document_id") in named):
                    cites.append(ref(tool_call_id, shown, projection))
        cites = list(dict.fromkeys(cites))
        by_id.setdefault(item["id"], cites)
        kind = item.get("kind")
        claims.append(
            {
                "path": f"analysis[{index}].content",
                "kind": "NEGATIVE_OBSERVATION" if kind == "NEGATIVE_OBSERVATION" else "NORMAL",
                "text": item.get("content") or "",
                "evidence": cites,
            }
        )
    conclusion = draft.get("conclusion")
    if conclusion is not None:
        builds_on = [
            ref for item_id in conclusion.get("based_on_analysis_ids") or [] for ref in by_id.get(item_id, [])
        ]
        claims.append(
            {
                "path": "conclusion.content",
                "kind": "CONCLUSION",
                "text": conclusion.get("content") or "",
                "evidence": list(dict.fromkeys(builds_on)),
            }
        )
    return {
        "prompt_version": prompt_version,
        "language": language_of([claim["text"] for claim in claims]),
        "claims": claims,
        "evidence": evidence,
    }


def case_chars(case: JudgeCase) -> int:
    """Characters of a case's claims and evidence (texts and titles): what the per-draft cap counts.

    Characters, not tokens: counting tokens would need a tokenizer that downloads its encodings, and a
    character is a fair bound on any tokenizer's count of the same text.
    """
    claims = sum(len(claim["text"]) for claim in case["claims"])
    shown = sum(len(item["text"]) + len(item["title"] or "") for item in case["evidence"])
    return claims + shown


def case_digest(model: str, case: JudgeCase) -> str:
    """What was asked, of whom: the key a recorded judgement is found by
    (:func:`streams.trust.messages.judgement_digest`, which a receipt's verifier recomputes)."""
    return judgement_digest(model, case)
