"""docs/openapi.yaml is a valid OpenAPI 3.1 document and names exactly the gateway's routes.

``make openapi-check`` runs the same validator from the command line; this test also holds the
document to the code: the routes the app registers, the error reasons it can answer, the schema
files it serves, and the file the installed package serves at /openapi.yaml.
"""

from __future__ import annotations

import pytest
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

from models.schemas import schema_file
from models.vocab import DeadLetterReason, Topic
from streams import codec
from streams.client import EvidenceChainClient
from streams.hashing import sha256_hex
from streams.settings import Settings
from streams.web.gateway import ErrorReason, create_gateway, openapi_document
from tests.openapi_contract import OPENAPI, document, documented_operations, validate_answer

INPUT_REASONS = {DeadLetterReason.MALFORMED_JSON, DeadLetterReason.INVALID_ID, DeadLetterReason.OVERSIZED}
"""The dead-letter reasons the gateway answers with (400 and 413)."""


def registered_operations() -> set[tuple[str, str]]:
    settings = Settings()
    app = create_gateway(settings, EvidenceChainClient(settings))  # nothing is connected
    return {
        (route.method, route.resource.canonical)
        for route in app.router.routes()
        if route.resource is not None and route.method != "HEAD"
    }


def test_the_document_is_valid_openapi_3_1_with_its_refs_resolved() -> None:
    spec, base_uri = read_from_filename(str(OPENAPI))
    validate(spec, base_uri=base_uri)
    assert document()["openapi"].startswith("3.1.")


def test_every_route_of_the_app_is_documented_and_every_documented_route_exists() -> None:
    assert registered_operations() == documented_operations()


def test_the_package_serves_the_committed_document() -> None:
    assert openapi_document() == OPENAPI.read_bytes()


def test_v1_operations_take_the_bearer_token_and_the_others_none() -> None:
    schemes = document()["components"]["securitySchemes"]
    assert schemes["bearer"] == {**schemes["bearer"], "type": "http", "scheme": "bearer"}
    for path, item in document()["paths"].items():
        for method, operation in item.items():
            if path.startswith("/v1/"):
                # Bearer, or nothing at all when the gateway has no token (loopback only).
                assert operation["security"] == [{"bearer": []}, {}], (method, path)
                assert "401" in operation["responses"], (method, path)
            else:
                assert operation["security"] == [], (method, path)


def test_the_documented_error_reasons_are_those_the_gateway_answers() -> None:
    error = document()["components"]["schemas"]["Error"]["properties"]["error"]
    assert set(error["properties"]["reason"]["enum"]) == {*ErrorReason, *INPUT_REASONS}
    for reason in ErrorReason:
        assert reason in error["properties"]["reason"]["description"], reason


def test_the_documented_schema_files_are_those_served() -> None:
    (name,) = document()["paths"]["/schemas/{name}"]["get"]["parameters"]
    assert name["schema"]["enum"] == [schema_file(topic) for topic in Topic]


def test_the_examples_are_answers_of_the_document() -> None:
    examples = document()["paths"]["/v1/lookups"]["post"]["responses"]["200"]["content"]["application/json"]
    for example in examples["examples"].values():
        validate_answer("LookupAnswer", example["value"])
    ready = examples["examples"]["ready"]["value"]
    assert sha256_hex(ready["projection"].encode()) == ready["projection_sha256"]
    assert codec.loads(ready["projection"])["tool_call_id"] == ready["tool_call_id"]


@pytest.mark.parametrize(
    "answer",
    [
        {
            "run_id": "r",
            "tool_call_id": "c",
            "status": "READY",
            "projection_sha256": "0" * 64,
        },  # no projection
        {"run_id": "r", "tool_call_id": "c", "status": "FAILED", "failure_reason": None},
        {"run_id": "r:1", "tool_call_id": "c", "status": "FAILED", "failure_reason": "INVALID_ID"},
    ],
)
def test_the_answer_schemas_refuse_what_the_gateway_never_sends(answer: dict[str, object]) -> None:
    with pytest.raises(AssertionError):
        validate_answer("LookupAnswer", answer)
