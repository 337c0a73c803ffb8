"""The binary stdin and stdout of the JSON-lines commands (``pipe``, ``verify``, ``publish``), or a clear
error when either is closed."""

from __future__ import annotations

import sys
from typing import IO

from streams.errors import ConfigurationError


def stdin_bytes(usage: str) -> IO[bytes]:
    """The binary stdin; ``usage`` shows how to give it (``evidence-chain pipe < FILE``).

    Raises:
        ConfigurationError: stdin is closed (``<&-``), so there is no input to read.
    """
    if sys.stdin is None:
        raise ConfigurationError(f"no input: stdin is closed; give the JSON lines on stdin: {usage}")
    return sys.stdin.buffer


def stdout_bytes() -> IO[bytes]:
    """The binary stdout.

    Raises:
        ConfigurationError: stdout is closed (``>&-``), so there is nowhere to write the output.
    """
    if sys.stdout is None:
        raise ConfigurationError("no output: stdout is closed; redirect it to a file or /dev/null")
    return sys.stdout.buffer
