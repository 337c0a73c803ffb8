"""``schemas``: write the JSON Schemas of the ten topic values, or check the committed ones for drift.

The schemas come from the models (:mod:`models.schemas`); the files are a function of them alone
(sorted keys, two-space indent, a trailing newline), so ``--check`` can compare bytes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from models.schemas import schema_file, topic_schema
from models.vocab import Topic
from streams.errors import ConfigurationError

DEFAULT_OUT = "docs/schemas"
SUFFIX = ".schema.json"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``schemas``."""
    schemas = sub.add_parser(
        "schemas",
        help="write the JSON Schemas (2020-12) of the ten topic values, or --check them",
        description="Writes DIR/<topic>.schema.json for every topic, generated from the models. "
        "With --check nothing is written: exit 1, naming the files that differ, when the directory "
        "does not hold exactly what would be written.",
    )
    schemas.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help=f"default {DEFAULT_OUT}")
    schemas.add_argument("--check", action="store_true", help="compare instead of writing (drift check)")
    schemas.add_argument(
        "--openapi",
        metavar="FILE",
        help="also write (or --check) FILE, the gateway's OpenAPI document bundled from FILE's "
        "*.source.yaml and the models: e.g. docs/openapi.yaml",
    )
    schemas.set_defaults(handler=run_schemas)


def render(schema: dict[str, object]) -> bytes:
    """A schema as its file's bytes."""
    # Not streams.codec: that one writes the canonical compact form; a committed document is
    # indented and key-sorted so its diffs read well, and only this command writes one.
    return orjson.dumps(schema, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


def rendered() -> dict[str, bytes]:
    """Every topic's schema file, by file name, in topic order."""
    return {schema_file(topic): render(topic_schema(topic)) for topic in Topic}


def differences(out: Path, files: dict[str, bytes]) -> list[str]:
    """What in ``out`` is not exactly ``files``: each as ``<name> (missing|differs|not a topic)``."""
    drift = []
    for name, data in files.items():
        path = out / name
        if not path.is_file():
            drift.append(f"{name} (missing)")
        elif path.read_bytes() != data:
            drift.append(f"{name} (differs)")
    if out.is_dir():
        drift += [f"{p.name} (not a topic)" for p in sorted(out.glob(f"*{SUFFIX}")) if p.name not in files]
    return drift


def run_schemas(args: argparse.Namespace) -> int:
    """The ``schemas`` command.

    Raises:
        ConfigurationError: the directory cannot be read or written.
    """
    if args.openapi is not None and run_openapi(Path(args.openapi), check=args.check) != 0:
        return 1
    out = Path(args.out)
    files = rendered()
    try:
        if args.check:
            drift = differences(out, files)
            if drift:
                print(
                    f"evidence-chain schemas: {len(drift)} file(s) in {out} do not match the models: "
                    f"{', '.join(drift)}; run `evidence-chain schemas --out {out}` and commit the result",
                    file=sys.stderr,
                )
                return 1
            print(f"{len(files)} schemas in {out} match the models")
            return 0
        out.mkdir(parents=True, exist_ok=True)
        written = 0
        for name, data in files.items():
            path = out / name
            if not path.is_file() or path.read_bytes() != data:
                path.write_bytes(data)
                written += 1
        stale = [d for d in differences(out, files) if d.endswith("(not a topic)")]
    except OSError as exc:
        raise ConfigurationError(f"cannot use the schema directory {str(out)!r}: {exc.strerror}") from exc
    print(f"{written} of {len(files)} schemas written to {out}")
    if stale:
        print(
            f"evidence-chain schemas: delete what is no topic's schema: {', '.join(stale)}", file=sys.stderr
        )
    return 0


def run_openapi(out: Path, *, check: bool) -> int:
    """Write the bundled OpenAPI document to ``out`` from its source, or compare (``check``).

    Raises:
        ConfigurationError: the source cannot be read or bundled, or ``out`` cannot be written.
    """
    from streams.openapi_bundle import bundled_file, source_of

    try:
        data = bundled_file(out)
        if check:
            if not out.is_file() or out.read_bytes() != data:
                print(
                    f"evidence-chain schemas: {out} is not {source_of(out)} bundled with the models; run "
                    f"`evidence-chain schemas --openapi {out}` and commit the result",
                    file=sys.stderr,
                )
                return 1
            print(f"{out} is {source_of(out)} bundled with the models")
            return 0
        if not out.is_file() or out.read_bytes() != data:
            out.write_bytes(data)
    except OSError as exc:
        raise ConfigurationError(f"cannot bundle the OpenAPI document {str(out)!r}: {exc.strerror}") from exc
    except ValueError as exc:
        raise ConfigurationError(f"cannot bundle {source_of(out)}: {exc}") from exc
    print(f"{out} written from {source_of(out)} and the models")
    return 0
