"""The pages ``evidence-chain serve`` shows people: the run list and one run's trail, as HTML and JSON.

Pure functions from what the audit store reads to a document; no I/O. Every value from a record
reaches the HTML through :func:`text` (``html.escape`` with quotes, control characters, the
bidirectional ones included, shown escaped as the CLI shows them), every id in a URL through
:func:`urllib.parse.quote`, so a hostile ``draft_id`` such as ``<script>`` is text on the page, never
markup, and a U+202E cannot reorder it. The pages need no JavaScript, and the server's
Content-Security-Policy forbids scripts anyway.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from html import escape
from typing import Any
from urllib.parse import quote

from streams.audit.store import VERDICT_OUTCOMES
from streams.cli.display import html_text as text
from streams.cli.display import printable
from streams.cli.evidence_pages import (
    chain_svg,
    claims,
    receipt_href,
    report_block,
    shown_anchor,
    shown_section,
    signature_badge,
)

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 1.5rem auto; max-width: 80rem; padding: 0 1rem;
       color: #1d1d1f; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 2rem; } h3 { font-size: 1rem; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
th, td { text-align: left; padding: 0.3rem 0.5rem; border-bottom: 1px solid #ddd; vertical-align: top; }
th { background: #f4f4f6; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr:target { background: #fff6d5; } code, .mono { font-family: ui-monospace, monospace; font-size: 0.85rem; }
.verdict { font-weight: 600; padding: 0 0.35rem; border-radius: 3px; }
.verdict-PASS { background: #dff3e3; } .verdict-REJECT { background: #fdf0cf; }
.verdict-FALLBACK { background: #f9d9d9; } .bad { color: #a40000; } .dim { color: #777; }
.wide { overflow-x: auto; }
article.draft { border: 1px solid #ddd; border-radius: 4px; padding: 0.2rem 1rem 0.6rem; margin: 1rem 0; }
svg.chain { max-width: 100%; height: auto; margin: 0.5rem 0 1rem; }
svg.chain rect { fill: #f4f4f6; stroke: #8a8a95; } svg.chain .arrow { fill: #8a8a95; stroke: #8a8a95; }
svg.chain .label { font-size: 13px; fill: #555; } svg.chain .count { font-size: 24px; font-weight: 600; }
svg.chain .detail { font-size: 10px; fill: #555; } svg.chain .step-verdict rect { fill: #eef3fb; }
article.shown { border: 1px solid #ddd; border-radius: 4px; padding: 0.2rem 1rem 0.6rem; margin: 1rem 0; }
article.shown:target { background: #fff6d5; }
.pair { display: flex; gap: 1rem; align-items: flex-start; } .pair .seen { flex: 3; min-width: 0; }
aside.conflict { flex: 2; border: 2px solid #c77700; background: #fff3e0; border-radius: 4px;
                 padding: 0.4rem 0.7rem; font-size: 0.9rem; }
ol.items { padding-left: 1.4rem; } li.item { margin: 0.4rem 0; }
.document-id { font-weight: 600; } .meta { color: #555; font-size: 0.85rem; }
blockquote.excerpt { margin: 0.2rem 0 0.2rem 0; padding: 0.3rem 0.6rem; border-left: 3px solid #b9c4d6;
                     background: #fafbfd; white-space: normal; }
.cut, .truncated { color: #8a5a00; font-size: 0.85rem; }
.sig-verified { color: #1d6b2f; } .sig-not-verified, .hash.bad { color: #a40000; font-weight: 600; }
.sig-unsigned, .sig-not-checked { color: #777; }
.claims { display: grid; gap: 0.6rem; margin: 0.6rem 0; }
.claim { display: grid; grid-template-columns: 2fr 3fr; gap: 1rem; border-top: 1px solid #eee;
         padding-top: 0.4rem; }
.cite h4 { margin: 0.2rem 0; font-size: 0.9rem; }
"""
STYLE_HASH = "sha256-" + base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
"""The Content-Security-Policy source that allows exactly :data:`STYLE`."""

_DASH = "—"


DOT_SEGMENTS = (".", "..")
"""Run ids no path can carry: browsers resolve ``/runs/.`` and ``/runs/%2E`` alike to ``/runs/``
(the URL Standard treats ``%2e`` as a dot), so these runs are addressed as ``/runs?run_id=.``."""


def run_href(run_id: str, *, as_json: bool = False) -> str:
    """The address of a run's page: ``/runs/<id>`` (percent-encoded, ``/`` included), or
    ``/runs?run_id=<id>`` for an id that is a dot segment; ``as_json`` adds ``format=json``."""
    if run_id in DOT_SEGMENTS:
        return f"/runs?run_id={quote(run_id, safe='')}" + ("&format=json" if as_json else "")
    return f"/runs/{quote(run_id, safe='')}" + ("?format=json" if as_json else "")


def call_anchor(tool_call_id: str) -> str:
    """The element id of a tool call's row on its run's page (controls escaped, as the id shows)."""
    return f"call-{printable(tool_call_id)}"


def _when(epoch_ms: Any) -> str:
    if not isinstance(epoch_ms, int) or isinstance(epoch_ms, bool):
        return _DASH
    try:
        return datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="seconds")
    except (OverflowError, ValueError, OSError):
        return text(epoch_ms)


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{text(title)} · evidence-chain</title>\n<style>{STYLE}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def error_page(title: str, message: str) -> str:
    """A page that says what went wrong and what to do (the message is text, never markup)."""
    return _page(
        title,
        f'<h1>{text(title)}</h1>\n<p class="bad">{text(message)}</p>\n<p><a href="/runs">all runs</a></p>',
    )


# --- the run list ------------------------------------------------------------------------------------


def runs_document(overview: Mapping[str, Any]) -> dict[str, Any]:
    """The run list as JSON: :meth:`AuditStore.run_overview` plus each run's page."""
    return {**overview, "runs": [{**run, "href": run_href(run["run_id"])} for run in overview["runs"]]}


def runs_page(overview: Mapping[str, Any], where: str) -> str:
    """The run list, newest first, with counts of tool calls, dead letters and verdicts by outcome."""
    runs: Sequence[Mapping[str, Any]] = overview["runs"]
    rows = "\n".join(
        f'<tr class="run" data-run-id="{text(run["run_id"])}">'
        f'<td class="run-id mono"><a href="{escape(run_href(run["run_id"]))}">{text(run["run_id"])}</a></td>'
        f'<td class="n tool-calls">{run["tool_calls"]}</td>'
        f'<td class="n dead-letters">{run["dead_letters"]}</td>'
        + "".join(f'<td class="n verdicts-{o}">{run["verdicts"][o]}</td>' for o in VERDICT_OUTCOMES)
        + f'<td class="when">{_when(run["last_source_timestamp"])}</td>'
        f'<td class="when dim">{text(run["last_applied_at"])}</td></tr>'
        for run in runs
    )
    offset, total = int(overview.get("offset") or 0), int(overview["run_count"])
    limit = int(overview.get("limit") or len(runs) or 1)
    if len(runs) < total:
        shown = f"{offset + 1}–{offset + len(runs)} of {total}" if runs else f"none of {total} here"
    else:
        shown = str(len(runs))
    pager = []
    if offset > 0:
        newer = max(0, offset - limit)
        pager.append(f'<a rel="prev" href="/runs?limit={limit}&amp;offset={newer}">newer runs</a>')
    if offset + len(runs) < total:
        pager.append(f'<a rel="next" href="/runs?limit={limit}&amp;offset={offset + limit}">older runs</a>')
    pages_nav = f'<p class="pager">{" · ".join(pager)}</p>\n' if pager else ""
    orphans = overview["verdicts_without_run_id"]
    body = (
        "<h1>Runs</h1>\n"
        f"<p>{shown} run{'' if overview['run_count'] == 1 else 's'} in "
        f'<span class="mono">{text(where)}</span>, newest first (by the latest origin time of any of '
        'their records). <a href="/runs?format=json">JSON</a></p>\n'
        '<form action="/runs" method="get"><label>Run id <input name="run_id" size="40"></label> '
        '<button type="submit">Show</button></form>\n'
        '<table id="runs">\n<thead><tr><th>run</th><th>tool calls</th><th>dead letters</th>'
        + "".join(f"<th>{o}</th>" for o in VERDICT_OUTCOMES)
        + "<th>latest origin (UTC)</th><th>stored</th></tr></thead>\n"
        f"<tbody>\n{rows}\n</tbody>\n</table>\n"
        + pages_nav
        + (
            f'<p class="dim">{orphans} verdicts carry no readable run id and belong to no run here.</p>'
            if orphans
            else ""
        )
        + (
            ""
            if runs
            else "<p>No runs yet: is the audit sink running (<code>evidence-chain audit-sink</code>)?</p>"
        )
    )
    return _page("Runs", body)


# --- one run -------------------------------------------------------------------------------------------


def run_document(
    run_id: str,
    tool_calls: Sequence[Mapping[str, Any]],
    verdicts: Sequence[Mapping[str, Any]],
    details: Mapping[str, Sequence[Mapping[str, Any]]],
    evidence: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One run's trail as JSON: each tool call with its anchor, each draft with its violations, and
    with ``evidence`` (:func:`streams.cli.evidence.evidence_document`) what each tool call showed the
    agent, each draft's items beside what they cite, the chain's counts and the receipts.

    A violation lists the tool calls it concerns when the guard's audit record says so
    (``fields.violations``); a record with only ``violation_codes`` gives codes without them.

    Drafts are write-once per ``(run_id, draft_id, attempt)`` where people read them: the first
    verdict of a triple (in the order the drafts were produced) is the one shown and the one its
    receipt holds; a later one of another draft (another ``draft_sha256``) is listed right after it
    with ``conflict_with`` (the first's event id), never in its place.
    """
    calls = [
        {k: v for k, v in call.items() if k != "run_id"} | {"anchor": call_anchor(call["tool_call_id"])}
        for call in tool_calls
    ]
    drafts: list[dict[str, Any]] = []
    first_of: dict[tuple[Any, Any], dict[str, Any]] = {}
    later: dict[str, list[dict[str, Any]]] = {}
    for verdict in verdicts:
        listed = details.get(str(verdict["event_id"]))
        if listed is None:
            listed = [
                {"code": code, "path": None, "tool_call_ids": []} for code in verdict["violation_codes"]
            ]
        draft = {k: v for k, v in verdict.items() if k != "run_id"} | {
            "violations": [dict(v) | {"index": i} for i, v in enumerate(listed)]
        }
        view = (evidence or {}).get("drafts", {}).get(str(verdict["event_id"]))
        triple = (verdict.get("draft_id"), verdict.get("attempt"))
        first = first_of.get(triple)
        sha = view.get("draft_sha256") if view is not None else None
        if first is not None and (sha is None or sha != first.get("draft_sha256")):  # unknown bytes: say so
            draft["conflict_with"] = first["event_id"]
        if view is not None:
            draft["evidence"] = _with_links(view, listed)
            attempts, draft_id = view["attempts"], verdict.get("draft_id")
            if view["stored_verdict"] and isinstance(draft_id, str) and attempts and first is None:
                latest = verdict.get("attempt") == max(attempts)
                draft["receipt_href"] = receipt_href(run_id, draft_id, None if latest else verdict["attempt"])
        if first is None:
            first_of[triple] = draft | {"draft_sha256": sha}
            drafts.append(draft)
        elif "conflict_with" in draft:
            later.setdefault(str(first["event_id"]), []).append(draft)
        # else: the same draft sent again (same bytes): its first verdict stands for it
    drafts = [each for draft in drafts for each in (draft, *later.get(str(draft["event_id"]), []))]
    document = {
        "run_id": run_id,
        "tool_calls": calls,
        "drafts": drafts,
        "tool_calls_with_dead_letter": sum(1 for c in tool_calls if c.get("dead_letter_reason")),
    }
    if evidence is not None:
        document |= {
            "chain": evidence["chain"],
            "entries": list(evidence["entries"].values()),
            "signatures_checked": evidence["signatures_checked"],
        }
    return document


def _with_links(view: Mapping[str, Any], listed: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The draft's view with each violation given the tool calls the audit record links it to."""
    about = {(v.get("code"), v.get("path")): v.get("tool_call_ids") or [] for v in listed}

    def linked(violations: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return [
            dict(v) | {"tool_call_ids": about.get((v.get("code"), v.get("path")), [])} for v in violations
        ]

    out = dict(view)
    out["analysis"] = [dict(i) | {"violations": linked(i["violations"])} for i in view["analysis"]]
    if view.get("conclusion") is not None:
        out["conclusion"] = dict(view["conclusion"]) | {
            "violations": linked(view["conclusion"]["violations"])
        }
    out["action_plan"] = [dict(a) | {"violations": linked(a["violations"])} for a in view["action_plan"]]
    out["limitation_violations"] = linked(view["limitation_violations"])
    out["other_violations"] = linked(view["other_violations"])
    return out


def _call_ref(tool_call_id: Any, recorded: set[str]) -> str:
    """A link to the tool call's row when the run has one, else the id as text saying it has none."""
    if isinstance(tool_call_id, str) and tool_call_id in recorded:
        href = "#" + quote(call_anchor(tool_call_id), safe="")
        return f'<a class="call-ref mono" href="{escape(href)}">{text(tool_call_id)}</a>'
    return (
        f'<span class="call-ref mono unrecorded" title="no audit record of this tool call in this run">'
        f'{text(tool_call_id)}</span> <span class="dim">(no audit record in this run)</span>'
    )


def _refs(ids: Iterable[Any], recorded: set[str]) -> str:
    return ", ".join(_call_ref(t, recorded) for t in ids)


def _sha(sha: Any) -> str:
    """The first 12 hex digits of a sha256, the whole of it on hover (as ``inspect`` shortens it)."""
    if not isinstance(sha, str) or len(sha) <= 12:
        return text(sha)
    return f'<span title="{text(sha)}">{text(sha[:12])}…</span>'


def _tool_call_row(call: Mapping[str, Any], entry: Mapping[str, Any] | None = None) -> str:
    """A tool call's figures; with its stored ledger ``entry``, the projection columns are the entry's
    (what the agent was shown), never a later refused projection's."""
    tcid = call["tool_call_id"]
    if call.get("postprocess_status") == "FAILED":
        flow = f'<span class="bad">FAILED {text(call.get("postprocess_failure_reason") or "")}</span>'
    else:
        hits, blocks = call.get("candidate_count"), call.get("evidence_block_count")
        flow = f"{text('?' if hits is None else hits)}→{text('?' if blocks is None else blocks)}"
    sha = call.get("projection_sha256")
    if entry is not None and entry.get("status") == "READY":
        sha = entry.get("projection_sha256")
        projection = (
            f'<a href="{escape("#" + quote(shown_anchor(tcid), safe=""))}">'
            f"{text(entry.get('evidence_status'))}, {text(entry.get('returned_count'))} returned"
            + (", truncated" if entry.get("truncated") else "")
            + "</a> (the ledger entry)"
        )
        if entry.get("refused"):
            projection += ' <span class="bad">· a later projection was refused (CONFLICT)</span>'
    elif call.get("project_status") == "FAILED":
        projection = f'<span class="bad">FAILED {text(call.get("project_failure_reason") or "")}</span>'
    else:
        projection = (
            f"{text(call.get('evidence_status'))}, {text(call.get('returned_count'))} returned"
            + (", truncated" if call.get("truncated") else "")
            + f", {text(call.get('projection_bytes'))} bytes"
        )
    outcome = call.get("ledger_outcome")
    ledger = text(call.get("ledger_status")) + (f"/{text(outcome)}" if outcome else "")
    letter = (
        f'<span class="bad">{text(call["dead_letter_reason"])}</span> '
        f"at {text(call.get('dead_letter_station'))}: {text(call.get('dead_letter_error'))}"
        if call.get("dead_letter_reason")
        else _DASH
    )
    return (
        f'<tr class="tool-call" id="{text(call_anchor(tcid))}">'
        f'<td class="mono">{text(tcid)}</td>'
        f'<td class="n">{text(call.get("origin_partition"))}@{text(call.get("origin_offset"))}</td>'
        f"<td>{flow}</td><td>{text(call.get('relevance_level'))}</td>"
        f'<td class="projection">{projection}</td>'
        f'<td class="mono sha">{_sha(sha)}</td>'
        f'<td class="ledger">{ledger}</td><td class="mono dim">{text(call.get("ledger_key"))}</td>'
        f'<td class="dead-letter">{letter}</td></tr>'
    )


def _violation(violation: Mapping[str, Any], recorded: set[str]) -> str:
    """One violation: its code, path, the tool calls it is about (linked), and its message when known."""
    where = f' <span class="path mono">{text(violation["path"])}</span>' if violation.get("path") else ""
    about = violation.get("tool_call_ids") or []
    refs = f" → {_refs(about, recorded)}" if about else ""
    message = (
        f' <span class="message dim">{text(violation["message"])}</span>' if violation.get("message") else ""
    )
    code = f'<code class="code">{text(violation["code"])}</code>'
    return f'<li class="violation">{code}{where}{refs}{message}</li>'


def _draft(index: int, draft: Mapping[str, Any], recorded: set[str]) -> str:
    if draft.get("conflict_with") is not None:
        return _conflicting_draft(index, draft, recorded)
    verdict = str(draft.get("verdict"))
    klass = f"verdict verdict-{verdict}" if verdict in VERDICT_OUTCOMES else "verdict"
    view = draft.get("evidence")
    if view is not None and view["stored_draft"]:
        # each violation at the item it concerns; what concerns no item stays in the draft's list
        body = claims(view, lambda v: _violation(v, recorded))
        listed = view["other_violations"]
    else:
        body, listed = "", draft["violations"]
    items = "".join(_violation(v, recorded) for v in listed)
    if items:
        violations = f'<ol class="violations">{items}</ol>'
    elif draft["violations"]:
        violations = ""
    else:
        violations = '<p class="dim">no violations</p>'
    cited = draft.get("cited_tool_call_ids") or []
    proof = ""
    if view is not None and view["stored_verdict"]:
        receipt = (
            f' · <a class="receipt" href="{escape(draft["receipt_href"])}">receipt.json</a>'
            if draft.get("receipt_href")
            else ""
        )
        proof = (
            f'<p class="proof">verdict {signature_badge(view["signature"])}{receipt} · draft sha256 '
            f'<span class="mono">{_sha(view["draft_sha256"])}</span></p>'
        )
    elif view is not None:
        proof = '<p class="proof dim">the verdict itself is not in the audit store (no receipt)</p>'
    return (
        f'<article class="draft" id="draft-{index}" data-event-id="{text(draft.get("event_id"))}">'
        f'<h3>draft <span class="draft-id mono">{text(draft.get("draft_id"))}</span> · attempt '
        f'<span class="attempt">{text(draft.get("attempt"))}</span> · '
        f'<span class="{klass}">{text(draft.get("verdict"))}</span></h3>'
        f"{proof}"
        f"{report_block(view.get('report')) if view is not None else ''}"
        f'<p class="cites">cites: {_refs(cited, recorded) if cited else _DASH}</p>'
        f"{body}{violations}"
        f'<p class="dim">origin {text(draft.get("origin_partition"))}@{text(draft.get("origin_offset"))}, '
        f"{_when(draft.get('source_timestamp'))}</p></article>"
    )


def _conflicting_draft(index: int, draft: Mapping[str, Any], recorded: set[str]) -> str:
    """A later, different draft with an earlier one's ``(draft_id, attempt)``: beside the first, marked."""
    cited = draft.get("cited_tool_call_ids") or []
    sha = (draft.get("evidence") or {}).get("draft_sha256")
    return (
        f'<aside class="conflict draft-conflict" id="draft-{index}" '
        f'data-event-id="{text(draft.get("event_id"))}" '
        f'data-conflict-with="{text(draft.get("conflict_with"))}">'
        f'<h3>CONFLICT: another draft <span class="draft-id mono">{text(draft.get("draft_id"))}</span> · '
        f'attempt <span class="attempt">{text(draft.get("attempt"))}</span></h3>'
        "<p>A later draft with the same run, draft id and attempt but other bytes (draft sha256 "
        f'<span class="mono">{_sha(sha)}</span>). The first one above is the one this page and its receipt '
        f"hold; this one was judged <b>{text(draft.get('verdict'))}</b> and is shown here only as a "
        "conflict: find out which process sent it.</p>"
        f'<p class="cites">cites: {_refs(cited, recorded) if cited else _DASH}</p>'
        f'<p class="dim">origin {text(draft.get("origin_partition"))}@{text(draft.get("origin_offset"))}, '
        f"{_when(draft.get('source_timestamp'))}</p></aside>"
    )


def run_page(document: Mapping[str, Any]) -> str:
    """One run: each tool call with what the ledger recorded and the projection's figures, each draft
    with its verdict, and every violation's tool calls linked to their rows."""
    run_id, calls, drafts = document["run_id"], document["tool_calls"], document["drafts"]
    recorded = {c["tool_call_id"] for c in calls}
    entries = {e["tool_call_id"]: e for e in document.get("entries") or []}
    rows = "\n".join(_tool_call_row(c, entries.get(c["tool_call_id"])) for c in calls)
    evidence = ""
    if "chain" in document:
        checked = (
            "Signatures are checked against the trusted keys (EC_TRUSTED_KEYS_FILE)."
            if document["signatures_checked"]
            else "Signatures are not checked: serve has no trusted keys (set EC_TRUSTED_KEYS_FILE)."
        )
        evidence = f'{chain_svg(document["chain"])}\n<p class="dim">{checked}</p>\n' + shown_section(
            entries, recorded, call_anchor
        )
    body = (
        f'<p><a href="/runs">all runs</a> · <a href="{escape(run_href(run_id, as_json=True))}">JSON</a></p>\n'
        f'<h1>Run <span class="mono" id="run-id">{text(run_id)}</span></h1>\n'
        f"<p>{len(calls)} tool calls, {document['tool_calls_with_dead_letter']} with a dead letter, "
        f"{len(drafts)} drafts.</p>\n"
        f"{evidence}"
        '<h2>Tool calls</h2>\n<div class="wide"><table id="tool-calls">\n'
        "<thead><tr><th>tool call</th><th>origin</th>"
        "<th>hits→blocks</th><th>level</th><th>projection shown</th><th>sha256</th><th>ledger</th>"
        "<th>ledger key</th><th>dead letter</th></tr></thead>\n"
        f"<tbody>\n{rows}\n</tbody>\n</table></div>\n"
        '<h2>Drafts</h2>\n<section id="drafts">\n'
        + ("\n".join(_draft(i, d, recorded) for i, d in enumerate(drafts)) or '<p class="dim">no drafts</p>')
        + "\n</section>"
    )
    return _page(f"Run {run_id}", body)
