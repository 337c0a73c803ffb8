"""The pages ``evidence-chain serve`` shows people: the run list and one run's trail, as HTML and JSON.

The documents are built here by pure functions from what the audit store reads (no I/O); the HTML is
rendered from the Jinja2 templates in ``streams/web/pages/templates/`` with **autoescaping on**, so every
value from a record is escaped by default, never by habit: a hostile ``draft_id`` such as ``<script>`` is
text on the page, never markup. The ``t`` filter shows controls escaped as the CLI shows them (a U+202E
cannot reorder an id) and None as a dash; ``urlq`` percent-encodes an id for a URL. The pages need no
JavaScript, and the server's Content-Security-Policy forbids scripts anyway.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from typing import Any, NotRequired, cast
from urllib.parse import quote

import jinja2
from typing_extensions import TypedDict

from models.audit import RunOverview, RunSummary, ToolCallRow, VerdictRow, ViolationLink
from models.verdict import Violation
from streams import codec
from streams.audit.store import VERDICT_OUTCOMES
from streams.printable import printable
from streams.web.pages.anchors import MAX_TEXT_CHARS, chain_summary, item_anchor, receipt_href, shown_anchor
from streams.web.pages.run_evidence import ChainStep, DraftView, EntryView, EvidenceDocument
from streams.web.pages.window import (
    FIRST,
    MAX_PAGE_BYTES,
    PAGE_BUDGET_BYTES,
    Starts,
    Window,
    run_address,
    windowed,
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
        return _shown(epoch_ms)


def _shown(value: Any) -> str:
    """A value as a page shows it, before escaping: None as a dash, booleans as yes/no, controls escaped."""
    if value is None or isinstance(value, jinja2.Undefined):
        return _DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    return printable(value)


def text(value: Any) -> str:
    """``value`` as HTML text: None as a dash, booleans as yes/no, controls escaped, then ``html.escape``
    (the one escaping of a value outside the templates, whose autoescaping does the same)."""
    if value is None:
        return _DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    return escape(printable(value), quote=True)


@functools.cache
def templates() -> jinja2.Environment:
    """The templates of ``streams/web/pages/templates`` (package data), autoescaped, with the pages'
    helpers."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("streams.web.pages", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(t=_shown, urlq=lambda value: quote(str(value), safe=""), when=_when)
    env.globals.update(
        style=STYLE,  # plain CSS with nothing to escape: the page carries the bytes its CSP hash allows
        outcomes=VERDICT_OUTCOMES,
        max_text=MAX_TEXT_CHARS,
        run_href=run_href,
        call_anchor=call_anchor,
        shown_anchor=shown_anchor,
        item_anchor=item_anchor,
        chain_summary=chain_summary,
        max_page_bytes=MAX_PAGE_BYTES,
    )
    return env


def _render(name: str, **values: Any) -> str:
    return templates().get_template(name).render(**values)


def error_page(title: str, message: str) -> str:
    """A page that says what went wrong and what to do (the message is text, never markup)."""
    return _render("error.html", title=title, message=message)


# --- the run list ------------------------------------------------------------------------------------


class RunList(RunOverview):
    """A page of the run list as asked for: :meth:`AuditStore.run_overview` and its ``limit``."""

    limit: int


class ListedRun(RunSummary):
    """A run of the run list, with its page's address."""

    href: str


class RunsDocument(TypedDict):
    """The run list as JSON."""

    runs: list[ListedRun]
    run_count: int
    offset: int
    verdicts_without_run_id: int
    limit: int


def runs_document(overview: RunList) -> RunsDocument:
    """The run list as JSON: :meth:`AuditStore.run_overview` plus each run's page."""
    runs: list[ListedRun] = [{**run, "href": run_href(run["run_id"])} for run in overview["runs"]]
    return {
        "runs": runs,
        "run_count": overview["run_count"],
        "offset": overview["offset"],
        "verdicts_without_run_id": overview["verdicts_without_run_id"],
        "limit": overview["limit"],
    }


def runs_page(overview: RunList, where: str) -> str:
    """The run list, newest first, with counts of tool calls, dead letters and verdicts by outcome, a
    page at a time (``overview`` has ``offset`` and ``limit``)."""
    runs = overview["runs"]
    offset, total = overview["offset"], overview["run_count"]
    limit = overview["limit"] or len(runs) or 1
    if len(runs) < total:
        shown = f"{offset + 1}–{offset + len(runs)} of {total}" if runs else f"none of {total} here"
    else:
        shown = str(len(runs))
    pager = []
    if offset > 0:
        pager.append(("prev", f"/runs?limit={limit}&offset={max(0, offset - limit)}", "newer runs"))
    if offset + len(runs) < total:
        pager.append(("next", f"/runs?limit={limit}&offset={offset + limit}", "older runs"))
    return _render("runs.html", title="Runs", overview=overview, where=where, shown=shown, pager=pager)


# --- one run -------------------------------------------------------------------------------------------


Row = dict[str, object]
"""A row of a run's document: a ``tool_invocation`` row without its run id (the document's), and what the
page adds to it (a tool call's ``anchor``; a draft's ``violations``, ``evidence``, ``receipt_href``,
``conflict_with``)."""


class LinkedViolation(Violation):
    """A violation with the tool calls the guard's audit record links it to."""

    tool_call_ids: list[str]


class RunDocument(TypedDict):
    """One run's trail as JSON (:func:`run_document`)."""

    run_id: str
    tool_calls: list[Row]
    drafts: list[Row]
    tool_calls_with_dead_letter: int
    chain: NotRequired[list[ChainStep]]
    entries: NotRequired[list[EntryView]]
    signatures_checked: NotRequired[bool]


class RunPage(RunDocument):
    """One page of a run's document: each list cut to its window (:mod:`streams.web.pages.window`)."""

    left_out: dict[str, Window]


def _page(document: RunDocument, starts: Starts, base: str, budget: int, *, html: bool = True) -> RunPage:
    return cast(RunPage, windowed(document, starts, base, budget, html=html))  # the same lists, cut


def _in_run(row: ToolCallRow | VerdictRow) -> Row:
    return {k: v for k, v in row.items() if k != "run_id"}


def run_document(
    run_id: str,
    tool_calls: Sequence[ToolCallRow],
    verdicts: Sequence[VerdictRow],
    details: Mapping[str, Sequence[ViolationLink]],
    evidence: EvidenceDocument | None = None,
) -> RunDocument:
    """One run's trail as JSON: each tool call with its anchor, each draft with its violations, and
    with ``evidence`` (:func:`streams.web.pages.run_evidence.evidence_document`) what each tool call
    showed the agent, each draft's items beside what they cite, the chain's counts and the receipts.

    A violation lists the tool calls it concerns when the guard's audit record says so
    (``fields.violations``); a record with only ``violation_codes`` gives codes without them.

    Drafts are write-once per ``(run_id, draft_id, attempt)`` where people read them: the first
    verdict of a triple (in the order the drafts were produced) is the one shown and the one its
    receipt holds; a later one of another draft (another ``draft_sha256``) is listed right after it
    with ``conflict_with`` (the first's event id), never in its place.
    """
    calls = [_in_run(call) | {"anchor": call_anchor(call["tool_call_id"])} for call in tool_calls]
    drafts: list[Row] = []
    first_of: dict[tuple[str | None, int | None], Row] = {}
    later: dict[str, list[Row]] = {}
    for verdict in verdicts:
        found = details.get(str(verdict["event_id"]))
        listed: Sequence[Mapping[str, object]] = (
            [{"code": code, "path": None, "tool_call_ids": []} for code in verdict["violation_codes"]]
            if found is None
            else found
        )
        draft = _in_run(verdict) | {"violations": [dict(v) | {"index": i} for i, v in enumerate(listed)]}
        view = evidence["drafts"].get(str(verdict["event_id"])) if evidence is not None else None
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
    document: RunDocument = {
        "run_id": run_id,
        "tool_calls": calls,
        "drafts": drafts,
        "tool_calls_with_dead_letter": sum(1 for c in tool_calls if c["dead_letter_reason"]),
    }
    if evidence is not None:
        document["chain"] = evidence["chain"]
        document["entries"] = list(evidence["entries"].values())
        document["signatures_checked"] = evidence["signatures_checked"]
    return document


def _with_links(view: DraftView, listed: Sequence[Mapping[str, object]]) -> Row:
    """The draft's view with each violation given the tool calls the audit record links it to."""
    # the audit record's links (violation_details), or none for a record with codes only
    about = {(v.get("code"), v.get("path")): cast(list[str], v.get("tool_call_ids") or []) for v in listed}

    def linked(violations: Sequence[Violation]) -> list[LinkedViolation]:
        return [{**v, "tool_call_ids": about.get((v.get("code"), v.get("path")), [])} for v in violations]

    out: Row = dict(view)
    out["analysis"] = [dict(i) | {"violations": linked(i["violations"])} for i in view["analysis"]]
    conclusion = view["conclusion"]
    if conclusion is not None:
        out["conclusion"] = dict(conclusion) | {"violations": linked(conclusion["violations"])}
    out["action_plan"] = [dict(a) | {"violations": linked(a["violations"])} for a in view["action_plan"]]
    out["limitation_violations"] = linked(view["limitation_violations"])
    out["other_violations"] = linked(view["other_violations"])
    return out


@dataclass(frozen=True)
class Links:
    """Where a tool call's row and its evidence are, from anywhere on one page of a run: an anchor on
    this page, or the page whose window starts at it (:mod:`streams.web.pages.window`)."""

    base: str
    starts: Starts
    calls_here: frozenset[str]
    calls_at: Mapping[str, int]
    entries_here: frozenset[str]
    entries_at: Mapping[str, int]

    @classmethod
    def of(cls, whole: RunDocument, page: RunPage, starts: Starts) -> Links:
        """The links of ``page``, a window of the run document ``whole``."""
        return cls(
            base=run_href(whole["run_id"]),
            starts=starts,
            calls_here=frozenset(str(c["tool_call_id"]) for c in page["tool_calls"]),
            calls_at=_positions(whole["tool_calls"]),
            entries_here=frozenset(str(e["tool_call_id"]) for e in page.get("entries") or []),
            entries_at=_positions(whole.get("entries") or []),
        )

    def call(self, tool_call_id: str) -> str | None:
        """The address of the tool call's row (None: the run has no audit record of it)."""
        return self._at(tool_call_id, self.calls_here, self.calls_at, "calls", call_anchor(tool_call_id))

    def entry(self, tool_call_id: str, item: int | None = None) -> str | None:
        """The address of the tool call's stored entry, or of its ``item``-th evidence item (None: the
        audit store holds no entry of it)."""
        anchor = shown_anchor(tool_call_id) if item is None else item_anchor(tool_call_id, item)
        return self._at(tool_call_id, self.entries_here, self.entries_at, "entries", anchor)

    def _at(
        self, key: str, here: frozenset[str], at: Mapping[str, int], parameter: str, anchor: str
    ) -> str | None:
        fragment = quote(anchor, safe="")
        if key in here:
            return f"#{fragment}"
        if key not in at:
            return None
        return run_address(self.base, self.starts.moved(parameter, at[key]).query(), fragment)


def _positions(elements: Sequence[Mapping[str, object]]) -> dict[str, int]:
    positions: dict[str, int] = {}
    for index, element in enumerate(elements):
        positions.setdefault(str(element["tool_call_id"]), index)
    return positions


def run_json(document: RunDocument, starts: Starts = FIRST) -> bytes:
    """One page of a run as JSON (:func:`run_document`'s lists cut to their windows, with
    ``left_out``), never more than :data:`MAX_PAGE_BYTES`."""
    base = run_href(document["run_id"], as_json=True)
    budget = PAGE_BUDGET_BYTES
    while True:
        body = codec.dumps(_page(document, starts, base, budget, html=False))
        if len(body) <= MAX_PAGE_BYTES or budget < 1024:
            return body
        budget //= 2


def run_page(document: RunDocument, starts: Starts = FIRST) -> str:
    """One run: each tool call with what the ledger recorded and the projection's figures, the evidence
    each showed the agent (once), each draft with its verdict and its items linked to the evidence they
    cite, and every violation's tool calls linked to their rows; each list cut to its window (what is
    left out is said, with links to it), the page never more than :data:`MAX_PAGE_BYTES`."""
    base = run_href(document["run_id"])
    budget = PAGE_BUDGET_BYTES
    while True:
        page = _page(document, starts, base, budget)
        html = _render(
            "run.html",
            title=f"Run {document['run_id']}",
            document=page,
            recorded={str(c["tool_call_id"]) for c in document["tool_calls"]},
            entries={e["tool_call_id"]: e for e in page.get("entries") or []},
            documents={
                e["tool_call_id"]: [i["document_id"] for i in e["items"]]
                for e in document.get("entries") or []
            },
            links=Links.of(document, page, starts),
        )
        if len(html.encode("utf-8")) <= MAX_PAGE_BYTES or budget < 1024:
            return html
        budget //= 2
