"""A reader that goes away, and input or output that is not there (issue 23, item 3).

``evidence-chain pipe ... | head -1`` once ended in a BrokenPipeError traceback and exit 1, and
``pipe <&-`` in an AttributeError traceback. Now a closed pipe ends the command quietly with 141
(128 + SIGPIPE, what a shell reports for a C tool the signal ended, so ``set -o pipefail`` sees the
same as with ``cat``), and a closed stdin or stdout is one line saying what to do, exit 2.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.console import CLI, clean_env
from tests.golden import GOLDEN


def many(path: Path, first_line_of: Path, copies: int) -> Path:
    line = first_line_of.read_bytes().split(b"\n", 1)[0] + b"\n"
    path.write_bytes(line * copies)
    return path


@pytest.mark.parametrize("command", ["pipe", "pipe --emit lookup", "verify"])
def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path: Path, command: str) -> None:
    if command == "verify":
        source = many(tmp_path / "drafts.jsonl", GOLDEN / "guard" / "drafts.jsonl", 20_000)
        args = ["verify", "--ledger", str(GOLDEN / "guard" / "ledger.jsonl")]
    else:
        source = many(tmp_path / "raw.jsonl", GOLDEN / "pipe" / "input.jsonl", 20_000)
        args = command.split()
    with (
        source.open("rb") as stdin,
        subprocess.Popen(  # noqa: S603 - our own console script
            [CLI, *args],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=clean_env(),
        ) as child,
    ):
        assert child.stdout is not None and child.stderr is not None
        first = child.stdout.readline()  # what `head -1` reads before it exits
        child.stdout.close()
        stderr = child.stderr.read()
        returncode = child.wait(60)
    assert first.startswith(b"{")
    assert stderr == b""
    assert returncode == 141


def test_head_in_a_shell_pipeline(tmp_path: Path) -> None:
    source = many(tmp_path / "raw.jsonl", GOLDEN / "pipe" / "input.jsonl", 20_000)
    done = subprocess.run(  # noqa: S603 - bash running our own console script
        ["bash", "-c", 'set -o pipefail; "$0" pipe < "$1" | head -1', CLI, str(source)],  # noqa: S607
        capture_output=True,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    assert done.stderr == b""
    assert done.stdout.count(b"\n") == 1
    assert done.returncode == 141


@pytest.mark.parametrize(
    ("args", "usage"),
    [
        (["pipe"], b"evidence-chain pipe < FILE"),
        (["pipe", "--from", "lookup"], b"evidence-chain pipe < FILE"),
        (["verify", "--ledger", "ledger.jsonl"], b"evidence-chain verify --ledger ledger.jsonl < DRAFTS"),
        (["publish", "raw-hits"], b"evidence-chain publish raw-hits < FILE, or name the FILE"),
    ],
)
def test_a_closed_stdin_is_one_line_saying_what_to_do(args: list[str], usage: bytes) -> None:
    done = subprocess.run(  # noqa: S603 - bash running our own console script
        ["bash", "-c", 'exec "$0" "$@" <&-', CLI, *args],  # noqa: S607
        capture_output=True,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == b""
    assert (
        done.stderr
        == b"evidence-chain %s: no input: stdin is closed; give the JSON lines on stdin: %s\n"
        % (
            args[0].encode(),
            usage,
        )
    )


def test_a_closed_stdout_is_one_line_saying_what_to_do() -> None:
    done = subprocess.run(  # noqa: S603 - bash running our own console script
        ["bash", "-c", 'exec "$0" pipe >&-', CLI],  # noqa: S607
        input=b"{}\n",
        capture_output=False,
        stderr=subprocess.PIPE,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert (
        done.stderr
        == b"evidence-chain pipe: no output: stdout is closed; redirect it to a file or /dev/null\n"
    )
