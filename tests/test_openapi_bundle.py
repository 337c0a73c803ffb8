"""docs/openapi.yaml is docs/openapi.source.yaml bundled from the models: one file, no external $ref.

Client generators read the bundled document (``make clients-check`` generates a Java and a Python
client from it); a person edits the source. ``make contracts-check`` runs the same drift check.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from models.schemas import topic_schema
from models.vocab import Topic
from streams.openapi_bundle import bundle, bundled_file, source_of, value_component
from tests.openapi_contract import OPENAPI, document


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [ref for value in node.values() for ref in refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in refs(value)]
    return []


def test_the_committed_document_is_its_source_bundled_with_the_models() -> None:
    assert OPENAPI.read_bytes() == bundled_file(OPENAPI), "run `make openapi` and commit docs/openapi.yaml"


def test_every_ref_is_a_component_of_the_document_itself() -> None:
    components = document()["components"]
    for ref in refs(document()):
        assert ref.startswith("#/components/"), ref
        kind, name = ref.removeprefix("#/components/").split("/")
        assert name in components[kind], ref
    source = yaml.safe_load(source_of(OPENAPI).read_text(encoding="utf-8"))
    assert any(ref.startswith("schemas/") for ref in refs(source)), "the source refers to the topic files"


def test_a_topic_value_is_its_schema_with_the_defs_made_components() -> None:
    schemas = document()["components"]["schemas"]
    ledger = topic_schema(Topic.LEDGER)
    bundled = schemas[value_component(Topic.LEDGER)]
    assert set(bundled) == set(ledger) - {"$defs", "$schema", "$id"}
    assert bundled["required"] == ledger["required"]
    assert schemas["RagToolResult"]["required"] == ledger["$defs"]["RagToolResult"]["required"]


def test_a_ref_to_no_topic_or_a_pointer_that_is_no_def_is_refused() -> None:
    for ref in ("schemas/nothing.schema.json", "schemas/ledger.schema.json#/properties/status"):
        with pytest.raises(ValueError, match="schema"):
            bundle({"paths": {"/x": {"get": {"schema": {"$ref": ref}}}}})
