"""The pure core stays pure: no Faust, aiokafka or Redis in ``streams/stations`` or ``models`` (STYLE).

Imports are read with ``ast`` (every ``import`` anywhere in a module, including inside functions
and ``TYPE_CHECKING`` blocks), followed through every first-party module they reach, and checked
once more at run time in a fresh interpreter.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIRST_PARTY = ("models", "streams")
FORBIDDEN = ("faust", "aiokafka", "redis")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def module_path(name: str) -> Path | None:
    """The file of a first-party module or package, if it exists."""
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def modules_in(package: str) -> list[str]:
    return sorted(module_name(path) for path in (ROOT / package.replace(".", "/")).glob("*.py"))


@cache
def imports_of(name: str) -> frozenset[str]:
    """Absolute names of everything one module imports (``from a import b`` gives ``a`` and ``a.b``)."""
    path = module_path(name)
    assert path is not None, name
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = name if is_package else name.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{node.module}" if node.module else package
            else:
                base = node.module or ""
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return frozenset(found)


def is_first_party(name: str) -> bool:
    return name.split(".")[0] in FIRST_PARTY


def first_party_closure(start: str) -> set[str]:
    """Every first-party module that importing ``start`` runs, parent packages included."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            parent = ".".join(parts[:i])
            if parent not in seen and module_path(parent) is not None:
                seen.add(parent)
                todo.extend(n for n in imports_of(parent) if is_first_party(n))
    return seen


def top(name: str) -> str:
    return name.split(".")[0]


# The pure core: the rules, the contracts, and every module the agents, the CLI and replay share
# around them (the station functions, the envelope, the batch runner, the offset tracker).
CORE = [
    "streams.pipeline",
    "streams.envelope",
    "streams.messages",
    "streams.codec",
    "streams.hashing",
    "streams.errors",
    "streams.retry",
    "streams.worker.runner",
    "streams.worker.offsets",
    "streams.replay.compare",
    "streams.ledger.keys",
    "streams.ledger.memory",
    "streams.trust.messages",
    "streams.trust.keys",
    "streams.trust.receipt",
]
PURE = modules_in("streams.stations") + modules_in("models") + CORE


def test_the_pure_modules_are_found() -> None:
    assert "streams.stations.guard" in PURE
    assert "streams.stations.project" in PURE
    assert "models.projection" in PURE
    assert len(modules_in("streams.stations")) >= 7


@pytest.mark.parametrize("name", PURE)
def test_no_kafka_or_redis_anywhere_below(name: str) -> None:
    for reached in sorted(first_party_closure(name)):
        bad = sorted(n for n in imports_of(reached) if top(n) in FORBIDDEN)
        assert not bad, f"{name} reaches {reached}, which imports {bad}"


STATION_ALLOWED_FIRST_PARTY = (
    "models",
    "streams.codec",
    "streams.hashing",
    "streams.errors",
    "streams.stations",
    "streams.trust",  # a signature is a pure function of a message and a key (SPEC 3.7, 4.1)
)


def allowed_for_stations(name: str) -> bool:
    if top(name) in sys.stdlib_module_names:
        return True
    if name == "streams":  # ``from streams import codec`` names the package, then the module
        return True
    return any(name == prefix or name.startswith(f"{prefix}.") for prefix in STATION_ALLOWED_FIRST_PARTY)


@pytest.mark.parametrize("name", modules_in("streams.stations"))
def test_a_station_imports_only_models_codec_errors_stations_and_the_stdlib(name: str) -> None:
    imported = imports_of(name)
    bad = sorted(n for n in imported if not allowed_for_stations(n))
    assert not bad, f"{name} imports {bad}"
    assert not any(top(n) == "pydantic" for n in imported), "pydantic is for models/ only"


MODEL_THIRD_PARTY = (
    "pydantic",
    "typing_extensions",
)  # typing_extensions: TypedDict that pydantic reads on 3.11


@pytest.mark.parametrize("name", modules_in("models"))
def test_a_model_imports_only_pydantic_models_and_the_stdlib(name: str) -> None:
    bad = sorted(
        n
        for n in imports_of(name)
        if top(n) not in sys.stdlib_module_names and top(n) not in MODEL_THIRD_PARTY and top(n) != "models"
    )
    assert not bad, f"{name} imports {bad}"


def test_the_import_reader_sees_what_it_must() -> None:
    # The checks above are only as good as the reader: it must resolve relative and nested imports.
    assert "streams.stations.ledger_view.LedgerLookup" in imports_of("streams.stations.guard")
    assert "orjson" in imports_of("streams.codec")
    assert "streams.codec" in first_party_closure("streams.stations.project")
    assert "streams" in first_party_closure("streams.stations.project")  # parent packages run too


def test_importing_the_pure_core_loads_no_kafka_or_redis() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {PURE!r}:\n"
        "    importlib.import_module(name)\n"
        f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r})\n"
        "print(','.join(loaded))\n"
    )
    done = subprocess.run(  # noqa: S603 - the test interpreter with a fixed script
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
