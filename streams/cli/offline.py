"""``pipe`` and ``verify``: the stations without Kafka or Redis, JSON lines in and out.

Input is read as bytes, one record per line (a trailing ``\\r\\n`` or ``\\n`` is not part of it);
every input line gives exactly one output line, and the exit code is 0 when the input was read to
the end. These commands run the same code path as the agents (``streams.pipeline``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Iterator
from typing import IO, Any

from models.events import Rejection
from models.vocab import DeadLetterReason
from streams import json
from streams.errors import ConfigurationError, rejection
from streams.pipeline import process_lookup, process_raw_hits
from streams.settings import get_settings
from streams.stations.guard import EvidenceGuard
from streams.stations.ledger_view import InMemoryLedger

# Offline, a rejected line prints a dead letter instead of a FAILED LookupResult, so every
# LookupResult printed is status OK; the two envelope fields carry nothing and are left out.
_OFFLINE_LOOKUP_OMITS = ("status", "failure_reason")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``pipe`` and ``verify``."""
    pipe = sub.add_parser(
        "pipe",
        help="run the stations on JSON lines from stdin, without Kafka",
        description="One JSON object per stdin line → one stdout line: the projection (the exact "
        'ledger bytes), the LookupResult (--emit lookup), or {"dead_letter": ...}.',
    )
    pipe.add_argument("--emit", choices=("projection", "lookup"), default="projection")
    pipe.add_argument(
        "--from",
        dest="source",
        choices=("raw-hits", "lookup"),
        default="raw-hits",
        help="raw-hits records (default) or LookupResults fed straight to the projector",
    )
    pipe.set_defaults(handler=run_pipe)

    verify = sub.add_parser(
        "verify",
        help="run the guard on drafts from stdin against a ledger file, without Kafka or Redis",
        description="Ledger entries (JSON lines, first line for a key wins) from --ledger; one draft "
        "per stdin line → one verdict per line.",
    )
    source = verify.add_mutually_exclusive_group(required=True)
    source.add_argument("--ledger", metavar="FILE", help="ledger entries as JSON lines")
    source.add_argument("--redis", action="store_true", help="the live Redis ledger (EC_REDIS_URL, EC_NS)")
    verify.set_defaults(handler=run_verify)


def read_lines(stream: IO[bytes]) -> Iterator[bytes]:
    """Lines as bytes without their line ending; a final line without ``\\n`` still counts."""
    for line in stream:
        if line.endswith(b"\n"):
            line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
        yield line


def dead_letter_line(rejection: Rejection) -> dict[str, Any]:
    """What ``pipe`` prints for a rejected line."""
    return {"dead_letter": dict(rejection)}


def run_pipe(args: argparse.Namespace) -> int:
    """The ``pipe`` command."""
    if args.source == "lookup" and args.emit == "lookup":
        raise ConfigurationError("--from lookup reads LookupResults; it can only --emit projection")
    settings = get_settings()
    out = sys.stdout.buffer
    for line in read_lines(sys.stdin.buffer):
        if args.source == "lookup":
            result = process_lookup(line, settings)
            if result.projection is not None:
                out.write(result.projection.canonical + b"\n")
            elif result.rejection is not None:
                out.write(json.dumps_line(dead_letter_line(result.rejection)))
            else:  # a FAILED LookupResult: its dead letter was written upstream; say why here too
                out.write(json.dumps_line(dead_letter_line(_failed_upstream(result.event))))
            continue
        outcome = process_raw_hits(line, settings)
        if outcome.rejection is not None or outcome.lookup is None:
            out.write(json.dumps_line(dead_letter_line(outcome.rejection or _missing())))
        elif args.emit == "lookup":
            shown = {k: v for k, v in outcome.lookup.items() if k not in _OFFLINE_LOOKUP_OMITS}
            out.write(json.dumps_line(shown))
        else:
            projected = process_lookup(json.dumps(outcome.lookup), settings)
            if projected.projection is not None:
                out.write(projected.projection.canonical + b"\n")
            else:
                out.write(json.dumps_line(dead_letter_line(projected.rejection or _missing())))
    out.flush()
    return 0


def _failed_upstream(event: Any) -> Rejection:
    reason = event.get("failure_reason") if isinstance(event, dict) else None
    run_id = event.get("run_id") if isinstance(event, dict) else None
    tool_call_id = event.get("tool_call_id") if isinstance(event, dict) else None
    return rejection(
        reason or DeadLetterReason.INTERNAL_ERROR, "the LookupResult is FAILED upstream", run_id, tool_call_id
    )


def _missing() -> Rejection:
    return rejection(DeadLetterReason.INTERNAL_ERROR, "no result")


def load_ledger(path: str) -> InMemoryLedger:
    """Ledger entries from a JSON-lines file; the first line for a key wins.

    A line that is not an entry (not JSON, not an object with string ``run_id`` and ``tool_call_id``)
    is skipped with a warning naming ``file:line``: the drafts are still judged, and a citation of
    the key it meant to hold finds nothing.

    Raises:
        ConfigurationError: the file cannot be read.
    """
    ledger = InMemoryLedger()
    try:
        with open(path, "rb") as handle:
            for number, line in enumerate(read_lines(handle), start=1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError as exc:
                    print(f"{path}:{number}: skipped, not JSON ({exc})", file=sys.stderr)
                    continue
                if not isinstance(entry, dict) or not all(
                    isinstance(entry.get(k), str) for k in ("run_id", "tool_call_id")
                ):
                    print(
                        f"{path}:{number}: skipped, not an object with string run_id and tool_call_id",
                        file=sys.stderr,
                    )
                    continue
                ledger.put(entry)
    except OSError as exc:
        raise ConfigurationError(f"cannot read the ledger file {path!r}: {exc.strerror}") from exc
    return ledger


def run_verify(args: argparse.Namespace) -> int:
    """The ``verify`` command."""
    if args.redis:
        return asyncio.run(_verify_redis())
    ledger = load_ledger(args.ledger)
    guard = EvidenceGuard(get_settings().guard)
    out = sys.stdout.buffer
    for line in read_lines(sys.stdin.buffer):
        out.write(json.dumps_line(guard.check(line, ledger)))
    out.flush()
    return 0


async def _verify_redis() -> int:
    """``verify --redis``: each draft's citations read from the live ledger (two round trips at most)."""
    from streams.ledger_store import RedisLedgerStore

    settings = get_settings()
    guard = EvidenceGuard(settings.guard)
    store = RedisLedgerStore.from_settings(settings)
    out = sys.stdout.buffer
    try:
        for line in read_lines(sys.stdin.buffer):
            plan = guard.plan(line)
            run_id = plan.run_id or ""
            lookups = await store.read_many([(run_id, t) for t in plan.cited]) if plan.cited else {}
            verdict = guard.judge(plan, {t: lookups[(run_id, t)] for t in plan.cited})
            out.write(json.dumps_line(verdict))
    finally:
        await store.close()
    out.flush()
    return 0
