"""``demo``: the main job end to end on the bundled sample, shown to a person (``make run``).

Starts a worker in a subprocess on a fresh topic prefix and ledger namespace, publishes the sample
raw-hits records, waits until the ledger holds them (the agent is shown its tool result from the
ledger before it writes a draft), publishes the sample drafts, and prints the ledger, the verdicts,
the reports the guard published (one per PASS or FALLBACK, SPEC 4.3) and the dead letters as tables.
Then, on the same worker, the agent loop of ``examples/agent_loop.py`` (lookups, drafts, repair
prompts, a fallback, a claim the evidence does not support, each run's report read back from
``reports``), run as that example is run (``python -m examples.agent_loop``) so the demo shows
exactly what a reader of the example gets; ``--mode`` picks one of the two.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text
from typing_extensions import TypedDict

from models.events import DeadLetter
from models.ids import is_valid_id
from models.ledger import LedgerEntry
from models.verdict import ReportEvent, Verdict
from models.vocab import Station, Topic
from streams import codec
from streams.cli.audit import report_summary
from streams.cli.display import cell, console, printable, redact_url
from streams.cli.stream import publish_lines
from streams.codec import JSONObject
from streams.errors import ConfigurationError, EvidenceChainError
from streams.hashing import sha256_hex
from streams.kafka.admin import ensure_topics
from streams.kafka.ranges import read_topic
from streams.messages import Record
from streams.offline.lines import read_lines
from streams.pipeline import Outcome, StationRules, run_station
from streams.settings import Settings, get_settings

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "deploy" / "sample"
AGENT_LOOP = ROOT / "examples" / "agent_loop.py"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``demo``."""
    demo = sub.add_parser("demo", help="run the workers on the bundled sample and show the outcome")
    demo.add_argument("--raw-hits", default=str(SAMPLE / "raw-hits.jsonl"), metavar="FILE")
    demo.add_argument("--drafts", default=str(SAMPLE / "drafts.jsonl"), metavar="FILE")
    demo.add_argument("--prefix", default=None, help="topic prefix (default: a fresh demo-<time>-)")
    demo.add_argument("--wait-seconds", type=float, default=120.0)
    demo.add_argument(
        "--chain-env",
        metavar="FILE",
        help="run the chain (postprocess, project, ledger) and the guard as two workers, adding FILE's "
        "NAME=VALUE lines to the chain worker's environment (make run: its signing key, its Redis user)",
    )
    demo.add_argument("--guard-env", metavar="FILE", help="the same for the guard worker (with --chain-env)")
    demo.add_argument(
        "--mode",
        choices=("all", "sample", "loop", "mcp"),
        default="all",
        help="the sample's tables, the agent loop (examples/agent_loop.py), the loop through the MCP "
        "server (examples/mcp_loop.py), or all three (default)",
    )
    demo.set_defaults(handler=run_demo)


def _lines(path: str) -> list[bytes]:
    try:
        with open(path, "rb") as handle:
            return [line for line in read_lines(handle) if line.strip()]
    except OSError as exc:
        raise ConfigurationError(f"cannot read {path!r}: {exc.strerror}") from exc


def _env_file(path: str | None) -> dict[str, str]:
    """``NAME=VALUE`` lines (``#`` comments) of a worker's extra environment; values never shown.

    Raises:
        ConfigurationError: the file cannot be read or a line is not ``NAME=VALUE``.
    """
    if path is None:
        return {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigurationError(f"cannot read {path!r}: {exc.strerror}") from exc
    out: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, equals, value = line.partition("=")
        if not equals or not name.strip().isidentifier():
            raise ConfigurationError(f"{path}:{number}: not a NAME=VALUE line")
        out[name.strip()] = value
    return out


def _demo_env(settings: Settings) -> dict[str, str]:
    """What puts a process on this demo's topics and ledger namespace."""
    return {"EC_TOPIC_PREFIX": settings.topic_prefix, "EC_APP_ID": settings.app_id, "EC_NS": settings.ns}


def _start_worker(
    settings: Settings, log_path: Path, extra: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    env = {**os.environ, **(extra or {}), **_demo_env(settings)}
    cli = Path(sys.executable).with_name("evidence-chain")
    with log_path.open("wb") as log:
        return subprocess.Popen(  # noqa: S603 - our own console script
            [str(cli), "worker", "--loglevel", "warning"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


class DemoOutcome(TypedDict):
    """What the demo's records became, as the topics carried them."""

    ledger: list[LedgerEntry]
    verdicts: list[Verdict]
    reports: list[ReportEvent]
    dead_letters: list[DeadLetter]


async def _demo(
    settings: Settings, raw: list[bytes], drafts: list[bytes], wait_seconds: float, console: Console
) -> DemoOutcome:
    rules = StationRules.without_keys(settings)
    expected_ledger = sum(1 for line in raw if _reaches_ledger(line, rules))
    await _publish(settings, Topic.RAW_HITS, raw, "raw-hits records", console)
    ledger = await _read(settings, Topic.LEDGER, expected_ledger, wait_seconds)
    if len(ledger) < expected_ledger:
        raise EvidenceChainError(
            f"the ledger holds {len(ledger)} of {expected_ledger} entries after {wait_seconds}s"
        )
    await _publish(settings, Topic.DIAGNOSIS_DRAFTS, drafts, "drafts", console)
    verdicts = await _read(settings, Topic.VERDICTS, len(drafts), wait_seconds)
    publishing = sum(1 for v in verdicts if codec.loads(v).get("verdict") in ("PASS", "FALLBACK"))
    reports = await _read(settings, Topic.REPORTS, publishing, wait_seconds)
    letters = await read_topic(settings, settings.topic(Topic.DEAD_LETTERS), until=lambda v: True, settle=2.0)
    order = {sha256_hex(draft): index for index, draft in enumerate(drafts)}
    parsed = sorted(
        (codec.loads(v) for v in verdicts), key=lambda v: order.get(v["draft_sha256"], len(order))
    )
    return {
        "ledger": [codec.loads(v) for v in ledger],
        "verdicts": parsed,
        "reports": sorted(
            (codec.loads(v) for v in reports), key=lambda r: order.get(r["draft_sha256"], len(order))
        ),
        "dead_letters": [codec.loads(v) for v in letters],
    }


async def _publish(settings: Settings, topic: Topic, lines: list[bytes], what: str, console: Console) -> None:
    """Say what is published where, then publish it."""
    where = (settings.topic(topic), "bold")
    console.print(Text.assemble("publishing ", str(len(lines)), f" {what} to ", where))
    await publish_lines(settings, settings.topic(topic), iter(lines), len(lines))


async def _read(settings: Settings, topic: Topic, count: int, wait_seconds: float) -> list[bytes]:
    """The topic's values once it holds ``count`` of them, or what it holds after ``wait_seconds``."""
    return await read_topic(
        settings, settings.topic(topic), until=lambda v: len(v) >= count, wait_seconds=wait_seconds
    )


def _reaches_ledger(line: bytes, rules: StationRules) -> bool:
    """Whether the postprocess station sends this line on toward the ledger (it has valid ids)."""
    step = run_station(Station.POSTPROCESS, Record.offline(line), rules)
    return isinstance(step, Outcome) and bool(step.outputs)


def show(outcome: DemoOutcome, settings: Settings, console: Console) -> None:
    """The outcome as four tables a person can read."""
    where = redact_url(settings.redis_url.get_secret_value())
    ledger = Table(
        title=Text(f"Ledger (Redis {where}, keys {settings.ns}:ledger:{{<tool_call_id>}}:<run_id>)")
    )
    for column in ("run", "tool call", "status", "evidence", "sha256", "failure"):
        ledger.add_column(column)
    for entry in outcome["ledger"]:
        ledger.add_row(
            cell(entry["run_id"]),
            cell(entry["tool_call_id"]),
            cell(entry["status"]),
            cell(entry["evidence_status"]),
            cell((entry["projection_sha256"] or "-")[:12]),
            cell(entry["failure_reason"], empty=""),
        )
    verdicts = Table(title=Text(f"Verdicts ({settings.topic(Topic.VERDICTS)})"))
    for column in ("draft", "run", "attempt", "verdict", "violations"):
        verdicts.add_column(column)
    for verdict in outcome["verdicts"]:
        style = {"PASS": "green", "REJECT": "yellow", "FALLBACK": "red"}.get(str(verdict["verdict"]), "")
        codes = (
            "\n".join(printable(f"{v['code']} @ {v['path'] or '<draft>'}") for v in verdict["violations"])
            or "-"
        )
        verdicts.add_row(
            cell(verdict["draft_id"], empty="?"),
            cell(verdict["run_id"], empty="?"),
            cell(verdict["attempt"]),
            cell(verdict["verdict"], style),
            Text(codes),
        )
    reports = Table(title=Text(f"Published: what left the chain ({settings.topic(Topic.REPORTS)})"))
    for column in ("draft", "run", "verdict", "report", "signed by"):
        reports.add_column(column)
    for event in outcome["reports"]:
        style = {"PASS": "green", "FALLBACK": "red"}.get(str(event["verdict"]), "")
        reports.add_row(
            cell(event["draft_id"], empty="?"),
            cell(event["run_id"], empty="?"),
            cell(event["verdict"], style),
            cell(report_summary(event)),
            cell(signature["key_id"] if (signature := event.get("signature")) else None, empty="unsigned"),
        )
    letters = Table(title=Text(f"Dead letters ({settings.topic(Topic.DEAD_LETTERS)})"))
    for column in ("reason", "run / tool call", "station", "source", "error"):
        letters.add_column(column)
    for letter in outcome["dead_letters"]:
        source = letter["source"]
        topic = (source["topic"] or "").removeprefix(settings.topic_prefix)  # a worker's letter names it
        ids = f"{letter['run_id']} / {letter['tool_call_id']}" if letter["run_id"] else "-"
        letters.add_row(
            cell(letter["reason"]),
            cell(ids),
            cell(letter["station"]),
            cell(f"{topic}[{source['partition']}]@{source['offset']}"),
            cell(letter["error"][:80]),
        )
    console.print(ledger, verdicts, reports, letters)


def _agent_loop(
    settings: Settings, *, width: int | None, timeout_ms: int, module: str = "examples.agent_loop"
) -> None:
    """``python -m examples.agent_loop`` against this demo's worker: its settings in the environment.

    Raises:
        EvidenceChainError: the example is missing (not a checkout) or did not finish.
    """
    if not AGENT_LOOP.is_file():
        raise ConfigurationError(f"{AGENT_LOOP} is missing: the agent loop runs from a checkout of the repo")
    env = {**os.environ, **_demo_env(settings)}
    argv = [sys.executable, "-m", module, "--timeout-ms", str(timeout_ms)]
    argv += ["--width", str(width)] if width else []
    sys.stdout.flush()
    done = subprocess.run(argv, env=env, cwd=ROOT, check=False)  # noqa: S603 - our own example
    if done.returncode != 0:
        raise EvidenceChainError(f"the agent loop ({module}) exited with {done.returncode}")


def run_demo(args: argparse.Namespace) -> int:
    """The ``demo`` command."""
    base = get_settings()
    prefix = args.prefix or f"demo-{time.strftime('%Y%m%d-%H%M%S')}-"
    settings = base.model_copy(
        update={"topic_prefix": prefix, "app_id": f"{prefix}evidence-chain", "ns": prefix.rstrip("-")}
    )
    raw, drafts = _lines(args.raw_hits), _lines(args.drafts)
    # A terminal decides its own width; a log or pipe gets one wide enough for the tables.
    width = None if sys.stdout.isatty() else 140
    out = console(width=width)
    asyncio.run(ensure_topics(settings))
    logs = Path(".local") if Path(".local").is_dir() else Path(tempfile.gettempdir())
    if args.chain_env or args.guard_env:
        # As deployed (deploy/k8s, docker-compose.yml): each worker holds only its own key and Redis user.
        groups = {
            "chain": ("postprocess,project,ledger", _env_file(args.chain_env)),
            "guard": ("guard", _env_file(args.guard_env)),
        }
        workers = []
        for name, (agents, extra) in groups.items():
            log_path = logs / f"{prefix}{name}.log"
            out.print(f"starting the {name} worker (agents: {agents}; log: {log_path})")
            workers.append(_start_worker(settings, log_path, {**extra, "EC_AGENTS": agents}))
    else:
        log_path = logs / f"{prefix}worker.log"
        out.print(f"starting the worker (agents: all; log: {log_path})")
        workers = [_start_worker(settings, log_path)]
    try:
        if args.mode in ("all", "sample"):
            outcome = asyncio.run(_demo(settings, raw, drafts, args.wait_seconds, out))
            show(outcome, settings, out)
        if args.mode in ("all", "loop"):
            out.print()
            _agent_loop(settings, width=width, timeout_ms=int(args.wait_seconds * 1000))
        if args.mode in ("all", "mcp"):
            out.print()
            timeout_ms = int(args.wait_seconds * 1000)
            _agent_loop(settings, width=width, timeout_ms=timeout_ms, module="examples.mcp_loop")
    finally:
        for worker in workers:
            _stop(worker)
    run_id, commands = _again(settings, raw, logs)
    out.print(
        Text.assemble(
            "\nTopics are kept under the prefix ",
            (prefix, "bold"),
            f"; see {run_id} again (the audit sink reads the topics into a file, inspect shows the run):",
        )
    )
    out.file.flush()
    print(commands, flush=True)  # not through rich: a line it wraps would not paste
    return 0


def _again(settings: Settings, raw: list[bytes], logs: Path) -> tuple[str, str]:
    """The first sample run, and the commands a person can paste to see its whole trail again: the
    audit sink drains this demo's topics into a SQLite file of its own, then ``inspect`` reads it."""
    runs = [doc.get("run_id") for doc in map(_json_object, raw) if doc is not None]
    run_id = next((run for run in runs if isinstance(run, str) and is_valid_id(run)), "RUN_ID")
    cli = Path(sys.executable).with_name("evidence-chain")
    if cli.is_relative_to(Path.cwd()):
        cli = cli.relative_to(Path.cwd())
    env = {
        **_demo_env(settings),
        "EC_AUDIT_DB": str(logs / f"{settings.topic_prefix}audit.db"),
        "EC_AUDIT_SINK_PORT": "0",
    }
    exports = " ".join(f"{name}={shlex.quote(value)}" for name, value in env.items())
    command = shlex.quote(str(cli))
    sink, inspect = (
        f"{command} audit-sink --once --loglevel warning",
        f"{command} inspect {shlex.quote(run_id)}",
    )
    return run_id, f"export {exports}\n{sink} && {inspect}"


def _json_object(line: bytes) -> JSONObject | None:
    try:
        doc = codec.loads(line)
    except codec.JSONDecodeError:
        return None
    return doc if isinstance(doc, dict) else None
