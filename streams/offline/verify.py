"""``verify``: the guard on drafts, one verdict line per draft line, against a ledger file or any store.

A draft is planned, its cited entries read and judged by :func:`~streams.pipeline.resolve_reads`, the
one sequence the guard agent runs (without the report claims: nothing is published offline).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO

from models.vocab import Station
from streams import codec
from streams.errors import ConfigurationError, RedisRefused, RedisUnavailable
from streams.ledger.memory import MemoryLedgerStore
from streams.ledger.store import LedgerStore
from streams.messages import Record
from streams.offline.lines import dead_letter_line, read_lines, rejection_of
from streams.pipeline import PendingRead, ReadMany, StationRules, internal_error, resolve_reads, run_station


def load_ledger(path: str, warn: Callable[[str], None]) -> MemoryLedgerStore:
    """Ledger entries from a JSON-lines file; the first line for a key wins.

    A line that is not an entry (not JSON, not an object with string ``run_id`` and ``tool_call_id``)
    is skipped, and ``warn`` is told so naming ``file:line``: the drafts are still judged, and a citation
    of the key it meant to hold finds nothing.

    Raises:
        ConfigurationError: the file cannot be read.
    """
    ledger = MemoryLedgerStore()
    try:
        with open(path, "rb") as handle:
            for number, line in enumerate(read_lines(handle), start=1):
                if not line.strip():
                    continue
                try:
                    entry = codec.loads(line)
                except codec.JSONDecodeError as exc:
                    warn(f"{path}:{number}: skipped, not JSON ({exc})")
                    continue
                if not isinstance(entry, dict) or not all(
                    isinstance(entry.get(k), str) for k in ("run_id", "tool_call_id")
                ):
                    warn(f"{path}:{number}: skipped, not an object with string run_id and tool_call_id")
                    continue
                ledger.load([entry])
    except OSError as exc:
        raise ConfigurationError(f"cannot read the ledger file {path!r}: {exc.strerror}") from exc
    return ledger


async def verdict_line(line: bytes, rules: StationRules, read: ReadMany) -> bytes:
    """The one verdict line of ``verify`` for one draft line: plan, read, judge (``resolve_reads``)."""
    record = Record.offline(line)
    step = run_station(Station.GUARD, record, rules)
    if not isinstance(step, PendingRead):
        return dead_letter_line(rejection_of(step))
    (outcome,) = await resolve_reads([(step, record)], read)
    if outcome.rejection is not None:
        return dead_letter_line(outcome.rejection)
    return codec.dumps_line(outcome.detail)


async def verify_lines(
    lines: Iterator[bytes], rules: StationRules, store: LedgerStore, out: IO[bytes]
) -> None:
    """One verdict line per draft line; a store that cannot answer ends the command (nothing is guessed)."""
    for line in lines:
        try:
            text = await verdict_line(line, rules, store.read_many)
        except (RedisUnavailable, RedisRefused):
            raise
        except Exception as exc:  # noqa: BLE001 - per-line isolation: the rest of the input goes on
            text = dead_letter_line(internal_error(exc))
        out.write(text)
    out.flush()
