"""Does a judgement hold (SPEC 4.4)? The semantic judge's answer, checked offline: in a receipt, and
(through :func:`streams.trust.integrity.check_judgement`) wherever one is shown or put in a receipt.

A receipt of a draft the semantic review judged carries its ``judgements`` event. It holds when:

- its signature verifies under a trusted guard key (the key that signs verdicts: the judge is asked by
  the guard's side, never by the ledger agent);
- it is the verdict's: the same run, draft, attempt, draft hash and verdict ``event_id``;
- its ``digest`` is the digest of its own ``model`` and ``case`` — so the signature covers every word the
  judge was shown, and which model and prompt version were asked;
- what it showed the judge is the ledger's: every evidence item of the case is an item of an entry of
  the receipt (the same tool call and document, the excerpt as the projection holds it; a search that
  found nothing shows its query);
- the verdict says what the judgement says: in ``enforce`` mode its semantic violations (codes 24-26)
  are exactly the claims labelled unsupported or contradicted (or the one for a draft not asked), in
  ``advise`` mode it has none.

What it does not prove: that the model was right. It proves which model, under which prompt, was shown
which evidence and said what, and that the verdict followed from that.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from models.semantic import JudgeCase, JudgementEvent
from streams import codec
from streams.codec import JSONObject
from streams.trust.keys import TrustedKeys
from streams.trust.messages import judgement_digest

SEMANTIC_CODES = {
    "unsupported": "CLAIM_SEMANTIC_UNSUPPORTED",
    "contradicted": "CLAIM_SEMANTIC_CONTRADICTED",
}
NOT_ASKED_CODE = "SEMANTIC_INPUT_TOO_LARGE"
_ALL_CODES = frozenset((*SEMANTIC_CODES.values(), NOT_ASKED_CODE))
_SAME_AS_VERDICT = ("run_id", "draft_id", "attempt", "draft_sha256")


def _shown_items(entries: Sequence[Any]) -> dict[tuple[str, str | None], str]:
    """What the receipt's entries showed the agent: (tool call, document) → excerpt, (tool call, None) →
    the query of a search that found nothing."""
    out: dict[tuple[str, str | None], str] = {}
    for entry in entries:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("projection"), str):
            continue
        try:
            shown = codec.loads(entry["projection"])
        except codec.JSONDecodeError:
            continue
        if not isinstance(shown, Mapping):
            continue
        tool_call_id = str(shown.get("tool_call_id"))
        out[(tool_call_id, None)] = str(shown.get("query"))
        for item in shown.get("evidence") or []:
            if isinstance(item, Mapping):
                out[(tool_call_id, str(item.get("document_id")))] = str(item.get("excerpt"))
    return out


def judgement_failures(
    judgement: Any,
    verdict: JSONObject | None,
    entries: Sequence[Any],
    trusted: TrustedKeys | None,
    *,
    every_item: bool = True,
) -> list[str]:
    """Every reason a judgement does not hold for ``verdict`` (empty: it does), one line each: its
    signature (with ``trusted`` keys), the verdict it names, its digest against its own model and case,
    its evidence against ``entries``, and the verdict's semantic violations against its labels.

    ``every_item``: every evidence item of the case must be an item of one of ``entries`` (a receipt:
    they are all the snapshot's); False: an item of a tool call of the verdict's snapshot whose entry is
    not among ``entries`` is not compared (a page or a receipt being built, whose entries may not all be
    at hand yet); one of a tool call the verdict does not cite still fails. Without a ``verdict`` (a
    judgement read on its own, as a rebuild reads the topic) only what holds without one is asked: the
    signature, the digest, and (``every_item`` False) the items of the tool calls ``entries`` hold.
    """
    if not isinstance(judgement, Mapping):
        return ["judgement: not an object"]
    out: list[str] = []
    if trusted is not None:
        why = trusted.verify_judgement(cast(JudgementEvent, judgement))  # unchecked: read field by field
        if why is not None:
            out.append(f"judgement: {why}")
    if verdict is not None:
        out += names_failures(judgement, verdict)
    case, model = judgement.get("case"), judgement.get("model")
    if not isinstance(case, Mapping) or not isinstance(model, str):
        return [*out, "judgement: no case or model"]
    try:
        digest = judgement_digest(model, cast(JudgeCase, case))
    except codec.JSONEncodeError:
        digest = ""
    if digest != judgement.get("digest"):
        out.append("judgement: its digest is not that of its model and case (what the judge was shown)")
    shown = _shown_items(entries)
    items = case.get("evidence") or []
    # not at hand: a tool call of the verdict's snapshot (without a verdict: any tool call) whose entry
    # the caller lacks (every_item False)
    snapshot = verdict.get("evidence_snapshot") if verdict is not None else items
    cited = (
        {str(i.get("tool_call_id")) for i in snapshot if isinstance(i, Mapping)}
        if isinstance(snapshot, list)
        else set()
    )
    absent = set() if every_item else cited - {tool_call_id for tool_call_id, _ in shown}
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            out.append(f"judgement: case.evidence[{index}] is not an object")
            continue
        key = (str(item.get("tool_call_id")), item.get("document_id"))
        if key[0] in absent:
            continue
        if key not in shown or shown[key] != item.get("text"):
            out.append(f"judgement: case.evidence[{index}] is not what the receipt's entries hold")
    if verdict is not None:
        out += _verdict_follows(judgement, verdict)
    return out


def names_failures(judgement: JSONObject, verdict: JSONObject) -> list[str]:
    """Why a judgement is not ``verdict``'s: another run, draft, attempt, draft hash or verdict event id."""
    out = [
        f"judgement: its {name} is not the verdict's"
        for name in _SAME_AS_VERDICT
        if judgement.get(name) != verdict.get(name)
    ]
    if judgement.get("verdict_event_id") != verdict.get("event_id"):
        out.append("judgement: it names another verdict (verdict_event_id)")
    return out


def _verdict_follows(judgement: JSONObject, verdict: JSONObject) -> list[str]:
    """The verdict's semantic violations are what the judgement says (enforce), or none (advise)."""
    listed = verdict.get("violations")
    found = [
        (v.get("code"), v.get("path"))
        for v in (listed if isinstance(listed, list) else [])
        if isinstance(v, Mapping) and v.get("code") in _ALL_CODES
    ]
    claims = judgement.get("claims")
    expected: list[tuple[Any, Any]] = []
    if judgement.get("mode") == "enforce":
        if judgement.get("status") == "NOT_ASKED":
            expected = [(NOT_ASKED_CODE, "")]
        for claim in claims if isinstance(claims, list) else []:
            if isinstance(claim, Mapping) and claim.get("label") in SEMANTIC_CODES:
                expected.append((SEMANTIC_CODES[claim["label"]], claim.get("path")))
    if verdict.get("violations_truncated") is True:
        return []  # the listed violations may stop before the judge's
    if found != expected:
        return ["judgement: the verdict's semantic violations are not what the judgement says"]
    return []
