"""The ``evidence-chain`` command line: one console script, one module per group of commands.

Exit codes: 0 done; 1 an error of the project's own; 2 a setting, file, argument or input that
cannot work (stdin closed included); 130 interrupted; 141 (128 + SIGPIPE, what a shell reports for a
tool the signal ended) when the reader of stdout went away (``... | head -1``): quiet, no message.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable, Sequence

from streams.errors import ConfigurationError, EvidenceChainError

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    """The parser with every subcommand registered by its module."""
    # Imported here, not at the top: importing one command's module (``streams.cli.serve``) then loads
    # only what it needs. Every command module imports without the optional extras; a command that
    # needs one (``audit-sink`` with a DSN, ``schemas --openapi``) says so in one line when it runs.
    from streams.cli import (
        audit,
        demo,
        gateway,
        ledger,
        mcp,
        offline,
        receipt,
        replay,
        schemas,
        serve,
        stream,
        trust,
    )

    parser = argparse.ArgumentParser(
        prog="evidence-chain",
        description="Govern RAG evidence for an LLM agent and check its diagnosis against what it was shown.",
    )
    parser.add_argument(
        "--version", action="version", version=_version(), help="print the versions (and the review's rules)"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands = (offline, stream, demo, ledger, replay, audit, serve, gateway, schemas, trust, receipt, mcp)
    for module in commands:  # in this order in --help
        module.register(sub)
    return parser


def _version() -> str:
    """``evidence-chain <package version> (review rules <n>)``: the rules the guard judges claims by."""
    from importlib.metadata import PackageNotFoundError, version

    from streams.stations.review import RULES_VERSION

    try:
        package = version("evidence-chain")
    except PackageNotFoundError:
        package = "unknown"
    return f"evidence-chain {package} (review rules {RULES_VERSION})"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except ConfigurationError as exc:
        print(f"evidence-chain {args.command}: {exc}", file=sys.stderr)
        return 2
    except EvidenceChainError as exc:
        print(f"evidence-chain {args.command}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"evidence-chain {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _discard_stdout()
        return 128 + signal.SIGPIPE


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush of it finds no closed pipe to complain of.

    Python ignores SIGPIPE and raises :class:`BrokenPipeError` instead; its documentation (the
    ``signal`` module's note on SIGPIPE) recommends this redirect rather than restoring the signal.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno() if sys.stdout is not None else 1)
    finally:
        os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
