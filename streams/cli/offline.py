"""``pipe`` and ``verify``: the stations without Kafka or Redis, JSON lines in and out (streams/offline/).

Input is read as bytes, one record per line (a trailing ``\\r\\n`` or ``\\n`` is not part of it);
every input line gives exactly one output line, whatever it holds, and the exit code is 0 when the
input was read to the end. These commands call the very station functions the agents call
(``streams.pipeline``); an offline line has no coordinates, so its outputs carry no event id.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from streams.cli.stdio import stdin_bytes, stdout_bytes
from streams.errors import ConfigurationError
from streams.offline.lines import one_line_each, read_bounded_lines, read_lines
from streams.offline.pipe import pipe_bounded_line, pipe_keep_bytes
from streams.offline.verify import load_ledger, verify_lines
from streams.pipeline import StationRules
from streams.settings import get_settings
from streams.trust.keys import signing_status


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


def _warn(line: str) -> None:
    print(line, file=sys.stderr)


def run_verify(args: argparse.Namespace) -> int:
    """The ``verify`` command: drafts from stdin against a ledger file (``--ledger``) or the live Redis."""
    settings = get_settings()
    # unusable keys, or a signing key not trusted as a guard key (verify signs verdicts): exit 2 first
    signing_status(settings.signing_key_file, settings.trusted_keys_file, signs=("guard",))
    rules = StationRules.from_settings(settings)  # the keys read once for every draft
    source = f"--ledger {args.ledger}" if not args.redis else "--redis"
    drafts, out = stdin_bytes(f"evidence-chain verify {source} < DRAFTS"), stdout_bytes()
    if not args.redis:
        asyncio.run(verify_lines(read_lines(drafts), rules, load_ledger(args.ledger, _warn), out))
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
