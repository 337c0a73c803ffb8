"""What the run page's templates (``streams/web/pages/templates/evidence.html``) need from Python: the anchors
and addresses of a run's parts, the chain's summary line, the length at which a draft's text is cut.

The auditor's view itself — the chain at a glance (inline SVG), the evidence each tool call showed the
agent, each draft's claims beside the evidence they cite with the review's specifics — is drawn by the
templates, autoescaped. No JavaScript; the picture is SVG drawn with the page's own style sheet.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from streams.printable import printable
from streams.web.pages.run_evidence import ChainStep

MAX_TEXT_CHARS = 4000
"""A draft's text longer than this is cut on the page, with a link to the whole (the page's JSON):
one run of large drafts must not make a page of tens of megabytes."""


def shown_anchor(tool_call_id: str) -> str:
    """The element id of a tool call's evidence on its run's page."""
    return f"shown-{printable(tool_call_id)}"


def item_anchor(tool_call_id: str, index: int) -> str:
    """The element id of one evidence item of a tool call's projection on its run's page (``~`` is in
    no valid id, so no tool call's anchor can be another's item's)."""
    return f"{shown_anchor(tool_call_id)}~{index}"


def receipt_href(run_id: str, draft_id: str, attempt: int | None = None) -> str:
    """The receipt's address: ``/runs/<run>/drafts/<draft>/receipt.json`` (``?attempt=N`` for one attempt)."""
    base = f"/runs/{quote(run_id, safe='')}/drafts/{quote(draft_id, safe='')}/receipt.json"
    return base if attempt is None else f"{base}?attempt={attempt}"


def chain_summary(steps: Sequence[ChainStep]) -> str:
    """The chain picture in words (its title and label): ``hits 12, blocks 5, …``."""
    return ", ".join(f"{s['step']} {s['count']}" for s in steps)
