"""The agent's side: look up what to show the model, check its draft, turn a verdict into a repair prompt.

::

    from streams.client import EvidenceChainClient, repair_prompt

    async with EvidenceChainClient() as client:          # EC_* settings, security included
        shown = await client.lookup(raw_hits_record)       # READY: shown.projection, exact ledger bytes
        verdict = await client.check(draft)                # as on the verdicts topic
        prompt = repair_prompt(verdict.verdict)            # REJECT → repair text; FALLBACK → fixed report

Agents in other languages use the same over HTTP: ``evidence-chain gateway`` (:mod:`streams.web.gateway`,
docs/openapi.yaml).
"""

from __future__ import annotations

from streams.client.client import EvidenceChainClient, LedgerReply, VerdictReply
from streams.client.repair import INSTRUCTIONS, fallback_report, repair_prompt
from streams.errors import CheckTimeout, LedgerIntegrityError, LookupTimeout, RejectedInput, ReplyTimeout

__all__ = [
    "INSTRUCTIONS",
    "CheckTimeout",
    "EvidenceChainClient",
    "LedgerIntegrityError",
    "LedgerReply",
    "LookupTimeout",
    "RejectedInput",
    "ReplyTimeout",
    "VerdictReply",
    "fallback_report",
    "repair_prompt",
]
