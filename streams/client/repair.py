r"""What goes back to the model after a verdict: a repair prompt for REJECT, the fixed report for FALLBACK.

The design note's loop (§9): a draft whose citations or structure break a rule goes back to the
model with the violations and what to change ("evidence-repair-prompt"); a draft that still fails
on its last attempt is replaced by the fixed FALLBACK report. One instruction per violation code,
in Chinese as the design note's prompts are, English on request. The instructions are fixed text:
nothing from the draft is echoed except the code and the path (a path is built by the guard from
item indexes and field names, never from the model's words), so the prompt cannot carry an
injection back into the model — except the semantic review's codes 24-25, which name the judge's reason
(escaped, at most 80 characters, as the verdict's message holds it: SPEC 4.4), and the review's codes
(21-23): for those the prompt names each
unsupported specific as the draft wrote it, escaped (JSON string escapes, invisible characters as
``\uXXXX``) and at most 80 characters, with its path, and, where the cited evidence gives the same key
another value, that value (SPEC 4.2; docs/review-rules.md §9). It takes them from the violation's message,
which the guard writes in one fixed form (:func:`streams.stations.review.message`); a message in any
other form is not echoed, and the prompt falls back to the code's instruction alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal, cast

from models.verdict import FallbackReport, Verdict, Violation
from models.vocab import FALLBACK_LIMITATION, VerdictKind, ViolationCode

Language = Literal["zh", "en"]

Code = ViolationCode

_ZH_UNVERIFIABLE = "账本中该工具调用的结果无法校验：不要引用它，改用其他证据或写入 limitations。"
_EN_UNVERIFIABLE = (
    "The ledger's result for this tool call cannot be verified: do not cite it; use other evidence or "
    "state it in limitations."
)

INSTRUCTIONS: dict[Language, dict[ViolationCode, str]] = {
    "zh": {
        Code.DRAFT_UNPARSABLE: "输出必须是一个合法的 JSON 对象，名字不得重复，draft_id 为 1-128 个字符，"
        "每个 analysis/action_plan 条目都有字符串 id，各字段类型符合 DiagnosisDraft 的 schema。",
        Code.DRAFT_TOO_LARGE: "草稿过大：缩短内容，analysis 与 action_plan 各不超过 100 条，"
        "每个引用列表不超过 50 项，全文引用的工具调用不超过 50 个。",
        Code.RUN_ID_MISSING: "run_id 必须是本次运行的 id（1-128 个字符，仅 [A-Za-z0-9._-]），原样填写。",
        Code.ANALYSIS_EMPTY: "analysis 至少需要一条分析，每条都要引用支撑它的工具调用。",
        Code.ID_DUPLICATE: "analysis 与 action_plan 的 id 共用一个命名空间，每个 id 只能使用一次。",
        Code.CONTENT_EMPTY: "content 不能为空或只有空白字符，写出实际内容。",
        Code.ANALYSIS_KIND_INVALID: "kind 只能是 NORMAL 或 NEGATIVE_OBSERVATION。",
        Code.ANALYSIS_CITATION_MISSING: "这条分析没有引用任何工具调用："
        "在 tool_call_ids 中填写支撑它的工具调用 id。",
        Code.REFERENCE_MISSING: "结论或行动项必须在 based_on_analysis_ids 中列出它依据的分析 id。",
        Code.REFERENCE_UNKNOWN_ANALYSIS: "based_on_analysis_ids 只能引用本草稿中存在的 analysis 条目 id。",
        Code.LIMITATIONS_MISSING: "limitations 必填：至少写一条非空的局限说明。",
        Code.CITATION_NOT_FOUND: "引用的工具调用在账本中不存在：只引用本次运行中真实调用过的工具调用 id。",
        Code.CITATION_NOT_READY: "引用的工具调用没有可用结果（失败或未就绪）：删除该引用，或改用其他证据。",
        Code.CITATION_CROSS_RUN: "引用的工具调用属于其他运行：只能引用本次运行自己的工具调用。",
        Code.NORMAL_CITES_NO_EVIDENCE: "NORMAL 分析引用了 NO_EVIDENCE 的结果：改为 NEGATIVE_OBSERVATION，"
        "或改引用查到证据的工具调用。",
        Code.NEGATIVE_CITES_EVIDENCE: "NEGATIVE_OBSERVATION 引用了查到证据（EVIDENCE_FOUND）的结果："
        "改为 NORMAL 并依据证据内容书写，或删除该引用。",
        Code.CITATION_DOCUMENT_UNKNOWN: "document_ids 只能填写所引用工具调用结果中出现过的 "
        "document_id，逐字照抄。",
        Code.LEDGER_PAYLOAD_INVALID: _ZH_UNVERIFIABLE,
        Code.LEDGER_PAYLOAD_UNKNOWN_FIELD: _ZH_UNVERIFIABLE,
        Code.LEDGER_PAYLOAD_TAMPERED: "账本中该工具调用的结果校验失败：不要引用它，"
        "改用其他证据或写入 limitations。",
        Code.CLAIM_NUMBER_UNSUPPORTED: "这段文字中的数字在它所引用的证据中不存在：删除该数字，"
        "或改引用原文含有这个数字的工具调用结果，并照原文书写（数值与单位都照原文，不要换算）。",
        Code.CLAIM_IDENTIFIER_UNSUPPORTED: "这段文字中的标识（配置项、路径、版本、主机、错误码、命令等）"
        "在它所引用的证据中不存在：删除它，或改引用含有它的工具调用结果，并逐字照抄证据中的写法。",
        Code.CLAIM_QUOTE_UNSUPPORTED: "这段文字中引号或代码内的内容不是所引用证据的原文：逐字引用证据原文，"
        "或去掉引号改为转述，或改引用含有这句原文的工具调用结果。",
        Code.CLAIM_SEMANTIC_UNSUPPORTED: "语义审查认为这段文字说得比它引用的证据多（如把可能原因写成根因、"
        "证据没有的推理步骤、把仅供参考的片段当作确定事实）：按证据的确定程度改写，"
        "或改引用确实支持它的工具调用结果，证据不足时写入 limitations。",
        Code.CLAIM_SEMANTIC_CONTRADICTED: "语义审查认为这段文字与它引用的证据相矛盾：按证据原意改写"
        '（注意否定、"从不/总是"等词和数值、行为），或删除这一论断。',
        Code.SEMANTIC_INPUT_TOO_LARGE: "论断与其引用的证据太长，语义审查不予发送：精简文字，"
        "或在 document_ids 中只列出真正依据的文档。",
    },
    "en": {
        Code.DRAFT_UNPARSABLE: "Output one valid JSON object with no repeated names, a draft_id of 1-128 "
        "characters, a string id on every analysis and action item, and every field of the type the "
        "DiagnosisDraft schema gives.",
        Code.DRAFT_TOO_LARGE: "The draft is too large: shorten it; at most 100 analysis and 100 action "
        "items, 50 entries per citation list and 50 distinct tool calls in the whole draft.",
        Code.RUN_ID_MISSING: "Set run_id to this run's id exactly (1-128 characters of [A-Za-z0-9._-]).",
        Code.ANALYSIS_EMPTY: "Give at least one analysis item, each citing the tool calls that support it.",
        Code.ID_DUPLICATE: "Analysis and action ids share one namespace: use each id once.",
        Code.CONTENT_EMPTY: "Write the content: it must not be empty or only whitespace.",
        Code.ANALYSIS_KIND_INVALID: "Set kind to NORMAL or NEGATIVE_OBSERVATION.",
        Code.ANALYSIS_CITATION_MISSING: "This analysis cites no tool call: list the supporting tool call ids "
        "in tool_call_ids.",
        Code.REFERENCE_MISSING: "List the analysis ids this conclusion or action is based on in "
        "based_on_analysis_ids.",
        Code.REFERENCE_UNKNOWN_ANALYSIS: "based_on_analysis_ids may name only analysis ids of this draft.",
        Code.LIMITATIONS_MISSING: "limitations is required: write at least one non-empty limitation.",
        Code.CITATION_NOT_FOUND: "The cited tool call is not in the ledger: cite only tool calls this run "
        "actually made.",
        Code.CITATION_NOT_READY: "The cited tool call has no usable result (it failed): remove the citation "
        "or use other evidence.",
        Code.CITATION_CROSS_RUN: "The cited tool call belongs to another run: cite only this run's tool "
        "calls.",
        Code.NORMAL_CITES_NO_EVIDENCE: "A NORMAL item cites a NO_EVIDENCE result: make it a "
        "NEGATIVE_OBSERVATION or cite a tool call that found evidence.",
        Code.NEGATIVE_CITES_EVIDENCE: "A NEGATIVE_OBSERVATION cites a result that found evidence: make it "
        "NORMAL and base it on that evidence, or remove the citation.",
        Code.CITATION_DOCUMENT_UNKNOWN: "document_ids may hold only document_id values shown in the cited "
        "tool calls' results, copied exactly.",
        Code.LEDGER_PAYLOAD_INVALID: _EN_UNVERIFIABLE,
        Code.LEDGER_PAYLOAD_UNKNOWN_FIELD: _EN_UNVERIFIABLE,
        Code.LEDGER_PAYLOAD_TAMPERED: "The ledger's result for this tool call failed verification: do not "
        "cite it; use other evidence or state it in limitations.",
        Code.CLAIM_NUMBER_UNSUPPORTED: "This text states a number that is in none of the evidence it cites: "
        "remove the number, or cite the tool call result that contains it and write it as the evidence "
        "does (the value and the unit as given, not converted).",
        Code.CLAIM_IDENTIFIER_UNSUPPORTED: "This text names an identifier (a config key, path, version, "
        "host, error code, command ...) that is in none of the evidence it cites: remove it, or cite the "
        "tool call result that contains it and copy it exactly as the evidence writes it.",
        Code.CLAIM_QUOTE_UNSUPPORTED: "This text quotes words (or code) that are not in the evidence it "
        "cites: quote the evidence word for word, or drop the quotation marks and paraphrase, or cite the "
        "tool call result that contains the quoted words.",
        Code.CLAIM_SEMANTIC_UNSUPPORTED: "The semantic review finds this text says more than the evidence it "
        "cites (a possible cause stated as the root cause, a reasoning step the evidence does not give, a "
        "reference-level excerpt stated as fact): write it as certain as the evidence is, or cite the tool "
        "call result that supports it, or state the gap in limitations.",
        Code.CLAIM_SEMANTIC_CONTRADICTED: "The semantic review finds this text contradicts the evidence it "
        "cites: write what the evidence says (mind negations, 'never'/'always', values and behaviour), or "
        "remove the claim.",
        Code.SEMANTIC_INPUT_TOO_LARGE: "The claims and the evidence they cite are too long to be sent to the "
        "semantic review: shorten the texts, or list in document_ids only the documents they rest on.",
    },
}
"""One fixed instruction per violation code and language."""

_FRAME: dict[Language, dict[str, str]] = {
    "zh": {
        "specific": "{index}. [{code}] 位置 {path}：{what} {specific} 不在它引用的证据中{hint}。"
        "{instruction}",
        "gives": "（所引用的证据中 {name} 的值是 {values}）",
        "too_many": "{index}. [{code}] 位置 {path}：这段文字列出的数值、标识与引文太多，"
        "审查读到 {specific} 为止：只写证据支持的关键内容，拆分或精简这段文字。",
        "names": "（所引用的证据中的写法是 {name}）",
        "or": "、",
        "number": "数字",
        "identifier": "标识",
        "quotation": "引文",
        "head": "你上一版诊断草稿（attempt {attempt}）未通过证据校验，共 {count} 处问题。"
        "请逐条修正后重新输出完整的 DiagnosisDraft JSON，attempt 设为 {next_attempt}：",
        "item": "{index}. [{code}] 位置 {path}：{instruction}",
        "more": "（另有 {hidden} 处问题未列出，修正以上问题后会再次校验。）",
        "tail": "只能引用本次运行的工具调用结果；证据不足时 conclusion 可以为 null，limitations 必填。",
        "root": "（整个草稿）",
        "judged": "{index}. [{code}] 位置 {path}：语义审查的理由：{reason}。{instruction}",
    },
    "en": {
        "specific": "{index}. [{code}] at {path}: the {what} {specific} is not in the evidence it "
        "cites{hint}. {instruction}",
        "gives": " (the cited evidence gives {name} the value {values})",
        "too_many": "{index}. [{code}] at {path}: this text states more specifics than the review reads; it "
        "stopped at {specific}: keep to what the evidence supports and shorten or split the text.",
        "names": " (the cited evidence writes {name})",
        "or": " or ",
        "number": "number",
        "identifier": "identifier",
        "quotation": "quotation",
        "head": "Your diagnosis draft (attempt {attempt}) failed the evidence check with {count} problem(s). "
        "Fix each one and output the whole DiagnosisDraft JSON again, with attempt {next_attempt}:",
        "item": "{index}. [{code}] at {path}: {instruction}",
        "more": "({hidden} more problem(s) not listed; the draft is checked again after these are fixed.)",
        "tail": "Cite only this run's tool call results; with too little evidence conclusion may be null; "
        "limitations is required.",
        "root": "(the whole draft)",
        "judged": "{index}. [{code}] at {path}: the semantic review's reason: {reason}. {instruction}",
    },
}


def repair_prompt(verdict: Verdict, language: Language = "zh") -> str | None:
    """The text that goes back to the model for a verdict: None for PASS.

    REJECT: per violation its code, path and the fixed instruction of what to change.
    FALLBACK: the fixed report to publish instead of the draft (as JSON text: ``{"conclusion": null,
    "limitations": [...]}``), since there is no attempt left.

    Raises:
        ValueError: ``verdict`` is not a verdict, or the language is not ``zh``/``en``.
    """
    if language not in INSTRUCTIONS:
        raise ValueError(f"language must be 'zh' or 'en', not {language!r}")
    kind = verdict.get("verdict")
    if kind == VerdictKind.PASS:
        return None
    if kind == VerdictKind.FALLBACK:
        from streams import codec

        return codec.dumps(fallback_report(verdict)).decode("utf-8")
    if kind != VerdictKind.REJECT:
        raise ValueError(f"not a verdict: verdict is {kind!r}, expected PASS, REJECT or FALLBACK")
    frame = _FRAME[language]
    violations = list(verdict.get("violations") or [])
    count = int(verdict.get("violation_count") or len(violations))
    attempt = int(verdict.get("attempt") or 1)
    lines = [frame["head"].format(attempt=attempt, count=count, next_attempt=attempt + 1)]
    for index, violation in enumerate(violations, start=1):
        code = ViolationCode(violation["code"])
        path = violation.get("path") or frame["root"]
        instruction = INSTRUCTIONS[language][code]
        reason = _judge_reason(violation) if code in _JUDGED_CODES else None
        if reason is not None:
            lines.append(
                frame["judged"].format(
                    index=index, code=code, path=path, reason=reason, instruction=instruction
                )
            )
            continue
        named = _specific(violation) if code in _CLAIM_CODES else None
        if named is not None:
            what, specific, name, values = named
            hint = ""
            if values == ["…"]:
                lines.append(frame["too_many"].format(index=index, code=code, path=path, specific=specific))
                continue
            if name is not None and values:
                hint = frame["gives"].format(name=name, values=frame["or"].join(values))
            elif name is not None:
                hint = frame["names"].format(name=name)
            lines.append(
                frame["specific"].format(
                    index=index,
                    code=code,
                    path=path,
                    what=frame[what],
                    specific=specific,
                    hint=hint,
                    instruction=instruction,
                )
            )
            continue
        lines.append(frame["item"].format(index=index, code=code, path=path, instruction=instruction))
    if count > len(violations):
        lines.append(frame["more"].format(hidden=count - len(violations)))
    lines.append(frame["tail"])
    return "\n".join(lines)


_CLAIM_CODES = frozenset(
    {Code.CLAIM_NUMBER_UNSUPPORTED, Code.CLAIM_IDENTIFIER_UNSUPPORTED, Code.CLAIM_QUOTE_UNSUPPORTED}
)
_STRING = r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})){0,80}…?"'
_MESSAGE = re.compile(
    rf"(?P<what>number|identifier|quotation) (?P<specific>{_STRING}) "
    rf"(?:is in none of the cited evidence|(?P<many>is one more than the [0-9]+ specifics a text may state: "
    rf"the review reads no further))"
    rf"(?:; the cited evidence (?:gives (?P<key>{_STRING}) the value "
    rf"(?P<values>{_STRING}(?: or {_STRING}){{0,3}})"
    rf"|names (?P<name>{_STRING})))?"
)
_ONE_STRING = re.compile(_STRING)
_JUDGED_CODES = frozenset({Code.CLAIM_SEMANTIC_UNSUPPORTED, Code.CLAIM_SEMANTIC_CONTRADICTED})
_JUDGED = re.compile(
    rf"the semantic judge says this claim (?:is not supported by|is contradicted by) the evidence it cites: "
    rf"(?P<reason>{_STRING})"
)


def _judge_reason(violation: Violation) -> str | None:
    """From a semantic violation's message (the station's one form, SPEC 4.4): the judge's reason,
    escaped and at most 80 characters as the message holds it; None for any other form."""
    message = violation.get("message")
    if not isinstance(message, str) or len(message) > 1024:
        return None
    match = _JUDGED.fullmatch(message)
    return None if match is None else match["reason"]


def _specific(violation: Violation) -> tuple[str, str, str | None, list[str]] | None:
    """From a review violation's message (the guard's one form): what it is, the specific as the draft
    wrote it (escaped, as in the message), and what the evidence says instead; None for any other form."""
    message = violation.get("message")
    if not isinstance(message, str) or len(message) > 1024:
        return None
    match = _MESSAGE.fullmatch(message)
    if match is None:
        return None
    if match.group("many") is not None:
        return match["what"], match["specific"], "", ["…"]
    if match.group("key") is not None:
        return match["what"], match["specific"], match["key"], _ONE_STRING.findall(match["values"])
    return match["what"], match["specific"], match.group("name"), []


def fallback_report(verdict: Verdict) -> FallbackReport:
    """The fixed report to publish for a FALLBACK verdict (the verdict's own, or SPEC 4's)."""
    report = verdict.get("fallback_report")
    if isinstance(report, Mapping):
        return cast(FallbackReport, dict(report))
    return {"conclusion": None, "limitations": [FALLBACK_LIMITATION]}
