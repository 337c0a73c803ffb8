"""The topic contracts as test helpers: check any message a test reads against the committed contract.

``validate(topic, value)`` checks a value against ``docs/schemas/<topic>.schema.json`` (what consumers
are given, not a schema regenerated on the fly), including the JSON text a ``projection`` string
holds (its ``contentSchema``). ``validate_dead_letter_headers`` checks a dead letter's Kafka headers
against ``docs/asyncapi.yaml``. Both raise ``AssertionError`` naming the topic and the JSON path of
the first error, so a test can call them on every message it reads.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource

from models.schemas import schema_file
from models.vocab import Topic
from streams import codec

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "docs" / "schemas"
ASYNCAPI = ROOT / "docs" / "asyncapi.yaml"


@functools.cache
def schema_of(topic: Topic) -> dict[str, Any]:
    """The committed JSON Schema of a topic's value."""
    schema: dict[str, Any] = codec.loads((SCHEMAS / schema_file(topic)).read_bytes())
    return schema


@functools.cache
def _validator(topic: Topic) -> Draft202012Validator:
    return Draft202012Validator(schema_of(topic))


@functools.cache
def _embedded(topic: Topic) -> dict[str, Draft202012Validator]:
    """A validator per string field whose JSON text has a ``contentSchema`` (e.g. ``projection``)."""
    schema = schema_of(topic)
    registry: Registry[Any] = Registry().with_resource(schema["$id"], Resource.from_contents(schema))
    out = {}
    for name, prop in schema.get("properties", {}).items():
        for branch in prop.get("anyOf", [prop]):
            if branch.get("contentMediaType") == "application/json" and "contentSchema" in branch:
                ref = branch["contentSchema"]["$ref"]
                out[name] = Draft202012Validator({"$ref": f"{schema['$id']}{ref}"}, registry=registry)
    return out


MAX_MESSAGE_CHARS = 300
"""An error message quotes the instance; a whole value would drown the path."""


def first_error(errors: Iterable[ValidationError]) -> ValidationError | None:
    """The most relevant error, descending into unions: the branch with the fewest errors, then the
    one that got deepest into the value (an ``OK`` LookupResult is judged as one, not as a FAILED one;
    a wrong origin as an origin, not as null)."""
    error = best_match(errors)
    while error is not None and error.validator in ("anyOf", "oneOf") and error.context:
        branches: dict[Any, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        chosen = min(branches.values(), key=lambda es: (len(es), -max(len(e.absolute_path) for e in es)))
        error = best_match(chosen)
    return error


def _message(error: ValidationError) -> str:
    text = error.message
    return text if len(text) <= MAX_MESSAGE_CHARS else f"{text[: MAX_MESSAGE_CHARS - 1]}…"


def validate(topic: Topic, value: bytes) -> None:
    """Check one message value of ``topic`` against its contract.

    Raises:
        AssertionError: naming the topic and the JSON path of the first error.
    """
    try:
        doc = codec.loads(value)
    except codec.JSONDecodeError as exc:
        raise AssertionError(f"{topic}: $: not strict JSON ({exc})") from None
    error = first_error(_validator(topic).iter_errors(doc))
    if error is not None:
        raise AssertionError(f"{topic}: {error.json_path}: {_message(error)}")
    for name, validator in _embedded(topic).items():
        text = doc.get(name) if isinstance(doc, dict) else None
        if not isinstance(text, str):
            continue
        try:
            inner = codec.loads(text)
        except codec.JSONDecodeError as exc:
            raise AssertionError(f"{topic}: $.{name}: not JSON text ({exc})") from None
        error = first_error(validator.iter_errors(inner))
        if error is not None:
            raise AssertionError(f"{topic}: $.{name} → {error.json_path}: {_message(error)}")


@functools.cache
def dead_letter_headers_schema() -> dict[str, Any]:
    """The dead letters' headers schema of ``docs/asyncapi.yaml``, its ``$ref`` followed."""
    document = yaml.safe_load(ASYNCAPI.read_text(encoding="utf-8"))
    headers: dict[str, Any] = document["components"]["messages"]["deadLetters"]["headers"]
    ref = headers.get("$ref")
    if ref is not None:
        node: Any = document
        for part in ref.removeprefix("#/").split("/"):
            node = node[part]
        headers = node
    return headers


def validate_dead_letter_headers(headers: Iterable[tuple[str, bytes]]) -> None:
    """Check a dead letter's Kafka headers: declared names, each once, values as ``docs/asyncapi.yaml`` says.

    A ``contentEncoding: binary`` header is read as one character per byte (latin-1), so its
    length bounds are byte counts; every other header is UTF-8 text.

    Raises:
        AssertionError: naming the topic and the header.
    """
    schema = dead_letter_headers_schema()
    declared = schema["properties"]
    seen: dict[str, str] = {}
    for name, raw in headers:
        if name in seen:
            raise AssertionError(f"{Topic.DEAD_LETTERS}: header {name}: given twice")
        binary = declared.get(name, {}).get("contentEncoding") == "binary"
        try:
            seen[name] = raw.decode("latin-1" if binary else "utf-8")
        except UnicodeDecodeError:
            raise AssertionError(f"{Topic.DEAD_LETTERS}: header {name}: not UTF-8") from None
    undeclared = sorted(set(seen) - set(declared))
    if undeclared:
        raise AssertionError(f"{Topic.DEAD_LETTERS}: headers not in docs/asyncapi.yaml: {undeclared}")
    error = first_error(Draft7Validator(schema).iter_errors(seen))
    if error is not None:
        raise AssertionError(f"{Topic.DEAD_LETTERS}: headers {error.json_path}: {_message(error)}")
