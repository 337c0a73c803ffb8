"""``worker``, ``publish`` and ``topics``: the commands that talk to Kafka."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Iterator
from typing import IO

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from models.vocab import Topic
from streams.cli.runtime import freeze_start_up, settings_with
from streams.cli.stdio import stdin_bytes
from streams.errors import ConfigurationError
from streams.kafka.admin import TOPIC_NAMES, ensure_topics, wait_for_topics
from streams.kafka.producer import produce_lines
from streams.offline.lines import read_lines
from streams.settings import Settings, get_settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``worker``, ``publish`` and ``topics``."""
    worker = sub.add_parser("worker", help="run the Faust worker with all agents (or --agents a subset)")
    worker.add_argument(
        "--agents",
        default=None,
        help="comma-separated subset of postprocess,project,ledger,guard (default: EC_AGENTS, else all)",
    )
    worker.add_argument("--loglevel", default="info", choices=("debug", "info", "warning", "error"))
    worker.set_defaults(handler=run_worker)

    publish = sub.add_parser("publish", help="produce JSON lines to a topic (key = run_id)")
    publish.add_argument("topic", help=f"one of {', '.join(TOPIC_NAMES)} (the prefix is added)")
    publish.add_argument("file", nargs="?", help="JSON-lines file (default: stdin)")
    publish.add_argument("--raw-topic", action="store_true", help="use TOPIC as given, without the prefix")
    publish.set_defaults(handler=run_publish)

    topics = sub.add_parser("topics", help="create the topics (same partition count for all)")
    topics.set_defaults(handler=run_topics)


def run_topics(args: argparse.Namespace) -> int:
    """The ``topics`` command."""
    settings = get_settings()
    created = asyncio.run(ensure_topics(settings))
    names = ", ".join(created) if created else "none (all exist)"
    print(f"topics with prefix {settings.topic_prefix!r}: created {names}")
    return 0


def run_worker(args: argparse.Namespace) -> int:
    """The ``worker`` command: wait for Kafka and create the topics, then run the Faust worker."""
    settings = settings_with(agents=args.agents or None)
    if settings.event_loop == "uvloop":  # before any loop exists, Faust's consumer thread's included
        import mode.loop

        mode.loop.use("uvloop")
    asyncio.run(wait_for_topics(settings))
    from faust import Worker

    from streams.observe.logs import logging_config
    from streams.worker.app import create_app

    worker = Worker(
        create_app(settings, topics_ready=True),
        loglevel=args.loglevel.upper(),
        logging_config=logging_config(settings.log_format, args.loglevel),
        quiet=settings.log_format == "json",  # no start-up banner between the JSON lines
    )
    # Faust's start-up spinner, at --loglevel warning or error, sets the root logger to DEBUG so it
    # can spin on every record: aiokafka then builds a debug record per fetch and send, a tenth of
    # the worker's CPU at 100 records/s. Nobody watches a spinner in a log.
    worker.spinner = None
    freeze_start_up()
    worker.execute_from_commandline()  # exits the process when the worker stops
    return 0  # pragma: no cover


async def publish_lines(
    settings: Settings, topic: str, lines: Iterator[bytes], total: int | None = None
) -> int:
    """:func:`streams.kafka.producer.produce_lines` under a progress bar on stderr (of ``total`` lines, when
    known); returns the count.

    Raises:
        KafkaUnavailable: the broker cannot be reached or did not acknowledge.
    """
    columns = (
        TextColumn("publish {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, disable=not sys.stderr.isatty(), transient=True) as progress:
        task = progress.add_task(topic, total=total)
        return await produce_lines(settings, topic, lines, on_sent=lambda: progress.advance(task))


def run_publish(args: argparse.Namespace) -> int:
    """The ``publish`` command."""
    settings = get_settings()
    if not args.raw_topic and args.topic not in TOPIC_NAMES:
        raise ConfigurationError(
            f"unknown topic {args.topic!r}; use one of {', '.join(TOPIC_NAMES)} or --raw-topic"
        )
    topic = args.topic if args.raw_topic else settings.topic(Topic(args.topic))
    handle: IO[bytes]
    if args.file:  # the input first: a missing file or a closed stdin is said before topics are created
        try:
            handle = open(args.file, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise ConfigurationError(f"cannot read {args.file!r}: {exc.strerror}") from exc
        total = sum(1 for line in handle if line.strip())
        handle.seek(0)
    else:
        handle, total = stdin_bytes(f"evidence-chain publish {args.topic} < FILE, or name the FILE"), None
    try:
        asyncio.run(ensure_topics(settings))
        count = asyncio.run(publish_lines(settings, topic, read_lines(handle), total))
    finally:
        if args.file:
            handle.close()
    print(f"published {count} records to {topic}", file=sys.stderr)
    return 0
