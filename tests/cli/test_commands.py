"""The console script registers every command module it has, by explicit import (no list of names)."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

import pytest

import streams.cli
from streams.cli import build_parser

Register = Callable[[Any], None]


def test_building_the_parser_calls_every_command_modules_register(monkeypatch: pytest.MonkeyPatch) -> None:
    called: list[str] = []

    def recording(name: str, register: Register) -> Register:
        def record(sub: Any) -> None:
            called.append(name)
            register(sub)

        return record

    modules = []
    for info in pkgutil.iter_modules(streams.cli.__path__, "streams.cli."):
        module = importlib.import_module(info.name)
        register = getattr(module, "register", None)
        if callable(register):
            modules.append(info.name)
            monkeypatch.setattr(module, "register", recording(info.name, register))
    assert len(modules) >= 12  # offline, stream, demo, ledger, replay, audit, serve, gateway, schemas, ...

    parser = build_parser()

    assert sorted(called) == sorted(modules), "a command module that build_parser never registers"
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {"pipe", "verify", "worker", "inspect", "serve", "mcp"} <= set(sub.choices)
