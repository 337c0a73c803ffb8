"""``pipe`` and ``verify``: the stations without Kafka or Redis, JSON lines in and out.

Input is read as bytes, one record per line (a trailing ``\\r\\n`` or ``\\n`` is not part of it);
every input line gives exactly one output line, whatever it holds, and the exit code is 0 when the
input was read to the end. These commands call the very station functions the agents call
(``streams.pipeline``); an offline line has no coordinates, so its outputs carry no event id.

``pipe`` holds at most :func:`pipe_keep_bytes` of one line (twice ``max_message_bytes``): a line up
to that length goes through the stations whole, exactly as the agents see a record; of a longer one
only the first bytes are kept, to find its ids in, and it is ``OVERSIZED`` without being parsed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any, TypeVar

from models.events import Rejection
from models.vocab import DeadLetterReason, Station
from streams import codec
from streams.cli.lines import Line, read_bounded_lines, stdin_bytes, stdout_bytes, top_level_strings
from streams.envelope import rejection
from streams.errors import ConfigurationError, RedisRefused, RedisUnavailable
from streams.ledger.memory import MemoryLedgerStore
from streams.ledger.store import LedgerStore
from streams.messages import Record
from streams.pipeline import (
    Outcome,
    PendingRead,
    Projected,
    ReadMany,
    StationRules,
    chain,
    internal_error,
    resolve_reads,
    run_station,
)
from streams.settings import Settings, get_settings
from streams.trust.keys import signing_status

# Offline, a rejected line prints a dead letter instead of a FAILED LookupResult, so every
# LookupResult printed is status OK; the two envelope fields carry nothing and are left out.
_OFFLINE_LOOKUP_OMITS = ("status", "failure_reason")

_MIN_KEEP_BYTES = 64 * 1024
"""``pipe`` keeps lines up to this long whole even under a smaller ``max_message_bytes``."""

_ID_NAMES = ("run_id", "tool_call_id", "toolCallId")

T = TypeVar("T")


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


def dead_letter_line(refused: Rejection) -> bytes:
    """What ``pipe`` prints for a rejected line."""
    return codec.dumps_line({"dead_letter": dict(refused)})


def one_line_each(lines: Iterator[T], render: Callable[[T], bytes], out: IO[bytes]) -> None:
    """Exactly one output line per input line: anything unexpected is that line's INTERNAL_ERROR."""
    for line in lines:
        try:
            text = render(line)
        except Exception as exc:  # noqa: BLE001 - per-line isolation: the rest of the input goes on
            text = dead_letter_line(internal_error(exc))
        out.write(text)
    out.flush()


def pipe_keep_bytes(settings: Settings, source: str = "raw-hits") -> int:
    """The most ``pipe`` keeps of one line: twice ``max_message_bytes`` (at least 64 KiB).

    A LookupResult (``--from lookup``) is a ``postprocessed`` event, which may be as large as the
    topics allow (``topic_max_message_bytes``), so that much of it is kept whole too.
    """
    keep = max(2 * settings.input.max_message_bytes, _MIN_KEEP_BYTES)
    return max(keep, settings.topic_max_message_bytes) if source == "lookup" else keep


def pipe_bounded_line(
    line: Line, settings: Settings, rules: StationRules, *, source: str, emit: str
) -> bytes:
    """The one output line of ``pipe`` for one input line that may have been cut (``rules``: the
    stations' rules, built once for the whole input; ``settings``: the limits a cut line is told of)."""
    if not line.cut:
        return pipe_line(line.value, rules, source=source, emit=emit)
    return dead_letter_line(_oversized(line, settings, source))


def _oversized(line: Line, settings: Settings, source: str) -> Rejection:
    """The rejection of a line too long to keep, its ids read from its first bytes (not parsed whole)."""
    found = top_level_strings(line.value, _ID_NAMES) or {}
    run_id, tool_call_id = found.get("run_id"), found.get("tool_call_id")
    if source == "lookup":
        tool_call_id = tool_call_id or found.get("toolCallId")  # the projector's alias
        error = (
            f"LookupResult is {line.length} bytes, over the {pipe_keep_bytes(settings, source)} bytes pipe "
            "keeps of one line (the topics' max.message.bytes); raise EC_TOPIC_MAX_MESSAGE_BYTES"
        )
    else:  # the words of the postprocess station's own OVERSIZED rejection
        error = (
            f"value is {line.length} bytes, over max_message_bytes={settings.input.max_message_bytes}; "
            "split the response or raise EC_INPUT__MAX_MESSAGE_BYTES"
        )
    return rejection(DeadLetterReason.OVERSIZED, error, run_id, tool_call_id)


def pipe_line(line: bytes, rules: StationRules, *, source: str, emit: str) -> bytes:
    """The one output line of ``pipe`` for one whole input line.

    The stations run as :func:`~streams.pipeline.chain` runs them for the agents, except that the
    chain stops at the first rejection: offline, that rejection is the line printed.
    """
    if source == "lookup":
        stations: tuple[Station, ...] = (Station.PROJECT,)
    elif emit == "lookup":
        stations = (Station.POSTPROCESS,)
    else:
        stations = (Station.POSTPROCESS, Station.PROJECT)
    step = chain(Record.offline(line), rules, stations, through_rejections=False)
    if isinstance(step, Outcome) and step.station == Station.PROJECT:
        return _projection_line(step)
    if emit == "lookup" and isinstance(step, Outcome) and step.rejection is None and step.outputs:
        shown = {k: v for k, v in step.detail.items() if k not in _OFFLINE_LOOKUP_OMITS}
        return codec.dumps_line(shown)
    return dead_letter_line(_rejection_of(step))


def _projection_line(step: Any) -> bytes:
    done = step.detail if isinstance(step, Outcome) else None
    if isinstance(done, Projected) and done.projection is not None:
        return done.projection.canonical + b"\n"
    if isinstance(done, Projected) and step.rejection is None and done.event is not None:
        # a FAILED LookupResult: its dead letter was written upstream; say why here too
        event = done.event
        return dead_letter_line(
            rejection(
                event.get("failure_reason") or DeadLetterReason.INTERNAL_ERROR,
                "the LookupResult is FAILED upstream",
                event.get("run_id"),
                event.get("tool_call_id"),
            )
        )
    return dead_letter_line(_rejection_of(step))


def _rejection_of(step: Any) -> Rejection:
    if isinstance(step, Outcome) and step.rejection is not None:
        return step.rejection
    return rejection(DeadLetterReason.INTERNAL_ERROR, "no result")


def run_pipe(args: argparse.Namespace) -> int:
    """The ``pipe`` command."""
    if args.source == "lookup" and args.emit == "lookup":
        raise ConfigurationError("--from lookup reads LookupResults; it can only --emit projection")
    settings = get_settings()
    rules = StationRules.from_settings(settings)  # once: every line obeys the same rules
    one_line_each(
        read_bounded_lines(stdin_bytes("evidence-chain pipe < FILE"), pipe_keep_bytes(settings, args.source)),
        lambda line: pipe_bounded_line(line, settings, rules, source=args.source, emit=args.emit),
        stdout_bytes(),
    )
    return 0


def load_ledger(path: str) -> MemoryLedgerStore:
    """Ledger entries from a JSON-lines file; the first line for a key wins.

    A line that is not an entry (not JSON, not an object with string ``run_id`` and ``tool_call_id``)
    is skipped with a warning naming ``file:line``: the drafts are still judged, and a citation of
    the key it meant to hold finds nothing.

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
                ledger.load([entry])
    except OSError as exc:
        raise ConfigurationError(f"cannot read the ledger file {path!r}: {exc.strerror}") from exc
    return ledger


async def verdict_line(line: bytes, rules: StationRules, read: ReadMany) -> bytes:
    """The one verdict line of ``verify`` for one draft line: plan, read, judge (``resolve_reads``)."""
    record = Record.offline(line)
    step = run_station(Station.GUARD, record, rules)
    if not isinstance(step, PendingRead):
        return dead_letter_line(_rejection_of(step))
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


def run_verify(args: argparse.Namespace) -> int:
    """The ``verify`` command: drafts from stdin against a ledger file (``--ledger``) or the live Redis."""
    settings = get_settings()
    # unusable keys, or a signing key not trusted as a guard key (verify signs verdicts): exit 2 first
    signing_status(settings.signing_key_file, settings.trusted_keys_file, signs=("guard",))
    rules = StationRules.from_settings(settings)  # the keys read once for every draft
    source = f"--ledger {args.ledger}" if not args.redis else "--redis"
    drafts, out = stdin_bytes(f"evidence-chain verify {source} < DRAFTS"), stdout_bytes()
    if not args.redis:
        asyncio.run(verify_lines(read_lines(drafts), rules, load_ledger(args.ledger), out))
        return 0
    from streams.ledger.redis import RedisLedgerStore

    async def live() -> None:
        store = RedisLedgerStore.from_settings(settings)
        try:
            await verify_lines(read_lines(drafts), rules, store, out)
        finally:
            await store.close()

    asyncio.run(live())
    return 0
