"""The gateway's HTTP contract as test helpers: ``docs/openapi.yaml`` and the routes it documents.

``answer_validator(name)`` checks a body against ``#/components/schemas/<name>`` of the committed
document, its ``$ref``s to ``docs/schemas/*.schema.json`` resolved from the files (what a client is
given), so a test can check every answer it reads. ``documented_operations()`` lists the document's
``(METHOD, path)`` pairs for the route parity test.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from streams import codec

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
OPENAPI = DOCS / "openapi.yaml"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


@functools.cache
def document() -> dict[str, Any]:
    """The committed OpenAPI document."""
    loaded: dict[str, Any] = yaml.safe_load(OPENAPI.read_text(encoding="utf-8"))
    return loaded


def documented_operations() -> set[tuple[str, str]]:
    """Every ``(METHOD, path template)`` the document describes."""
    return {
        (method.upper(), path)
        for path, item in document()["paths"].items()
        for method in item
        if method in METHODS
    }


@functools.cache
def _registry() -> Registry[Any]:
    """The document and every topic schema, each under its file URI (and a schema under its $id too)."""
    resources = [(OPENAPI.as_uri(), Resource.from_contents(document(), default_specification=DRAFT202012))]
    for path in sorted((DOCS / "schemas").glob("*.schema.json")):
        schema = codec.loads(path.read_bytes())
        resource = Resource.from_contents(schema)
        resources += [(path.as_uri(), resource), (schema["$id"], resource)]
    return Registry().with_resources(resources)


@functools.cache
def answer_validator(name: str) -> Draft202012Validator:
    """A validator of ``#/components/schemas/<name>``."""
    if name not in document()["components"]["schemas"]:
        raise KeyError(f"docs/openapi.yaml has no components.schemas.{name}")
    return Draft202012Validator(
        {"$ref": f"{OPENAPI.as_uri()}#/components/schemas/{name}"}, registry=_registry()
    )


def validate_answer(name: str, value: Any) -> None:
    """Raise ``AssertionError`` (naming the JSON path) when ``value`` is not a ``name`` of the document."""
    error = best_match(answer_validator(name).iter_errors(value))
    if error is not None:
        raise AssertionError(f"not a {name} of docs/openapi.yaml at {error.json_path}: {error.message}")
