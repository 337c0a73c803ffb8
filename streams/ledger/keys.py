"""The Redis key layout of the ledger, in one place (SPEC 3.6).

``ns`` defaults to ``ec``; the braces are a Redis Cluster hash tag, so an entry and the owners index
of its tool call id live in one slot (one node answers a draft's reads).
"""

from __future__ import annotations

import re

from models.ids import is_valid_id

_GLOB = re.compile(r"([*?\[\]\\])")


def ledger_key(ns: str, run_id: str, tool_call_id: str) -> str:
    """The hash of one entry: ``<ns>:ledger:{<tool_call_id>}:<run_id>``."""
    return f"{ns}:ledger:{{{tool_call_id}}}:{run_id}"


def owners_key(ns: str, tool_call_id: str) -> str:
    """The sorted set of run ids owning an entry with this tool call id: ``<ns>:owners:{<tool_call_id>}``."""
    return f"{ns}:owners:{{{tool_call_id}}}"


def report_claim_key(ns: str, run_id: str, draft_id: str, attempt: int) -> str:
    """The guard's write-once claim on one draft's report (SPEC 4.3):
    ``<ns>:report:{<run_id>}:<draft_id>:<attempt>``, in the guard's own key space (``<ns>:report:*``, SPEC 1).

    ``run_id`` is a valid id (no ``:`` or braces); ``draft_id`` may hold any character, and the attempt,
    digits after the last ``:``, still reads back unambiguously."""
    return f"{ns}:report:{{{run_id}}}:{draft_id}:{attempt}"


def judgement_key(ns: str, run_id: str, digest: str) -> str:
    """The semantic review's write-once record of one judgement (SPEC 4.4):
    ``<ns>:judgement:{<run_id>}:<digest>``, in the guard's key space; ``digest`` is lowercase hex."""
    return f"{ns}:judgement:{{{run_id}}}:{digest}"


def run_pattern(ns: str, run_id: str) -> str:
    """A ``SCAN MATCH`` pattern for every entry of one run (valid ids hold no glob characters)."""
    return ledger_key(ns, run_id, "*")


def ledger_pattern(ns: str) -> str:
    """A ``SCAN MATCH`` pattern for every entry of a namespace (its glob characters taken literally)."""
    literal = _GLOB.sub(r"\\\1", ns)
    return f"{literal}:ledger:*"


def parse_ledger_key(ns: str, key: str) -> tuple[str, str] | None:
    """``(run_id, tool_call_id)`` of an entry's key in ``ns``, or None when it is not one."""
    head = f"{ns}:ledger:{{"
    if not key.startswith(head):
        return None
    tool_call_id, _, run_id = key[len(head) :].partition("}:")
    if not is_valid_id(tool_call_id) or not is_valid_id(run_id):
        return None
    return run_id, tool_call_id
