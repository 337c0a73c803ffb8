"""The ``evidence-chain`` console script for the tests: where it is, an environment without the caller's
settings, and one preloaded interpreter that runs it many times.

Each start of the script spends one to two seconds importing pydantic, redis, rich and faust before
``main`` runs, and the CLI tests run it about a hundred times. ``Console`` starts one interpreter
(``python -m tests.console``) that imports what the script imports, then forks a child per command. The
child gets what the script would get — its own environment, working directory, stdin, stdout and stderr
files, ``sys.argv``, a session of its own — and leaves through the interpreter's own exit path
(``sys.exit(main())`` at the top level: an uncaught exception prints its traceback and exits 1, atexit
runs, stdout is flushed last). What a fork cannot show is the interpreter's own start: the tests of a
closed stdin or stdout, of a reader that goes away and of peak memory run the real script
(``tests/cli/test_closed_pipes.py``, ``tests/cli/test_pipe_memory.py``), and ``tests/cli/test_secrets.py``
runs a few of its cases both ways.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLI = str(Path(sys.executable).with_name("evidence-chain"))
"""The console script installed next to the interpreter that runs the tests (``pip install -e .``)."""

REPO = Path(__file__).resolve().parents[1]

# What the command handlers import when they run (the script imports them lazily): loaded once here.
PRELOAD = ("faust", "mode.loop", "aiokafka", "redis.asyncio", "psycopg", "aiohttp.web", "rich.console")


def clean_env(**settings: str) -> dict[str, str]:
    """This process's environment without any ``EC_*`` or ``OTEL_*`` setting, plus ``settings``: a
    command sees the SPEC's defaults and what the test sets, never the caller's own settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EC_", "OTEL_"))}
    env.update(settings)
    return env


@dataclass(frozen=True)
class Done:
    """What one run of the script left: its exit status (None: still running at its timeout, killed)."""

    args: tuple[str, ...]
    returncode: int | None
    stdout: bytes
    stderr: bytes

    @property
    def output(self) -> str:
        """stdout then stderr, as text."""
        return (self.stdout + self.stderr).decode(errors="replace")


@dataclass(frozen=True)
class Command:
    """One run of the script: its arguments and what it gets."""

    args: Sequence[str]
    env: Mapping[str, str]
    cwd: Path | None = None
    stdin: bytes = b""
    timeout: float = 45.0
    stop_on: tuple[str, int] | None = None
    """``(text, n)``: send SIGTERM once stdout + stderr hold ``text`` ``n`` times (or at the timeout),
    then wait for the script to stop (a service that would otherwise run for ever)."""


class Console:
    """One interpreter with the script's imports done; ``run`` forks a child per command.

    Children of one ``run`` call run at the same time, as separate processes would.
    """

    def __init__(self, cwd: Path | None = None) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="ec-console-"))
        self._server = subprocess.Popen(  # noqa: S603 - this module, run by the test interpreter
            [sys.executable, "-m", "tests.console"],
            cwd=REPO,
            env=clean_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        self._count = 0

    def run(self, *commands: Command) -> list[Done]:
        """Each command in its own forked child, all at once; their results in the given order."""
        assert self._server.stdin is not None and self._server.stdout is not None
        requests: list[dict[str, Any]] = []
        for command in commands:
            self._count += 1
            base = self._dir / str(self._count)
            stdin = base.with_suffix(".in")
            stdin.write_bytes(command.stdin)
            requests.append(
                {
                    "argv": [CLI, *command.args],
                    "env": dict(command.env),
                    "cwd": str(command.cwd or Path.cwd()),
                    "stdin": str(stdin),
                    "stdout": str(base.with_suffix(".out")),
                    "stderr": str(base.with_suffix(".err")),
                    "timeout": command.timeout,
                    "stop_on": command.stop_on,
                }
            )
        self._server.stdin.write(json.dumps(requests).encode() + b"\n")
        self._server.stdin.flush()
        reply = self._server.stdout.readline()
        if not reply:
            raise RuntimeError(f"the console server exited with {self._server.wait()}")
        codes = json.loads(reply)
        return [
            Done(tuple(c.args), code, Path(r["stdout"]).read_bytes(), Path(r["stderr"]).read_bytes())
            for c, r, code in zip(commands, requests, codes, strict=True)
        ]

    def close(self) -> None:
        if self._server.stdin is not None:
            self._server.stdin.close()
        try:
            self._server.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self._server.pid, signal.SIGKILL)
            self._server.wait(10)
        if self._server.stdout is not None:
            self._server.stdout.close()
        for path in self._dir.iterdir():
            path.unlink()
        self._dir.rmdir()


# --- the server: ``python -m tests.console`` -----------------------------------------------------------


def _count(paths: Sequence[str], text: bytes) -> int:
    total = 0
    for path in paths:
        with contextlib.suppress(OSError):
            total += Path(path).read_bytes().count(text)
    return total


def _wait(children: Sequence[tuple[int, dict[str, Any]]]) -> list[int | None]:
    """Each child's exit status as ``subprocess`` reports it (None: its timeout killed it)."""
    now = time.monotonic()
    deadlines = {pid: now + float(request["timeout"]) for pid, request in children}
    pidfds = {pid: os.pidfd_open(pid) for pid, _ in children}
    codes: dict[int, int | None] = {}
    terminated: set[int] = set()
    try:
        while len(codes) < len(children):
            ready, _, _ = select.select([fd for pid, fd in pidfds.items() if pid not in codes], [], [], 0.05)
            for pid, fd in pidfds.items():
                if fd in ready:
                    codes[pid] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
            for pid, request in children:
                if pid in codes:
                    continue
                due = time.monotonic() >= deadlines[pid]
                if request["stop_on"] is not None and pid not in terminated:
                    text, times = request["stop_on"]
                    if due or _count([request["stdout"], request["stderr"]], text.encode()) >= times:
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(pid, signal.SIGTERM)
                        terminated.add(pid)
                        deadlines[pid] = time.monotonic() + 30
                elif due:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    codes[pid] = None
    finally:
        for fd in pidfds.values():
            os.close(fd)
    return [codes[pid] for pid, _ in children]


def _enter(request: dict[str, Any]) -> None:
    """In the child: the process the console script would have been."""
    os.setsid()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, path, flags in (
        (0, request["stdin"], os.O_RDONLY),
        (1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        (2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    ):
        opened = os.open(path, flags, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    sys.argv = list(request["argv"])


def _serve() -> dict[str, Any]:
    """Fork a child per request; in the parent, answer each batch with the children's exit statuses.
    Returns only in a child, with its request."""
    from streams.cli import build_parser

    build_parser()  # imports every command's module
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    # What is loaded now is never garbage in a child: keep the collector off it, so a child's exit
    # does not walk (and copy, page by page) the whole preloaded heap (the gc.freeze documentation).
    gc.collect()
    gc.freeze()
    for line in sys.stdin.buffer:
        requests = json.loads(line)
        children = []
        for request in requests:
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                return dict(request)
            children.append((pid, request))
        sys.stdout.write(json.dumps(_wait(children)) + "\n")
        sys.stdout.flush()
    sys.exit(0)


if __name__ == "__main__":
    _enter(_serve())
    from streams.cli import main

    sys.exit(main())
