"""The auditor's view of a run as HTML: the chain at a glance (inline SVG), the evidence each tool call
showed the agent, and each draft's claims beside the evidence they cite (:mod:`streams.cli.evidence`).

Every value from a record goes through :func:`streams.cli.display.html_text` (controls, bidirectional ones
included, shown escaped; then ``html.escape``); an excerpt keeps its line breaks as ``<br>``. No
JavaScript; the picture is SVG drawn with the page's own style sheet (the CSP allows only that).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import quote

from streams.cli.display import html_text as _text
from streams.cli.display import printable

_DASH = "—"
_BOX, _GAP, _HEIGHT = 136, 26, 92
_CITES_NOTHING = '<p class="dim">cites nothing</p>'


MAX_TEXT_CHARS = 4000
"""A draft's text longer than this is cut on the page, with a link to the whole (the page's JSON):
one run of large drafts must not make a page of tens of megabytes."""


def _lines(value: Any) -> str:
    """A multi-line text: each line as :func:`_text`, joined by ``<br>``; cut at :data:`MAX_TEXT_CHARS`."""
    if not isinstance(value, str):
        return _text(value)
    cut = ""
    if len(value) > MAX_TEXT_CHARS:
        more = len(value) - MAX_TEXT_CHARS
        value = value[:MAX_TEXT_CHARS]
        cut = (
            f' <span class="cut">… {more:,} more characters: <a href="?format=json">the whole text</a> is '
            "in this page's JSON</span>"
        )
    return "<br>".join(_text(line) for line in value.split("\n")) + cut


def _specifics(item: Mapping[str, Any]) -> str:
    """The review's specifics of one text (SPEC 4.2), each supported (with the evidence item it was
    found in) or not; nothing when the view has none."""
    found = item.get("specifics")
    if not isinstance(found, list) or not found:
        return ""
    rows = []
    for specific in found:
        if not isinstance(specific, Mapping):
            continue
        kind, value = _text(specific.get("kind")), _text(specific.get("value"))
        if specific.get("supported"):
            where = [
                f'<span class="mono">{_text(specific[name])}</span>'
                for name in ("tool_call_id", "document_id")
                if specific.get(name) is not None
            ]
            state = '<span class="supported">supported</span>' + (f" in {' · '.join(where)}" if where else "")
        else:
            state = '<span class="bad unsupported">not in the cited evidence</span>'
        rows.append(f'<li class="specific">{kind} <code>{value}</code>: {state}</li>')
    return f'<ul class="specifics">{"".join(rows)}</ul>' if rows else ""


def report_block(report: Any) -> str:
    """What was published for a draft (the ``reports`` event), or nothing when there is none."""
    if not isinstance(report, Mapping):
        return ""
    body = report.get("report")
    conclusion = body.get("conclusion") if isinstance(body, Mapping) else None
    said = conclusion.get("content") if isinstance(conclusion, Mapping) else None
    return (
        f'<p class="report">published: <span class="verdict">{_text(report.get("verdict"))}</span> report '
        f'<span class="mono">{_text(report.get("event_id"))}</span>'
        + (f" · conclusion: {_lines(said)}" if said is not None else " · no conclusion")
        + "</p>"
    )


def shown_anchor(tool_call_id: str) -> str:
    """The element id of a tool call's evidence on its run's page."""
    return f"shown-{printable(tool_call_id)}"


def _fragment(anchor: str) -> str:
    return escape("#" + quote(anchor, safe=""))


def receipt_href(run_id: str, draft_id: str, attempt: int | None = None) -> str:
    """The receipt's address: ``/runs/<run>/drafts/<draft>/receipt.json`` (``?attempt=N`` for one attempt)."""
    base = f"/runs/{quote(run_id, safe='')}/drafts/{quote(draft_id, safe='')}/receipt.json"
    return base if attempt is None else f"{base}?attempt={attempt}"


# --- the chain ---------------------------------------------------------------------------------------


def chain_svg(steps: Sequence[Mapping[str, Any]]) -> str:
    """hits → blocks → shown → ledger → cited → verdict, as boxes with counts and arrows between them."""
    width = len(steps) * (_BOX + _GAP) - _GAP
    parts = []
    for index, step in enumerate(steps):
        x = index * (_BOX + _GAP)
        middle = x + _BOX // 2
        parts.append(
            f'<g class="step step-{_text(step["step"])}">'
            f'<rect x="{x}" y="2" width="{_BOX}" height="{_HEIGHT}" rx="6"></rect>'
            f'<text class="label" x="{middle}" y="24" text-anchor="middle">{_text(step["step"])}</text>'
            f'<text class="count" x="{middle}" y="56" text-anchor="middle">{_text(step["count"])}</text>'
            f'<text class="detail" x="{middle}" y="80" text-anchor="middle">{_text(step["detail"])}</text>'
            "</g>"
        )
        if index < len(steps) - 1:
            start, end, y = x + _BOX + 3, x + _BOX + _GAP - 3, 2 + _HEIGHT // 2
            parts.append(
                f'<path class="arrow" d="M{start} {y} L{end - 7} {y} M{end - 7} {y - 5} L{end} {y} '
                f'L{end - 7} {y + 5} Z"></path>'
            )
    summary = ", ".join(f"{s['step']} {s['count']}" for s in steps)
    return (
        f'<svg class="chain" id="chain" role="img" viewBox="0 0 {width} {_HEIGHT + 4}" '
        f'width="{width}" height="{_HEIGHT + 4}" aria-label="{_text(summary)}">'
        f"<title>{_text(summary)}</title>{''.join(parts)}</svg>"
    )


# --- what each tool call showed ------------------------------------------------------------------------


def signature_badge(signature: Mapping[str, Any] | None) -> str:
    """``signature verified (key …)``, ``not verified: why``, ``unsigned`` or ``not checked``."""
    if signature is None:
        return ""
    state = str(signature["state"])
    klass = "sig sig-" + state.replace(" ", "-")
    key = f" (key {_text(signature['key_id'])})" if signature.get("key_id") else ""
    if state == "not checked":
        signed = "signed" if signature.get("signed") else "unsigned"
        words = f"{signed}{key}, signature not checked: {_text(signature['reason'])}"
    elif state == "not verified":
        words = f"signature not verified: {_text(signature['reason'])}"
    elif state == "verified":
        words = f"signature verified{key}"
    else:
        words = "unsigned"
    return f'<span class="{klass}">{words}</span>'


def evidence_item(item: Mapping[str, Any]) -> str:
    """One evidence item as the agent saw it: document id, source, title, breadcrumb, excerpt."""
    cut = (
        '<span class="cut">excerpt at the length cap: it may have been cut</span>' if item.get("cut") else ""
    )
    return (
        f'<li class="item" data-document-id="{_text(item.get("document_id"))}">'
        f'<div class="document-id mono">{_text(item.get("document_id"))}</div>'
        f'<div class="meta"><span class="source">{_text(item.get("source"))}</span> · '
        f'<span class="title">{_text(item.get("title"))}</span> · '
        f'<span class="breadcrumb">{_text(item.get("breadcrumb"))}</span></div>'
        f'<blockquote class="excerpt">{_lines(item.get("excerpt"))}</blockquote>{cut}</li>'
    )


def _refused(entry: Mapping[str, Any]) -> str:
    notes = []
    for refused in entry.get("refused") or []:
        notes.append(
            '<aside class="conflict"><strong>CONFLICT</strong>: a later write for this tool call, origin '
            f"{_text(refused.get('origin_partition'))}@{_text(refused.get('origin_offset'))}, was refused by "
            f'the write-once ledger: projection <span class="mono">{_text(refused.get("projection_sha256"))}'
            f"</span>, {_text(refused.get('evidence_status'))}, {_text(refused.get('returned_count'))} "
            "returned. The agent was never shown it; it was shown the entry beside.</aside>"
        )
    if entry.get("later_differs"):
        notes.append(
            '<aside class="conflict">The ledger topic later carried a different entry for this key (after '
            "the first expired, or from a rebuild); the audit store keeps the first one.</aside>"
        )
    return "".join(notes)


def shown_article(entry: Mapping[str, Any], call_href: str | None) -> str:
    """One tool call's stored entry: status, hash, signature, query, and every item; conflicts beside."""
    tcid = entry["tool_call_id"]
    name = f'<a href="{call_href}">{_text(tcid)}</a>' if call_href else _text(tcid)
    hash_state = {True: "hash ok", False: "hash MISMATCH", None: _DASH}[entry.get("hash_ok")]
    flags = [
        f'<span class="ledger-status">{_text(entry.get("status"))}</span>',
        _text(entry.get("evidence_status")),
        _text(entry.get("relevance_level")),
        f'<span class="hash{"" if entry.get("hash_ok") is not False else " bad"}">{hash_state}</span>',
        signature_badge(entry.get("signature")),
    ]
    if entry.get("status") == "FAILED":
        reason = _text(entry.get("failure_reason"))
        body = f'<p class="bad">FAILED: {reason}; the agent was shown no evidence.</p>'
    elif entry.get("unreadable"):
        body = f'<p class="bad">{_text(entry["unreadable"])}</p>'
    else:
        truncated = (
            '<p class="truncated">truncated: the projection was cut (items, an excerpt, or bytes) before the '
            "agent saw it</p>"
            if entry.get("truncated")
            else ""
        )
        items = "".join(evidence_item(i) for i in entry.get("items") or [])
        body = (
            f'<p class="query">query: <q>{_text(entry.get("query"))}</q> · '
            f"{_text(entry.get('returned_count'))} returned</p>{truncated}"
            + (f'<ol class="items">{items}</ol>' if items else '<p class="dim">no evidence items</p>')
        )
    return (
        f'<article class="shown" id="{_text(shown_anchor(tcid))}" data-tool-call-id="{_text(tcid)}">'
        f'<h3>tool call <span class="mono">{name}</span> · {" · ".join(f for f in flags if f)}</h3>'
        f'<div class="pair"><div class="seen">{body}'
        f'<p class="dim mono">sha256 {_text(entry.get("projection_sha256"))} · '
        f"from {_text(entry.get('ledger_record'))}</p></div>{_refused(entry)}</div></article>"
    )


def shown_section(entries: Mapping[str, Mapping[str, Any]], recorded: set[str], anchor: Any) -> str:
    """Every stored entry of the run, in origin order; says so when the store holds none."""
    if not entries:
        return (
            '<h2>Evidence shown</h2>\n<p class="dim" id="evidence">No ledger entries of this run in the '
            "audit store (an audit database from before schema version 3, or a sink that does not read the "
            "ledger topic yet).</p>\n"
        )
    articles = "\n".join(
        shown_article(e, _fragment(anchor(t)) if t in recorded else None) for t, e in entries.items()
    )
    return f'<h2>Evidence shown</h2>\n<section id="evidence">\n{articles}\n</section>\n'


# --- a draft's claims beside their evidence ------------------------------------------------------------


def _cite_block(cite: Mapping[str, Any], document_ids: Sequence[str]) -> str:
    tcid = cite["tool_call_id"]
    if not cite["stored"]:
        return (
            f'<div class="cite"><h4 class="mono">{_text(tcid)}</h4><p class="dim">no ledger entry of this '
            "run in the audit store</p></div>"
        )
    link = f'<a href="{_fragment(shown_anchor(tcid))}">{_text(tcid)}</a>'
    found = {i["document_id"] for i in cite["items"]}
    unknown = [d for d in document_ids if d not in found]
    missing = (
        '<p class="bad">cited but not in this projection: '
        + ", ".join(f'<span class="mono">{_text(d)}</span>' for d in unknown)
        + "</p>"
        if unknown
        else ""
    )
    items = "".join(evidence_item(i) for i in cite["items"])
    return (
        f'<div class="cite"><h4 class="mono">{link} · {_text(cite["evidence_status"])}</h4>'
        + (f'<ol class="items">{items}</ol>' if items else '<p class="dim">no evidence items</p>')
        + f"{missing}</div>"
    )


def claims(view: Mapping[str, Any], violation: Any) -> str:
    """The draft's analysis items, each beside what it cites, with the violations inside it
    (``violation(v)`` draws one), then the conclusion, the action plan and the limitations."""
    rows = []
    for item in view["analysis"]:
        here = "".join(violation(v) for v in item["violations"])
        cites = "".join(_cite_block(c, item["document_ids"]) for c in item["cites"])
        rows.append(
            f'<div class="claim" data-item-id="{_text(item["id"])}"><div class="said">'
            f'<p><span class="item-id mono">{_text(item["id"])}</span> · '
            f'<span class="kind">{_text(item["kind"])}</span></p>'
            f'<p class="content">{_lines(item["content"])}</p>'
            + _specifics(item)
            + (f'<ol class="violations">{here}</ol>' if here else "")
            + f'</div><div class="cited">{cites or _CITES_NOTHING}</div></div>'
        )
    out = f'<div class="claims">{"".join(rows)}</div>' if rows else ""
    conclusion = view.get("conclusion")
    if conclusion is not None:
        here = "".join(violation(v) for v in conclusion["violations"])
        out += (
            '<p class="conclusion"><strong>conclusion</strong> '
            f"(on {_text(', '.join(conclusion['based_on_analysis_ids']))}): "
            f"{_lines(conclusion['content'])}</p>"
            + _specifics(conclusion)
            + (f'<ol class="violations">{here}</ol>' if here else "")
        )
    elif view["stored_draft"]:
        out += '<p class="conclusion dim">conclusion: none (evidence was insufficient)</p>'
    for action in view["action_plan"]:
        here = "".join(violation(v) for v in action["violations"])
        out += (
            f'<p class="action"><strong>action <span class="mono">{_text(action["id"])}</span></strong> '
            f"(on {_text(', '.join(action['based_on_analysis_ids']))}): {_lines(action['content'])}</p>"
            + _specifics(action)
            + (f'<ol class="violations">{here}</ol>' if here else "")
        )
    if view["limitations"] or view["limitation_violations"]:
        here = "".join(violation(v) for v in view["limitation_violations"])
        out += (
            '<p class="limitations"><strong>limitations</strong>: '
            + " · ".join(_lines(x) for x in view["limitations"])
            + "</p>"
            + (f'<ol class="violations">{here}</ol>' if here else "")
        )
    return out
