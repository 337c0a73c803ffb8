"""The review (SPEC 4.2) against a second, naive reading of the SPEC (``review_reference``).

A table of hand-checked runbook sentences pins both readings down; hypothesis then compares them on text
drawn from the characters where a reading can go wrong (full-width forms, NFKC compatibility characters,
combining marks, Hangul jamo, every quote mark, White_Space and its look-alikes), with evidence built from
each text's own specifics (case changed, made full-width, put beside digits or marks) so that both the
supported and the unsupported paths are taken. ``REVIEW_REFERENCE_EXAMPLES`` raises the example count for
a longer local run.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from models.limits import GuardSettings
from models.projection import RagToolResult
from models.vocab import EvidenceStatus, RelevanceLevel
from streams import codec
from streams.stations import review
from streams.stations.project import canonical_projection
from tests.stations import review_reference as reference
from tests.support import memory_ledger, verdict_of

EXAMPLES = int(os.environ.get("REVIEW_REFERENCE_EXAMPLES", "300"))
CHECKED = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

NUM, IDENT, QUOTE = reference.NUMBER, reference.IDENTIFIER, reference.QUOTE
CODE_OF = {
    NUM: "CLAIM_NUMBER_UNSUPPORTED",
    IDENT: "CLAIM_IDENTIFIER_UNSUPPORTED",
    QUOTE: "CLAIM_QUOTE_UNSUPPORTED",
}

# =============================================================================================
# A hand-checked table: (text, evidence strings, its specifics, the unsupported ones)
# =============================================================================================

CASES: list[Any] = [
    pytest.param(
        "proxy_read_timeout 默认 60s",
        ["proxy_read_timeout 的默认值是 60s"],
        [(IDENT, "proxy_read_timeout"), (NUM, "60")],
        [],
        id="key-and-unit-number",
    ),
    pytest.param("调到 120s", ["默认 60s"], [(NUM, "120")], [(NUM, "120")], id="number-not-in-evidence"),
    pytest.param(
        "max_conns 设为 512",
        ["max_connections = 512"],
        [(IDENT, "max_conns"), (NUM, "512")],
        [(IDENT, "max_conns")],
        id="max_conns-is-not-in-max_connections",
    ),
    pytest.param(
        "调大 max_conn", ["max_connections"], [(IDENT, "max_conn")], [], id="identifier-is-a-substring"
    ),
    pytest.param(
        "编辑 /etc/nginx/nginx.conf",
        ["配置文件在 /etc/nginx/nginx.conf"],
        [(IDENT, "etc/nginx/nginx.conf")],
        [],
        id="path-stripped-of-leading-slash",
    ),
    pytest.param(
        "升级到 v1.14.2", ["v1.14.20 发布"], [(IDENT, "v1.14.2")], [], id="version-identifier-substring"
    ),
    pytest.param(
        "后端 10.0.0.1:8080 超时",
        ["upstream 10.0.0.1:8080;"],
        [(NUM, "10.0.0.1:8080")],
        [],
        id="host-port-number",
    ),
    pytest.param(
        "后端 10.0.0.1:8080",
        ["upstream 10.0.0.1:80801"],
        [(NUM, "10.0.0.1:8080")],
        [(NUM, "10.0.0.1:8080")],
        id="host-port-with-a-digit-after",
    ),
    pytest.param(
        "2026-09-29 发生", ["2026-09-29T10:00"], [(NUM, "2026-09-29")], [], id="date-before-a-letter"
    ),
    pytest.param("返回 HTTP 502", ["状态码 502 Bad Gateway"], [(NUM, "502")], [], id="status-code"),
    pytest.param(
        "返回 HTTP 502", ["状态码 5020"], [(NUM, "502")], [(NUM, "502")], id="status-code-inside-a-number"
    ),
    pytest.param("e.g. 重启 nginx", [], [], [], id="e.g.-and-plain-words"),
    pytest.param("挂载为 read-only", [], [], [], id="read-only"),
    pytest.param("p99 延迟 3000ms", ["p99 latency 3000 ms"], [(NUM, "3000")], [], id="p99-common-3000ms"),
    pytest.param("内存 8GB", [], [], [], id="single-digit-with-unit"),
    pytest.param("内存 16GB", ["16 GB"], [(NUM, "16")], [], id="unit-number"),
    pytest.param("超时 ６０ｓ", ["timeout 60s"], [(NUM, "60")], [], id="full-width-digits"),
    pytest.param("ＭＡＸ_ＣＯＮＮ 调大", ["max_conn"], [(IDENT, "max_conn")], [], id="full-width-letters"),
    pytest.param(
        "ＭＡＸ_ＣＯＮＮ",
        ["MAX-CONN"],
        [(IDENT, "max_conn")],
        [(IDENT, "max_conn")],
        id="dash-is-not-underscore",
    ),
    pytest.param(
        "日志显示 “upstream timed out”",
        ["upstream timed out (110: Connection timed out)"],
        [(QUOTE, "upstream timed out")],
        [],
        id="curly-quote",
    ),
    pytest.param(
        "报错「connection refused」",
        ["Connection Refused"],
        [(QUOTE, "connection refused")],
        [],
        id="corner-quote",
    ),
    pytest.param(
        "『no live upstreams』",
        ["no  live\tupstreams"],
        [(QUOTE, "no live upstreams")],
        [],
        id="white-corner-quote",
    ),
    pytest.param(
        '执行 "nginx -s reload"', ["nginx -s reload"], [(QUOTE, "nginx -s reload")], [], id="ascii-quote"
    ),
    pytest.param(
        "执行 `nginx -t` 再 reload",
        ["nginx -T"],
        [(QUOTE, "nginx -t")],
        [],
        id="backtick-quote-lowered",
    ),
    pytest.param("“upstream 502", [], [(NUM, "502")], [(NUM, "502")], id="unmatched-opener"),
    pytest.param("“abc」 502", ["502"], [(NUM, "502")], [], id="mismatched-closer"),
    pytest.param("「abc” def」", ["ABC” DEF"], [(QUOTE, "abc” def")], [], id="other-closer-inside"),
    pytest.param("设为 “a”", [], [], [], id="one-character-quote"),
    pytest.param('max"x"conn', [], [], [], id="short-quote-keeps-sides-apart"),
    pytest.param(
        'v1"ab"2', ["v1"], [(IDENT, "v1"), (QUOTE, "ab")], [(QUOTE, "ab")], id="quote-between-words"
    ),
    pytest.param(
        "ﬁle_size 100", ["file_size=100"], [(IDENT, "file_size"), (NUM, "100")], [], id="ligature-in-text"
    ),
    pytest.param("10² 次", ["10^2"], [(NUM, "102")], [(NUM, "102")], id="superscript-joins-the-number"),
    pytest.param(
        "cafe\u0301_mode 30", ["_mode 30"], [(IDENT, "_mode"), (NUM, "30")], [], id="combining-mark-composes"
    ),
    pytest.param("q\u0301_size", ["q_size"], [(IDENT, "_size")], [], id="combining-mark-after-q"),
    pytest.param("超时\u300060s", ["60\u3000s"], [(NUM, "60")], [], id="ideographic-space"),
    pytest.param(
        "worker_connections\u00a01024",
        ["worker_connections 1024"],
        [(IDENT, "worker_connections"), (NUM, "1024")],
        [],
        id="no-break-space",
    ),
    pytest.param("超时 60s", ["600s"], [(NUM, "60")], [(NUM, "60")], id="60-is-not-in-600"),
    pytest.param("1.5 倍", ["11.5 倍"], [(NUM, "1.5")], [(NUM, "1.5")], id="1.5-is-not-in-11.5"),
    pytest.param("1.5 倍", ["x1.5"], [(NUM, "1.5")], [], id="1.5-after-a-letter"),
    pytest.param("1.5 倍", ["1.50"], [(NUM, "1.5")], [(NUM, "1.5")], id="1.5-is-not-in-1.50"),
    pytest.param("1 个节点，3 次重试", [], [], [], id="single-digits"),
    pytest.param("2xx 比例, 5xx 升高, k8s x86_64 sha256 HTTP/1.1 IPv6", [], [], [], id="common-terms"),
    pytest.param("见 gw#chunk-1", ["gw#chunk-1"], [(IDENT, "chunk-1")], [], id="chunk-id"),
    pytest.param(
        "a.b e.g nginx.conf ab.cd",
        ["nginx.conf"],
        [(IDENT, "nginx.conf"), (IDENT, "ab.cd")],
        [(IDENT, "ab.cd")],
        id="dot-needs-two-on-each-side",
    ),
    pytest.param("a/b /etc etc/ /a", [], [(IDENT, "a/b")], [(IDENT, "a/b")], id="slash-next-to-a-letter"),
    pytest.param("..60..", ["60"], [(NUM, "60")], [], id="edges-stripped"),
    pytest.param(
        "0x1F 1.5.3ms",
        ["0X1F"],
        [(IDENT, "0x1f"), (IDENT, "1.5.3ms")],
        [(IDENT, "1.5.3ms")],
        id="not-numbers",
    ),
    pytest.param("1.5GB", ["1.5 gb"], [(NUM, "1.5")], [], id="decimal-with-unit"),
    pytest.param("60s 和 60", ["60"], [(NUM, "60")], [], id="once-per-kind-and-value"),
    pytest.param(
        '"60" 和 60', ["60"], [(QUOTE, "60"), (NUM, "60")], [], id="quote-and-number-differ-in-kind"
    ),
    pytest.param(
        "x 502 “abc def”  v2",
        ["abc\ndef"],
        [(NUM, "502"), (QUOTE, "abc def"), (IDENT, "v2")],
        [(NUM, "502"), (IDENT, "v2")],
        id="offset-order",
    ),
    pytest.param("①② ① ②", ["12"], [(NUM, "12")], [], id="circled-digits"),
    pytest.param("50㎏ 5㎏", ["50 kg"], [(NUM, "50")], [], id="square-kg"),
    pytest.param(
        "调大 max_conn",
        ["max_conn\u0301"],
        [(IDENT, "max_conn")],
        [(IDENT, "max_conn")],
        id="mark-in-evidence",
    ),
    pytest.param("设为 60", ["６0"], [(NUM, "60")], [], id="full-width-digit-in-evidence"),
    pytest.param("设为 60", ["６60"], [(NUM, "60")], [(NUM, "60")], id="full-width-digit-beside-it"),
    pytest.param("设为 60", ["²60"], [(NUM, "60")], [(NUM, "60")], id="superscript-beside-it"),
    pytest.param("设为 60", ["①60"], [(NUM, "60")], [(NUM, "60")], id="circled-digit-beside-it"),
    pytest.param("设为 60", ["½60"], [(NUM, "60")], [(NUM, "60")], id="fraction-beside-it"),
    pytest.param("＂abc＂", ["ABC"], [(QUOTE, "abc")], [], id="full-width-ascii-quote"),
    pytest.param(
        "PROXY_READ_TIMEOUT", ["proxy_read_timeout"], [(IDENT, "proxy_read_timeout")], [], id="case"
    ),
    pytest.param("「」 “” ``", [], [], [], id="empty-quotes"),
    pytest.param("“foo bar”", ["xx foo", "bar yy"], [(QUOTE, "foo bar")], [], id="quote-across-two-strings"),
    pytest.param("\u212a8s_limit", ["k8s_limit"], [(IDENT, "k8s_limit")], [], id="kelvin-sign"),
    pytest.param("a\x1cb_c", ["a\x1c b_c"], [(IDENT, "b_c")], [], id="file-separator-is-not-white-space"),
    pytest.param(
        "“a\x1cb”", ["a b"], [(QUOTE, "a\x1cb")], [(QUOTE, "a\x1cb")], id="file-separator-kept-in-a-quote"
    ),
    pytest.param(
        "“AW\u030aB”", ["AW\u030aB"], [(QUOTE, "aw\u030ab")], [], id="lowered-after-nfkc-stays-apart"
    ),
    pytest.param(
        "“AW\u030aB”",
        ["aw\u030ab"],
        [(QUOTE, "aw\u030ab")],
        [(QUOTE, "aw\u030ab")],
        id="lowercase-in-evidence-composes",
    ),
    pytest.param("“a\u2028b”", ["a\nb"], [(QUOTE, "a b")], [], id="line-separator-is-white-space"),
]


@pytest.mark.parametrize(("text", "evidence", "said", "missing"), CASES)
def test_the_reference_reads_the_table_as_checked_by_hand(
    text: str, evidence: list[str], said: list[tuple[str, str]], missing: list[tuple[str, str]]
) -> None:
    assert reference.specifics(text) == said
    assert reference.unsupported(text, evidence) == missing


@pytest.mark.parametrize(("text", "evidence", "said", "missing"), CASES)
def test_the_review_reads_the_table_as_checked_by_hand(
    text: str, evidence: list[str], said: list[tuple[str, str]], missing: list[tuple[str, str]]
) -> None:
    assert [tuple(s) for s in review.specifics(text)] == said
    e = review.normal_form("\n".join(evidence))
    assert [(k, v) for k, v in said if not review.holds_in(review.Specific(k, v), e)] == missing  # type: ignore[arg-type]


# -- the same table through the guard, from a real ledger entry -----------------------------------

RUN, CALL, DOC = "run-x", "call-x", "doc-x"


def _entry(excerpt: str) -> dict[str, Any]:
    projection: RagToolResult = {
        "evidence_status": EvidenceStatus.EVIDENCE_FOUND,
        "tool_call_id": CALL,
        "query": "q",
        "evidence": [
            {"document_id": DOC, "source": None, "title": None, "breadcrumb": None, "excerpt": excerpt}
        ],
        "returned_count": 1,
        "relevance_level": RelevanceLevel.PRECISE,
        "truncated": False,
    }
    data = canonical_projection(projection)
    return {
        "run_id": RUN,
        "tool_call_id": CALL,
        "status": "READY",
        "evidence_status": "EVIDENCE_FOUND",
        "projection": data.decode("utf-8"),
        "projection_sha256": hashlib.sha256(data).hexdigest(),
    }


@pytest.mark.parametrize(("text", "evidence", "said", "missing"), CASES)
def test_the_guard_reports_the_table_as_checked_by_hand(
    text: str, evidence: list[str], said: list[tuple[str, str]], missing: list[tuple[str, str]]
) -> None:
    draft = {
        "run_id": RUN,
        "draft_id": "d-x",
        "analysis": [{"id": "ax", "kind": "NORMAL", "content": text, "tool_call_ids": [CALL]}],
        "conclusion": {"content": text, "based_on_analysis_ids": ["ax"]},
        "action_plan": [{"id": "px", "content": text, "based_on_analysis_ids": ["ax"]}],
        "limitations": ["only the knowledge base"],
    }
    verdict = verdict_of(codec.dumps(draft), memory_ledger([_entry("\n".join(evidence))]))
    paths = ["analysis[0].content", "conclusion.content", "action_plan[0].content"]
    assert [(v["code"], v["path"]) for v in verdict["violations"]] == [
        (CODE_OF[kind], path) for path in paths for kind, _ in missing
    ]
    assert verdict["verdict"] == ("REJECT" if missing else "PASS")


# -- which texts the guard reviews, and against what (SPEC 4.2, first list) --------------------------


def _found(call: str, *documents: tuple[str, str]) -> dict[str, Any]:
    """A READY ledger entry of this run: EVIDENCE_FOUND with (document_id, excerpt) items, or NO_EVIDENCE."""
    projection: RagToolResult = {
        "evidence_status": EvidenceStatus.EVIDENCE_FOUND if documents else EvidenceStatus.NO_EVIDENCE,
        "tool_call_id": call,
        "query": f"query of {call} timeout=45s",
        "evidence": [
            {"document_id": d, "source": None, "title": None, "breadcrumb": None, "excerpt": e}
            for d, e in documents
        ],
        "returned_count": len(documents),
        "relevance_level": RelevanceLevel.PRECISE if documents else None,
        "truncated": False,
    }
    data = canonical_projection(projection)
    return {
        "run_id": RUN,
        "tool_call_id": call,
        "status": "READY",
        "evidence_status": projection["evidence_status"],
        "projection": data.decode("utf-8"),
        "projection_sha256": hashlib.sha256(data).hexdigest(),
    }


LEDGER = [
    _found("call-a", ("doc-p", "proxy_read_timeout 60s"), ("doc-q", "max_conns 512")),
    _found("call-b", ("doc-r", "upstream 10.0.0.1:8080")),
    _found("call-n"),
]


def _analysis(item_id: str, content: str, *calls: str, **more: Any) -> dict[str, Any]:
    return {"id": item_id, "kind": "NORMAL", "content": content, "tool_call_ids": list(calls), **more}


def _judged(
    analysis: list[dict[str, Any]],
    conclusion: Any = None,
    actions: Any = (),
    *,
    run_id: str = RUN,
    guard: GuardSettings | None = None,
) -> list[tuple[str, str]]:
    """The guard's (code, path) list for a draft over ``LEDGER``."""
    draft = {
        "run_id": run_id,
        "draft_id": "d-x",
        "analysis": analysis,
        "conclusion": conclusion,
        "action_plan": list(actions),
        "limitations": ["only the knowledge base"],
    }
    verdict = verdict_of(codec.dumps(draft), memory_ledger(LEDGER), guard)
    return [(v["code"], v["path"]) for v in verdict["violations"]]


def test_an_item_with_a_failed_citation_is_not_reviewed_nor_what_is_built_on_it() -> None:
    found = _judged(
        [_analysis("a1", "60s 和 512", "call-a"), _analysis("a2", "30s", "call-missing")],
        {"content": "设为 60s", "based_on_analysis_ids": ["a1", "a2"]},
        [{"id": "p1", "content": "改 512 和 99s", "based_on_analysis_ids": ["a1"]}],
    )
    assert found == [
        ("CITATION_NOT_FOUND", "analysis[1].tool_call_ids[0]"),
        ("CLAIM_NUMBER_UNSUPPORTED", "action_plan[0].content"),
    ]


def test_document_ids_narrow_the_evidence_to_their_items() -> None:
    found = _judged(
        [_analysis("a1", "proxy_read_timeout 60s, max_conns 512", "call-a", document_ids=["doc-p"])],
        {"content": "max_conns", "based_on_analysis_ids": ["a1"]},
    )
    assert found == [
        ("CLAIM_IDENTIFIER_UNSUPPORTED", "analysis[0].content"),
        ("CLAIM_NUMBER_UNSUPPORTED", "analysis[0].content"),
        ("CLAIM_IDENTIFIER_UNSUPPORTED", "conclusion.content"),
    ]


def test_an_unknown_document_id_leaves_the_item_unreviewed() -> None:
    found = _judged([_analysis("a1", "999s", "call-a", document_ids=["doc-z"])])
    assert found == [("CITATION_DOCUMENT_UNKNOWN", "analysis[0].document_ids[0]")]


def test_the_conclusion_is_judged_on_the_union_and_the_first_item_of_an_id() -> None:
    found = _judged(
        [
            _analysis("a1", "proxy_read_timeout", "call-a"),
            _analysis("a2", "10.0.0.1:8080", "call-b"),
            _analysis("a1", "max_conns", "call-b"),
        ],
        {"content": "proxy_read_timeout 60s 连 10.0.0.1:8080", "based_on_analysis_ids": ["a1", "a2"]},
        [{"id": "p1", "content": "10.0.0.1:8080", "based_on_analysis_ids": ["a1"]}],
    )
    assert found == [
        ("ID_DUPLICATE", "analysis[2].id"),
        ("CLAIM_IDENTIFIER_UNSUPPORTED", "analysis[2].content"),
        ("CLAIM_NUMBER_UNSUPPORTED", "action_plan[0].content"),
    ]


def test_no_evidence_gives_its_tool_call_id_and_query_and_names_may_be_named() -> None:
    found = _judged(
        [
            {**_analysis("a1", "call-n 的 45s 和 60s", "call-n"), "kind": "NEGATIVE_OBSERVATION"},
            _analysis("a2", "见 a1、p1 与 run-x", "call-a"),
        ],
        actions=[{"id": "p1", "content": "重看 a2", "based_on_analysis_ids": ["a2"]}],
    )
    assert found == [("CLAIM_NUMBER_UNSUPPORTED", "analysis[0].content")]


def test_review_off_and_a_bad_run_id_judge_no_claims() -> None:
    assert _judged([_analysis("a1", "999s", "call-a")], guard=GuardSettings(review="off")) == []
    assert _judged([_analysis("a1", "999s", "call-a")], run_id="not a valid id!") == [
        ("RUN_ID_MISSING", "run_id")
    ]


# =============================================================================================
# Hypothesis: the two readings agree
# =============================================================================================

CHARACTERS = (
    "aAbBeEgGjJkKsSwWxXzZ_"
    "0123456789"
    "./:-"
    "“”「」『』\"`＂'#,，"
    "默认调到超时节点"
    "６０ｓＭＡＸ＿ｍ．／：－"
    "ﬁﬂﬆ²³①⑴⒈㎏㎳½ｰ\u212aſ™℡Ⅻİ…ẘǰ"
    "\u0301\u0308\u0327\u20e3\u030a\u030c"
    "\u1100\u1161\u11a8ㄱㅏ\uffa0\uffc2가"
    " \t\n\r\x0b\x0c\x85\xa0\u1680\u2003\u2028\u2029\u202f\u205f\u3000"
    "\x1c\x1f\u200b\u180e\ufeff"
)
TOKENS = (
    "proxy_read_timeout", "max_conns", "max_connections", "/etc/nginx/nginx.conf", "v1.14.2",
    "10.0.0.1:8080", "2026-09-29", "HTTP", "502", "e.g.", "read-only", "p99", "3000ms", "8GB", "60s",
    "120s", "1.5", "11.5", "600", "x86_64", "k8s", "chunk-1", "nginx.conf", "６０ｓ", "ＭＡＸ_ＣＯＮＮ",
    "“upstream timed out”", "「connection refused」", "`nginx -t`", '"a b"', "a1", "run-1",
)  # fmt: skip

pieces = st.one_of(st.sampled_from(TOKENS), st.sampled_from(CHARACTERS))
texts = st.lists(pieces, max_size=24).map("".join)


def _wide(value: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in value)


VARIANTS = (
    lambda v: v,
    lambda v: v,
    str.upper,
    _wide,
    lambda v: "7" + v,
    lambda v: v + "0",
    lambda v: "６" + v,
    lambda v: v + "²",
    lambda v: "①" + v,
    lambda v: "x" + v + "s",
    lambda v: v + "\u0301",
    lambda v: v + "\u0308",
    lambda v: v + "\u1161",
    lambda v: v + "ﬁ",
    lambda v: "\u212a" + v,
    lambda v: v[:-1],
    lambda v: v[1:],
    lambda v: v.replace(" ", "\u3000"),
    lambda v: v.replace(" ", "  \n"),
    lambda v: "",
)
SEPARATORS = (" ", "\n", "", "，", "x", "5", "\u0301", "\u3000", "“", "」", "_")


@st.composite
def evidence_for(draw: st.DrawFn, text: str) -> list[str]:
    """Evidence strings built from the text's own specifics (and the text), changed so that some are
    supported and some are not, cut into one to four strings."""
    parts: list[str] = []
    for _, value in reference.specifics(text):
        parts.append(draw(st.sampled_from(VARIANTS))(value))
    if draw(st.booleans()):
        parts.append(draw(st.sampled_from(VARIANTS[:4]))(text))
    parts.append(draw(texts))
    parts = draw(st.permutations(parts))
    joined = ""
    for part in parts:
        joined += part + draw(st.sampled_from(SEPARATORS))
    cuts = sorted(draw(st.lists(st.integers(0, len(joined)), max_size=3)))
    strings, start = [], 0
    for cut in [*cuts, len(joined)]:
        strings.append(joined[start:cut])
        start = cut
    return strings


@CHECKED
@given(st.one_of(texts, st.text(alphabet=CHARACTERS, max_size=30)))
def test_normal_form_agrees(text: str) -> None:
    assert review.normal_form(text) == reference.normal_form(text)


@CHECKED
@given(st.one_of(texts, st.text(alphabet=CHARACTERS, max_size=30)))
def test_specifics_agree(text: str) -> None:
    assert [tuple(s) for s in review.specifics(text)] == reference.specifics(text)


def _projection(tool_call_id: str, query: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "evidence_status": "EVIDENCE_FOUND" if items else "NO_EVIDENCE",
        "tool_call_id": tool_call_id,
        "query": query,
        "evidence": items,
        "returned_count": len(items),
        "relevance_level": "PRECISE" if items else None,
        "truncated": False,
    }


def _item(document_id: str, fields: list[str | None]) -> dict[str, Any]:
    source, title, breadcrumb, excerpt = (fields + [None, None, None, None])[:4]
    return {
        "document_id": document_id,
        "source": source,
        "title": title,
        "breadcrumb": breadcrumb,
        "excerpt": excerpt if excerpt is not None else "",
    }


@st.composite
def text_and_draft(draw: st.DrawFn) -> tuple[dict[str, Any], list[bool], dict[str, dict[str, Any]]]:
    """One text reviewed against one projection whose fields hold evidence built from it."""
    text = draw(texts)
    strings = draw(evidence_for(text))
    query, document_id, *rest = [*strings, "", ""]
    fields: list[str | None] = [draw(st.sampled_from([s, None])) if s == "" else s for s in rest]
    items = [_item(document_id, fields)] if draw(st.integers(0, 9)) else []
    projections = {"call-x": _projection("call-x", query, items)}
    draft = {
        "run_id": "run-1",
        "analysis": [{"id": "a1", "kind": "NORMAL", "content": text, "tool_call_ids": ["call-x"]}],
        "conclusion": {"content": draw(texts), "based_on_analysis_ids": ["a1"]},
        "action_plan": [{"id": "p1", "content": text, "based_on_analysis_ids": ["a1"]}],
    }
    return draft, [True], projections


@CHECKED
@given(text_and_draft())
def test_support_agrees(case: tuple[dict[str, Any], list[bool], dict[str, dict[str, Any]]]) -> None:
    draft, reviewed, projections = case
    expected = reference.review_violations(draft, reviewed, projections)
    found = review.review(draft, reviewed, projections)
    event(f"{len(expected)} violations" if len(expected) < 3 else "3+ violations")
    assert [(v["code"], v["path"]) for v in found] == [(CODE_OF[k], p) for p, k, _ in expected]
    for violation, (_, _, value) in zip(found, expected, strict=True):
        assert value in violation["message"] or repr(value)[:40] in violation["message"]
    # And each specific's support on its own, through the evidence the module builds for the text.
    for text in review.reviewed_texts(draft, reviewed, projections):
        evidence = [s for p in projections.values() for s in reference.projection_strings(p, [])]
        evidence += ["run-1", "a1", "p1"]
        e = reference.evidence_form(evidence)
        for kind, value in reference.specifics(text.content):
            specific = review.Specific(kind, value)  # type: ignore[arg-type]
            held = reference.supported(kind, value, e)
            event(f"{kind} {'supported' if held else 'unsupported'}")
            assert text.evidence.supports(specific) == held, (kind, value)


@st.composite
def drafts(draw: st.DrawFn) -> tuple[dict[str, Any], list[bool], dict[str, dict[str, Any]]]:
    """Several items over several projections: document_ids narrowing, NO_EVIDENCE, items not reviewed,
    repeated ids, conclusions and actions built on reviewed and unreviewed items."""
    seed = draw(texts)
    projections: dict[str, dict[str, Any]] = {}
    for n, call in enumerate(["call-a", "call-b", "call-c"]):
        strings = draw(evidence_for(seed))
        items = [] if n == 2 else [_item(f"doc-{d}", [s]) for d, s in zip("pq", strings, strict=False)]
        projections[call] = _projection(call, draw(st.sampled_from(["q", *strings])), items)
    ids = ["a1", "a2", "a1", "a3"]
    analysis, reviewed = [], []
    for index in range(draw(st.integers(1, 4))):
        calls = draw(st.lists(st.sampled_from(sorted(projections)), min_size=1, max_size=3))
        documents = draw(st.lists(st.sampled_from(["doc-p", "doc-q"]), max_size=2))
        analysis.append(
            {
                "id": ids[index],
                "kind": "NORMAL",
                "content": draw(st.one_of(st.just(seed), texts)),
                "tool_call_ids": calls,
                "document_ids": documents,
            }
        )
        reviewed.append(draw(st.booleans()))
    refs = st.lists(st.sampled_from(["a1", "a2", "a3", "zz"]), max_size=3)
    conclusion = draw(
        st.one_of(
            st.none(),
            st.builds(
                lambda c, r: {"content": c, "based_on_analysis_ids": r}, st.one_of(st.just(seed), texts), refs
            ),
        )
    )
    actions = [
        {"id": f"p{n}", "content": draw(st.one_of(st.just(seed), texts)), "based_on_analysis_ids": draw(refs)}
        for n in range(draw(st.integers(0, 2)))
    ]
    draft = {"run_id": "run-1", "analysis": analysis, "conclusion": conclusion, "action_plan": actions}
    return draft, reviewed, projections


@CHECKED
@given(drafts())
def test_review_of_whole_drafts_agrees(
    case: tuple[dict[str, Any], list[bool], dict[str, dict[str, Any]]],
) -> None:
    draft, reviewed, projections = case
    expected = reference.review_violations(draft, reviewed, projections)
    found = review.review(draft, reviewed, projections)
    assert [(v["code"], v["path"]) for v in found] == [(CODE_OF[k], p) for p, k, _ in expected]
    # The guard passes each projection's digest, and drafts then share the work on a projection across
    # the bounded cache: the answers are the same when its sources are new and when they are remembered.
    digests = {call: hashlib.sha256(codec.dumps(p)).hexdigest() for call, p in projections.items()}
    for _ in range(2):
        assert review.review(draft, reviewed, projections, digests) == found
