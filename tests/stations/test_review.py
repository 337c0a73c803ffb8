"""SPEC 4.2 (the review of claims, D): the specifics of a text, their support, which texts are reviewed
against what, the order of the violations, and ``guard.review=off``.

The properties hold the station against a literal reading of the SPEC written here from its words
(``spec_specifics``, ``spec_supports``): slow and plain, so that the station's shortcuts (looking in the
evidence as stored before its normal form, the wide-punctuation NFKC) are checked against what they
shortcut.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from models.limits import GuardSettings
from streams import codec
from streams.stations.blank import WHITE_SPACE
from streams.stations.review import (
    CODES,
    COMMON_TERMS,
    Specific,
    claims,
    nfkc,
    normal_form,
    review,
    reviewed_texts,
    specifics,
)
from tests.golden import GOLDEN
from tests.support import memory_ledger, verdict_of

# =============================================================================================
# The SPEC read literally
# =============================================================================================

_WS = set(WHITE_SPACE)


def spec_n(text: str) -> str:
    """N(s): NFKC; A-Z lowered; every White_Space run one space; stripped."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c.lower() if "A" <= c <= "Z" else c for c in text)
    out: list[str] = []
    for c in text:
        if c in _WS:
            if not out or out[-1] != " ":
                out.append(" ")
        else:
            out.append(c)
    return "".join(out).strip(" ")


_PAIRS = {"“": "”", "「": "」", "『": "』", '"': '"', "`": "`"}
_WORD_CHARS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:-")


def spec_specifics(text: str) -> list[tuple[str, str]]:
    """SPEC 4.2 steps 1-3, one character at a time."""
    t = list(unicodedata.normalize("NFKC", text))
    found: list[tuple[int, str, str]] = []
    i = 0
    while i < len(t):
        closer = _PAIRS.get(t[i])
        j = next((k for k in range(i + 1, len(t)) if t[k] == closer), None) if closer else None
        if j is None:
            i += 1
            continue
        value = spec_n("".join(t[i + 1 : j]))
        if len(value) >= 2:
            found.append((i, "quote", value))
        for k in range(i, j + 1):
            t[k] = " "
        i = j + 1
    i = 0
    while i < len(t):
        if t[i] not in _WORD_CHARS:
            i += 1
            continue
        j = i
        while j < len(t) and t[j] in _WORD_CHARS:
            j += 1
        word = "".join(t[i:j]).strip("./:-")
        if word:
            unit = re.fullmatch(r"([0-9]+(\.[0-9]+)?)[A-Za-z]+", word)
            if re.fullmatch(r"[0-9]+([./:-][0-9]+)*", word):
                if len(word) > 1:
                    found.append((i, "number", word))
            elif unit:
                if len(unit.group(1)) > 1:
                    found.append((i, "number", unit.group(1)))
            elif (
                re.search(r"[0-9]", word)
                or "_" in word
                or re.search(r"[A-Za-z0-9]/[A-Za-z]|[A-Za-z]/[A-Za-z0-9]", word)
                or re.search(r"[A-Za-z0-9]{2}\.[A-Za-z0-9]{2}", word)
            ) and word.lower() not in COMMON_TERMS:
                found.append((i, "identifier", word.lower()))
        i = j
    out: list[tuple[str, str]] = []
    for _, kind, value in sorted(found):
        if (kind, value) not in out:
            out.append((kind, value))
    return out


def spec_supports(kind: str, value: str, evidence: str) -> bool:
    """A number: in E with no ASCII digit directly before or after; else a substring of E."""
    if kind != "number":
        return value in evidence
    return any(
        evidence.startswith(value, at)
        and (at == 0 or evidence[at - 1] not in "0123456789")
        and (at + len(value) == len(evidence) or evidence[at + len(value)] not in "0123456789")
        for at in range(len(evidence))
    )


# =============================================================================================
# Builders: a projection, and a text reviewed against it
# =============================================================================================


def projection(
    tool_call_id: str = "call_x1",
    *excerpts: str,
    query: str = "网关超时怎么排查",
    docs: list[str] | None = None,
) -> dict[str, Any]:
    evidence = [
        {
            "document_id": (docs or [])[k] if docs else f"doc-{k}#chunk-{k}",
            "source": f"doc-{k}",
            "title": "网关超时排查",
            "breadcrumb": None,
            "excerpt": excerpt,
        }
        for k, excerpt in enumerate(excerpts)
    ]
    return {
        "evidence_status": "EVIDENCE_FOUND" if evidence else "NO_EVIDENCE",
        "tool_call_id": tool_call_id,
        "query": query,
        "evidence": evidence,
        "returned_count": len(evidence),
        "relevance_level": "PRECISE" if evidence else None,
        "truncated": False,
    }


def one_text(content: str, *excerpts: str, query: str = "网关超时怎么排查") -> list[tuple[str, str, str]]:
    """The D violations of one analysis item saying ``content`` over one projection of ``excerpts``."""
    draft = {
        "run_id": "run-g",
        "analysis": [{"id": "a1", "kind": "NORMAL", "content": content, "tool_call_ids": ["call_x1"]}],
    }
    found = review(draft, [True], {"call_x1": projection("call_x1", *excerpts, query=query)})
    return [(v["code"], v["path"], v["message"]) for v in found]


def unsupported(content: str, *excerpts: str) -> list[str]:
    """The values D finds unsupported, in order."""
    return [re.sub(r"^\w+ '(.*)' is in none.*$", r"\1", m) for _, _, m in one_text(content, *excerpts)]


# =============================================================================================
# Normal form and extraction, by example
# =============================================================================================


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  Proxy_Read_Timeout\u3000默认\t\t60S  ", "proxy_read_timeout 默认 60s"),
        ("ＡＢＣ６０ｓ", "abc60s"),  # NFKC first, then A-Z lowered
        ("ǅ Ä ſ", "dž Ä s"),  # NFKC makes ǅ "Dž" and ſ "s"; then only A-Z are lowered (Ä stays)
        ("a\u00a0\u2028\u3000b", "a b"),
        ("a\x1cb", "a\x1cb"),  # U+001C is not White_Space, though str.isspace says it is
        ("", ""),
    ],
)
def test_normal_form(text: str, expected: str) -> None:
    assert normal_form(text) == expected == spec_n(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # SPEC's own examples of each kind
        (
            "60 1.5 10.0.0.1:8080 2026-09-29",
            [("number", v) for v in ("60", "1.5", "10.0.0.1:8080", "2026-09-29")],
        ),
        ("60s 3000ms 8gb 1.5GB", [("number", "60"), ("number", "3000"), ("number", "1.5")]),  # 8gb: one digit
        (
            "proxy_read_timeout v1.14.2 /etc/nginx/nginx.conf chunk-1",
            [("identifier", v) for v in ("proxy_read_timeout", "v1.14.2", "etc/nginx/nginx.conf", "chunk-1")],
        ),
        ("e.g. nginx HTTP read-only", []),
        # the single-digit exemption: no specific, and not then an identifier
        ("第1步 1 个节点 5s 0", []),
        # stripped punctuation: 60. and /etc/ are 60 and etc
        ("默认 60. 见 /etc/ 与 /var/log/nginx/", [("number", "60"), ("identifier", "var/log/nginx")]),
        # full-width forms, by NFKC
        ("默认６０ｓ，PROXY＿READ＿TIMEOUT", [("number", "60"), ("identifier", "proxy_read_timeout")]),
        # a number with a unit and the bare number are one specific, at the first offset
        ("60s 后再等 60 秒", [("number", "60")]),
        # common terms (compared after lowering), and 2xx-5xx, which are numbers with a unit of one digit
        ("P99 HTTP/1.1 x86_64 K8S utf-8 SHA256 5xx 2FA tls1.3 p999", []),
        ("p98 http/1.2", [("identifier", "p98"), ("identifier", "http/1.2")]),
        # slash next to a letter, a dot between two pairs
        (
            "a/b 1/2 x/1 ab.cd a.b",
            [("identifier", "a/b"), ("number", "1/2"), ("identifier", "x/1"), ("identifier", "ab.cd")],
        ),
        # quotes: each pair its own, spans blanked so the two sides stay apart
        ("执行`nginx -s reload`后", [("quote", "nginx -s reload")]),
        ("a“b c”60", [("quote", "b c"), ("number", "60")]),
        ("「x」 “y” 『 z 』", []),  # spans of one character after N are not quotes (but still blanked)
        ("「x1」9", [("quote", "x1")]),  # x1 is the quotation, not an identifier; 9 is one digit
        ("“unmatched 「ok」 60", [("quote", "ok"), ("number", "60")]),  # an opener with no closer is text
        ("「mismatched” 60」", [("quote", "mismatched” 60")]),  # an opener pairs only with its own closer
        ('"a b" "c d"', [("quote", "a b"), ("quote", "c d")]),
        ("「Proxy_Read  Timeout」", [("quote", "proxy_read timeout")]),  # value is N(span)
        # each (kind, value) once, in offset order
        (
            "max_connections 100 max_connections 100 “100”",
            [("identifier", "max_connections"), ("number", "100"), ("quote", "100")],
        ),
    ],
)
def test_specifics(text: str, expected: list[tuple[str, str]]) -> None:
    assert [tuple(s) for s in specifics(text)] == expected == spec_specifics(text)


# =============================================================================================
# Support, by example
# =============================================================================================

EXCERPT = "网关超时先检查 upstream 配置：proxy_read_timeout 默认 60s，超过即返回 504。"


@pytest.mark.parametrize(
    ("content", "excerpts", "expected"),
    [
        ("proxy_read_timeout 默认 60", [EXCERPT], []),  # 60 beside "s" in the evidence: supported
        ("默认 60s", ["默认 60 秒"], []),  # the unit is not compared
        ("3000ms", ["timeout 3000 ms"], []),
        ("3000ms", ["timeout 30000 ms"], ["3000"]),  # a digit after it
        ("默认 60", ["默认 600"], ["60"]),
        ("默认 60", ["默认 160"], ["60"]),
        ("默认 60", ["1600 或 60"], []),  # one clean occurrence is enough
        ("默认 1.5", ["默认 1.50"], ["1.5"]),
        ("版本 1.14", ["v1.14.2"], []),  # a dot is not a digit
        ("port 8080", ["10.0.0.1:8080"], []),
        ("默认 ６０", ["默认 60"], []),  # NFKC on both sides
        ("默认 60", ["默认 ６０"], []),
        ("默认 60", ["默认 ６００"], ["60"]),  # a full-width digit after it is a digit after NFKC
        ("默认 60", ["默认 60\u00b2"], ["60"]),  # so is a superscript
        ("nginx.conf", ["/etc/nginx/nginx.conf"], []),  # an identifier inside a longer evidence word
        ("max_conn", ["max_connections"], []),  # substring, by the SPEC's rule
        ("max_conns", ["max_connections"], ["max_conns"]),
        ("MAX_CONNECTIONS", ["Max_Connections"], []),  # ASCII letter case on neither side
        ("proxy_read_timeout", ["ＰＲＯＸＹ_read_timeout"], []),
        ("café_1", ["cafe\u0301_1"], []),  # the word is "_1" (é is not ASCII), in the evidence
        ("cafe_1", ["cafe\u0301_1"], ["cafe_1"]),  # NFKC joins e and U+0301: cafe_1 is not in E
        ("“upstream 配置”", [EXCERPT], []),
        ("“upstream   配置”", ["upstream\n配置"], []),  # White_Space runs are one space on both sides
        ("“Upstream 配置”", [EXCERPT], []),
        ("“upstream 配置。”", [EXCERPT], ["upstream 配置。"]),
        ("「nginx -s reload」", ["执行 `nginx -s reload`"], []),
        ("「nginx -s restart」", ["执行 `nginx -s reload`"], ["nginx -s restart"]),
        ("1 个节点，第 2 步", ["无关"], []),  # single digits are never specifics
        ("网关超时怎么排查 “网关超时怎么排查”", [], []),  # the query is evidence
        ("见 call_x1 与 doc-0#chunk-0", ["x"], []),  # the tool_call_id and document_id are evidence
        ("a1 与 run-g 与 a9", ["x"], ["a9"]),  # the run_id and the draft's item ids may be named
    ],
)
def test_support(content: str, excerpts: list[str], expected: list[str]) -> None:
    assert unsupported(content, *excerpts) == expected


def test_a_quotation_may_run_across_two_evidence_items() -> None:
    """E is the evidence joined with a newline: an item's end and the next one's start, one space apart."""
    assert unsupported("「返回 504。 doc-1#chunk-1」", EXCERPT, "后续") == []


# =============================================================================================
# Properties against the literal reading
# =============================================================================================

# Characters that make the shortcuts work for their money: wide forms, marks NFKC joins, digits NFKC
# makes, White_Space of every kind, quote marks, word punctuation, CJK.
_TRICKY = (
    "0123456789aAbBcCeEkKsSxX_./:- \n\t"
    '“”「」『』"`'
    "０１２６ＡａＳｓ＿．／：－，：；（）…\u3000\u00a0\u2028"
    "\u0301\u0308\u00b2\u2460\u00bd\ufb01\u212a\u017f\u0e33\uff9e\u1161\u314f\x1c"
    "默认超时网关"
)
tricky = st.text(alphabet=_TRICKY, max_size=40)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tricky)
def test_nfkc_is_unicodedatas(text: str) -> None:
    assert nfkc(text) == unicodedata.normalize("NFKC", text)
    assert normal_form(text) == spec_n(text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tricky)
def test_specifics_as_the_spec_reads(text: str) -> None:
    assert [tuple(s) for s in specifics(text)] == spec_specifics(text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(tricky, min_size=1, max_size=4), tricky)
def test_support_as_the_spec_reads(excerpts: list[str], content: str) -> None:
    """Whatever the shortcut, a specific is supported exactly when E, built as the SPEC says, holds it."""
    draft = {"run_id": "run-g", "analysis": [{"id": "a1", "content": content, "tool_call_ids": ["call_x1"]}]}
    (text,) = reviewed_texts(draft, [True], {"call_x1": projection("call_x1", *excerpts)})
    strings = ["call_x1", "网关超时怎么排查"]
    for k, excerpt in enumerate(excerpts):
        strings += [f"doc-{k}#chunk-{k}", f"doc-{k}", "网关超时排查", excerpt]
    evidence = spec_n("\n".join([*strings, "run-g", "a1"]))
    for kind, value in spec_specifics(content):
        assert text.evidence.supports(Specific(kind, value)) == spec_supports(kind, value, evidence), (
            kind,
            value,
        )  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["60", "100", "1.5", "10.0.0.1", "2026-09-29", "max_connections", "v1.2"]), tricky, tricky
)
def test_a_specific_in_the_evidence_as_written_is_supported_unless_its_neighbours_join_it(
    value: str, before: str, after: str
) -> None:
    """Put a specific in the evidence between arbitrary text: supported exactly as the SPEC's E says."""
    excerpt = f"{before}{value}{after}"
    evidence = spec_n(
        "\n".join(["call_x1", "q", "doc-0#chunk-0", "doc-0", "网关超时排查", excerpt, "run-g", "a1"])
    )
    kind = spec_specifics(value)[0][0]
    expected = [] if spec_supports(kind, value, evidence) else [value]
    assert unsupported(f"是 {value} 吗", excerpt) == expected


# =============================================================================================
# Which texts are reviewed, against what (SPEC 4.2)
# =============================================================================================

GUARD = GOLDEN / "guard"


def golden_ledger() -> Any:
    return memory_ledger(
        codec.loads(line) for line in GUARD.joinpath("ledger.jsonl").read_bytes().splitlines()
    )


def judged(draft: dict[str, Any], review_setting: str = "enforce") -> list[tuple[str, str]]:
    verdict = verdict_of(codec.dumps(draft), golden_ledger(), GuardSettings(review=review_setting))  # type: ignore[arg-type]
    return [(v["code"], v["path"]) for v in verdict["violations"]]


def item(item_id: str, content: str, *calls: str, kind: str = "NORMAL", **more: Any) -> dict[str, Any]:
    return {"id": item_id, "kind": kind, "content": content, "tool_call_ids": list(calls), **more}


def draft_of(
    analysis: list[dict[str, Any]], conclusion: Any = None, actions: Any = (), **more: Any
) -> dict[str, Any]:
    return {
        "run_id": "run-g",
        "draft_id": "d-1",
        "analysis": analysis,
        "conclusion": conclusion,
        "action_plan": list(actions),
        "limitations": ["仅基于知识库，2025 年以前的记录未查看"],  # limitations are never reviewed
        **more,
    }


NUMBER, IDENTIFIER, QUOTE = (
    "CLAIM_NUMBER_UNSUPPORTED",
    "CLAIM_IDENTIFIER_UNSUPPORTED",
    "CLAIM_QUOTE_UNSUPPORTED",
)


def test_violations_in_text_order_then_specific_order() -> None:
    draft = draft_of(
        [item("a1", "“x y” 默认 30s max_conns", "call_x1"), item("a2", "默认 45s", "call_x1")],
        {"content": "调到 120s", "based_on_analysis_ids": ["a1"]},
        [{"id": "p1", "content": "改 max_conns 为 200", "based_on_analysis_ids": ["a2"]}],
    )
    assert judged(draft) == [
        (QUOTE, "analysis[0].content"),
        (NUMBER, "analysis[0].content"),
        (IDENTIFIER, "analysis[0].content"),
        (NUMBER, "analysis[1].content"),
        (NUMBER, "conclusion.content"),
        (IDENTIFIER, "action_plan[0].content"),
        (NUMBER, "action_plan[0].content"),
    ]


def test_d_follows_a_b_and_c() -> None:
    draft = draft_of(
        [item("a1", "默认 30s", "call_x1"), item("a2", "默认 45s", "call_missing")], limitations=[]
    )
    assert judged(draft) == [
        ("LIMITATIONS_MISSING", "limitations"),
        ("CITATION_NOT_FOUND", "analysis[1].tool_call_ids[0]"),
        (NUMBER, "analysis[0].content"),
    ]


@pytest.mark.parametrize(
    "broken",
    [
        item("a1", "默认 30s", "call_x1", "call_failed"),  # B on one of two citations
        item("a1", "默认 30s", "call_x2"),  # B: NORMAL cites NO_EVIDENCE
        item("a1", "默认 30s", "call_x1", kind="NEGATIVE_OBSERVATION"),  # B: NEGATIVE cites evidence
        item("a1", "默认 30s", "call_x1", document_ids=["nope#chunk-9"]),  # B: unknown document
        item("a1", "默认 30s", "call_tampered"),  # C
        item("a1", "默认 30s"),  # no citation at all (A)
    ],
)
def test_an_item_whose_citations_did_not_all_pass_is_not_reviewed_nor_what_builds_on_it(
    broken: dict[str, Any],
) -> None:
    draft = draft_of([broken], {"content": "调到 120s", "based_on_analysis_ids": ["a1"]})
    assert not [v for v in judged(draft) if v[0].startswith("CLAIM_")]


def test_a_negative_observation_is_reviewed_against_the_query_and_tool_call_id_only() -> None:
    draft = draft_of(
        [item("a1", "call_x2 查“证书过期”无结果，504 也没有", "call_x2", kind="NEGATIVE_OBSERVATION")]
    )
    assert judged(draft) == [(NUMBER, "analysis[0].content")]


def test_document_ids_narrow_the_evidence_to_the_named_items() -> None:
    narrowed = item(
        "a1", "max_connections 与 /etc/nginx/nginx.conf", "call_x3", document_ids=["ops-doc#chunk-2"]
    )
    assert judged(draft_of([narrowed])) == [(IDENTIFIER, "analysis[0].content")]
    whole = item("a1", "max_connections 与 /etc/nginx/nginx.conf", "call_x3")
    assert judged(draft_of([whole])) == []


def test_conclusion_and_actions_use_the_union_of_their_items_evidence() -> None:
    draft = draft_of(
        [item("a1", "超时", "call_x1"), item("a2", "连接池", "call_x3")],
        {"content": "proxy_read_timeout 60s 与 max_connections 100", "based_on_analysis_ids": ["a1", "a2"]},
        [
            {"id": "p1", "content": "改 max_connections", "based_on_analysis_ids": ["a1"]},
            {"id": "p2", "content": "改 max_connections", "based_on_analysis_ids": ["a2"]},
            {
                "id": "p3",
                "content": "改 max_connections",
                "based_on_analysis_ids": ["a2", "a9"],
            },  # a9: not reviewed
            {"id": "p4", "content": "改 max_connections", "based_on_analysis_ids": []},  # none: not reviewed
        ],
    )
    assert [v for v in judged(draft) if v[0].startswith("CLAIM_")] == [(IDENTIFIER, "action_plan[0].content")]


def test_a_repeated_analysis_id_means_its_first_item() -> None:
    draft = draft_of(
        [item("a1", "超时", "call_x1"), item("a1", "连接池", "call_x3")],
        {"content": "max_connections 100", "based_on_analysis_ids": ["a1"]},
    )
    assert judged(draft) == [
        ("ID_DUPLICATE", "analysis[1].id"),
        (IDENTIFIER, "conclusion.content"),
        (NUMBER, "conclusion.content"),
    ]
    first_fails = draft_of(
        [item("a1", "超时", "call_failed"), item("a1", "连接池", "call_x3")],
        {"content": "max_connections 100", "based_on_analysis_ids": ["a1"]},
    )
    assert not [v for v in judged(first_fails) if v[0].startswith("CLAIM_")]


def test_a_draft_whose_run_id_failed_is_not_reviewed() -> None:
    assert judged(draft_of([item("a1", "默认 30s", "call_x1")], run_id="")) == [("RUN_ID_MISSING", "run_id")]


def test_the_message_names_the_specific_and_is_bounded() -> None:
    ((_, path, message),) = one_text(f"“{'长' * 300}”", EXCERPT)
    assert path == "analysis[0].content"
    assert message.startswith("quote '长长") and len(message) < 140


# =============================================================================================
# The golden cases, and review=off
# =============================================================================================


def golden_drafts() -> list[bytes]:
    return [line for line in GUARD.joinpath("drafts.jsonl").read_bytes().splitlines() if line.strip()]


@pytest.mark.parametrize("raw", golden_drafts())
def test_off_gives_the_verdicts_of_a_to_c_alone(raw: bytes) -> None:
    """With guard.review=off each golden verdict is the enforced one without codes 21-23."""
    on = verdict_of(raw, golden_ledger(), GuardSettings())
    off = verdict_of(raw, golden_ledger(), GuardSettings(review="off"))
    kept = [v for v in on["violations"] if not v["code"].startswith("CLAIM_")]
    assert off["violations"] == kept
    assert off["violation_count"] == len(kept)
    assert off["verdict"] == ("PASS" if not kept else on["verdict"] if on["verdict"] != "PASS" else "REJECT")
    assert off["evidence_snapshot"] == on["evidence_snapshot"]


def test_the_review_cases_change_verdicts_only_through_d() -> None:
    """The four review_* golden drafts: off, three of them pass (d-skip keeps its C violation)."""
    by_id = {codec.loads(raw).get("draft_id"): raw for raw in golden_drafts() if raw.startswith(b"{")}
    verdicts = {
        name: verdict_of(by_id[name], golden_ledger(), GuardSettings(review="off"))["verdict"]
        for name in ("d-review", "d-forms", "d-narrow", "d-skip")
    }
    assert verdicts == {"d-review": "PASS", "d-forms": "PASS", "d-narrow": "PASS", "d-skip": "REJECT"}


def test_the_setting_takes_enforce_or_off_only() -> None:
    assert GuardSettings().review == "enforce"
    with pytest.raises(ValidationError):
        GuardSettings(review="warn")  # type: ignore[arg-type]


# =============================================================================================
# For the run page
# =============================================================================================


def test_claims_name_the_evidence_item_each_specific_was_found_in() -> None:
    projections = {
        "call_x1": projection("call_x1", "无关", EXCERPT, query="超时 504 怎么查"),
        "call_x3": projection("call_x3", "连接池上限由 max_connections 控制，默认 100。"),
    }
    draft = {
        "run_id": "run-g",
        "analysis": [
            {"id": "a1", "content": "x", "tool_call_ids": ["call_x1"]},
            {"id": "a2", "content": "x", "tool_call_ids": ["call_x3"]},
        ],
        "conclusion": {
            "content": "504 与 max_connections 100，见 a1；调到 300",
            "based_on_analysis_ids": ["a1", "a2"],
        },
    }
    texts = {t.path: t for t in reviewed_texts(draft, [True, True], projections)}
    got = claims(texts["conclusion.content"].content, texts["conclusion.content"].evidence)
    assert got == [
        {
            "kind": "number",
            "value": "504",
            "supported": True,
            "tool_call_id": "call_x1",
            "document_id": "doc-1#chunk-1",
        },
        {
            "kind": "identifier",
            "value": "max_connections",
            "supported": True,
            "tool_call_id": "call_x3",
            "document_id": "doc-0#chunk-0",
        },
        {
            "kind": "number",
            "value": "100",
            "supported": True,
            "tool_call_id": "call_x3",
            "document_id": "doc-0#chunk-0",
        },
        {"kind": "identifier", "value": "a1", "supported": True, "tool_call_id": None, "document_id": None},
        {"kind": "number", "value": "300", "supported": False, "tool_call_id": None, "document_id": None},
    ]
    assert claims("默认 60", None) == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(tricky, min_size=1, max_size=3),
    st.lists(
        st.one_of(
            tricky,
            st.integers(10, 999).map(str),
            st.integers(0, 99).map(lambda n: f"K{n}_X"),
            st.sampled_from(["“默认 ６０”", "「超时　网关」", "ＰＲＯＸＹ_1", "1.5", "2.0.1"]),
        ),
        min_size=20,
        max_size=60,
    ),
)
def test_a_text_with_many_specifics_not_found_as_stored_is_judged_the_same(
    excerpts: list[str], words: list[str]
) -> None:
    """Past a number of specifics not found in the evidence as stored the station indexes E; the answers
    stay the SPEC's, in the same order."""
    content = " ".join(words)
    strings = ["call_x1", "网关超时怎么排查"]
    for k, excerpt in enumerate(excerpts):
        strings += [f"doc-{k}#chunk-{k}", f"doc-{k}", "网关超时排查", excerpt]
    evidence = spec_n("\n".join([*strings, "run-g", "a1"]))
    expected = [(k, v) for k, v in spec_specifics(content) if not spec_supports(k, v, evidence)]
    found = one_text(content, *excerpts)
    assert [code for code, _, _ in found] == [CODES[kind] for kind, _ in expected]  # type: ignore[index]
    for (_, _, message), (kind, value) in zip(found, expected, strict=True):
        assert message.startswith(f"{kind} {repr(value)[:60]}")


# =============================================================================================
# Drafts share the work on a projection they cite alike (keyed by its digest and narrowing)
# =============================================================================================


def _codes_with_digests(content: str, call: dict[str, Any], digest: str, **more: Any) -> list[str]:
    draft = {
        "run_id": "run-g",
        "analysis": [
            {"id": "a1", "kind": "NORMAL", "content": content, "tool_call_ids": ["call_x1"], **more}
        ],
    }
    return [v["code"] for v in review(draft, [True], {"call_x1": call}, {"call_x1": digest})]


def test_a_remembered_projection_is_judged_by_its_digest_and_its_narrowing() -> None:
    """The same tool call re-cited with another narrowing, or holding other bytes (another digest), is
    judged on its own evidence, whatever an earlier draft left behind; the same digest and narrowing
    give the same answers again."""
    call = projection(
        "call_x1", "proxy_read_timeout 默认 60s", "max_connections 默认 512", docs=["doc-a", "doc-b"]
    )
    text = "max_connections 默认 512"
    for _ in range(2):  # the second round meets every source remembered
        assert _codes_with_digests(text, call, "d" * 64) == []
        assert _codes_with_digests(text, call, "d" * 64, document_ids=["doc-a"]) == [IDENTIFIER, NUMBER]
        assert _codes_with_digests(text, call, "d" * 64, document_ids=["doc-b"]) == []
    other = projection("call_x1", "proxy_read_timeout 默认 60s", docs=["doc-a"])  # same call, other bytes
    assert _codes_with_digests(text, other, "e" * 64) == [IDENTIFIER, NUMBER]
    assert _codes_with_digests(text, call, "d" * 64) == []


def test_a_remembered_text_is_judged_again_on_other_names_or_other_bytes() -> None:
    """A text's answer is remembered by the text, the names and each cited digest and narrowing: the
    same text in a draft of another run (other names), or citing other bytes, is judged on its own."""
    call = projection("call_x1", "max_connections 默认 512", docs=["doc-a"])
    text = "run-k7 的 max_connections 默认 512"

    def codes(run_id: str, digest: str, cited: dict[str, Any]) -> list[str]:
        draft = {
            "run_id": run_id,
            "analysis": [{"id": "a1", "kind": "NORMAL", "content": text, "tool_call_ids": ["call_x1"]}],
        }
        return [v["code"] for v in review(draft, [True], {"call_x1": cited}, {"call_x1": digest})]

    for _ in range(2):  # the second round meets the answers remembered
        assert codes("run-k7", "f" * 64, call) == []
        assert codes("run-k8", "f" * 64, call) == [IDENTIFIER]
    other = projection("call_x1", "max_connections 默认 256", docs=["doc-a"])
    assert codes("run-k7", "0" * 64, other) == [NUMBER]
    assert codes("run-k7", "f" * 64, call) == []


def test_what_is_remembered_across_drafts_is_bounded_in_size() -> None:
    """A text judged on more projections than a remembered one may be, or stating more specifics than
    are remembered, is judged afresh each time: a hostile draft within the guard's limits cannot make
    the memory across drafts hold hundreds of MB (only short, ordinary texts are kept)."""
    from streams.stations import review as module

    calls = {
        f"call_m{n}": projection(f"call_m{n}", f"key_{n} 默认 {n}0") for n in range(module._SIGNED_KEYS + 1)
    }
    digests = {call: f"{n:064x}" for n, call in enumerate(calls)}
    analysis = [
        {"id": f"a{n}", "kind": "NORMAL", "content": f"key_{n} 默认 {n}0", "tool_call_ids": [call]}
        for n, call in enumerate(calls)
    ]
    wide = " ".join(f"key_{n} {n}0" for n in range(len(calls)))  # built on every item: too many keys
    many = " ".join(f"x{n}_y" for n in range(module._REMEMBERED_SPECIFICS + 1))  # too many specifics
    draft = {
        "run_id": "run-m",
        "analysis": analysis,
        "conclusion": {"content": wide, "based_on_analysis_ids": [a["id"] for a in analysis]},
        "action_plan": [{"id": "p1", "content": many, "based_on_analysis_ids": ["a0"]}],
    }
    reviewed = [True] * len(analysis)
    first = review(draft, reviewed, calls, digests)
    assert review(draft, reviewed, calls, digests) == first  # the same answer, remembered or not
    assert [v["path"] for v in first] == ["action_plan[0].content"] * (module._REMEMBERED_SPECIFICS + 1)
    remembered = {key[0] for key in module._ANSWERED}
    assert analysis[0]["content"] in remembered  # an ordinary text is kept
    assert wide not in remembered and many not in remembered
    assert many not in module._SAID and analysis[0]["content"] in module._SAID
