"""The clients generated from docs/openapi.yaml work against the real gateway (``make clients-check``).

``tests/clients/generate.sh`` generates a Java client (openapi-generator, ``-g java --library native``)
and a Python client (openapi-python-client) and builds the Java program of ``tests/clients/java`` on
the first. Here a worker and a gateway with a token run on a prefix of their own, and each client does
what an agent would: a lookup gives the ledger's exact bytes, a draft its verdict (the same as the
Python client's), and no token or a wrong one gets 401.
"""

from __future__ import annotations

import asyncio
import os
import re
import select
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from streams import codec
from streams.client import EvidenceChainClient
from streams.kafka.admin import ensure_topics
from streams.settings import Settings
from tests.console import CLI, REPO
from tests.golden import GOLDEN
from tests.integration.helpers import Worker, isolated_settings, new_prefix, worker_env

CLIENTS = REPO / ".local" / "clients"
BUILT = CLIENTS / "java-check"
"""Where tests/clients/java is built (its pom's build directory)."""
TOKEN = f"java-{uuid.uuid4().hex}"
RECORD = (GOLDEN / "pipe" / "input.jsonl").read_bytes().splitlines()[0]
EXPECTED = (GOLDEN / "pipe" / "expected_projection.jsonl").read_bytes().splitlines()[0]


def _generated() -> None:
    missing = [
        path for path in (BUILT / "classes", BUILT / "classpath.txt", CLIENTS / "python") if not path.exists()
    ]
    if missing:
        pytest.fail(f"run tests/clients/generate.sh first (make clients-check does): missing {missing}")


@pytest.fixture(scope="module")
def gateway(
    kafka_bootstrap: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Settings]]:
    _generated()
    prefix = new_prefix()
    env = worker_env(prefix, kafka_bootstrap, redis_url)
    settings = isolated_settings(prefix, kafka_bootstrap, redis_url, gateway_timeout_ms=60_000)
    asyncio.run(ensure_topics(settings))
    logs = Path(tmp_path_factory.mktemp("clients"))
    worker = Worker(env, logs / "worker.log").start()
    with (logs / "gateway.log").open("ab") as log:
        process = subprocess.Popen(  # noqa: S603 - our own console script
            [CLI, "gateway", "--port", "0"],
            env={**env, "EC_GATEWAY_TOKEN": TOKEN, "EC_GATEWAY_TIMEOUT_MS": "60000"},
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,
        )
    try:
        assert process.stdout is not None
        readable, _, _ = select.select([process.stdout], [], [], 60)
        found = re.search(rb"http://\S+:(\d+)/", process.stdout.readline() if readable else b"")
        if found is None:
            pytest.fail(f"the gateway did not start:\n{(logs / 'gateway.log').read_text()}")
        yield f"http://127.0.0.1:{found.group(1).decode()}", settings
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)
        if process.stdout is not None:
            process.stdout.close()
        worker.stop()


def run(args: list[str], tmp_path: Path, timeout: float = 180) -> dict[str, Any]:
    done = subprocess.run(args, capture_output=True, timeout=timeout, check=False)  # noqa: S603 - ours
    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
    assert lines, (
        f"exit {done.returncode}, no output; stderr:\n{done.stderr.decode('utf-8', 'replace')[-3000:]}"
    )
    seen: dict[str, Any] = codec.loads(lines[-1])
    return seen | {"exit": done.returncode}


def passing_draft() -> dict[str, Any]:
    record = codec.loads(RECORD)
    shown = codec.loads(EXPECTED)["evidence"][0]
    return {
        "run_id": record["run_id"],
        "draft_id": f"java-{uuid.uuid4().hex[:6]}",
        "attempt": 1,
        "analysis": [
            {
                "id": "a1",
                "kind": "NORMAL",
                "content": shown["excerpt"],
                "tool_call_ids": [record["tool_call_id"]],
                "document_ids": [shown["document_id"]],
            }
        ],
        "conclusion": {"content": shown["excerpt"], "based_on_analysis_ids": ["a1"]},
        "action_plan": [{"id": "p1", "content": shown["excerpt"], "based_on_analysis_ids": ["a1"]}],
        "limitations": ["只依据检索到的摘录。"],
    }


def test_the_generated_java_client_looks_up_checks_and_is_refused_without_the_token(
    gateway: tuple[str, Settings], tmp_path: Path
) -> None:
    url, settings = gateway
    record, expected, draft = tmp_path / "record.json", tmp_path / "expected.txt", tmp_path / "draft.json"
    record.write_bytes(RECORD)
    expected.write_bytes(EXPECTED)
    written = passing_draft()
    draft.write_bytes(codec.dumps(written))
    classpath = f"{BUILT / 'classes'}:{(BUILT / 'classpath.txt').read_text().strip()}"
    java = ["java", "-cp", classpath, "org.evidencechain.check.GatewayCheck"]
    seen = run([*java, url, TOKEN, str(record), str(expected), str(draft)], tmp_path)
    assert seen["projection"].encode("utf-8") == EXPECTED
    assert seen["projection_sha256_holds"] and seen["projection_is_expected"]
    assert seen["without_token"] == 401
    assert seen["exit"] == 0

    async def reference() -> dict[str, Any]:
        async with EvidenceChainClient(settings) as client:
            return (await client.check({**written, "draft_id": written["draft_id"] + "-py"})).verdict

    verdict = asyncio.run(reference())
    assert (seen["verdict"], seen["verdict_run_id"]) == (verdict["verdict"], written["run_id"])


def test_the_generated_python_client_looks_up_and_is_refused_with_a_wrong_token(
    gateway: tuple[str, Settings], tmp_path: Path
) -> None:
    url, _ = gateway
    record = tmp_path / "record.json"
    record.write_bytes(RECORD)
    python = str(CLIENTS / "pyclient-venv" / "bin" / "python")
    started = time.monotonic()
    seen = run(
        [python, str(REPO / "tests" / "clients" / "python_check.py"), url, TOKEN, str(record)], tmp_path
    )
    assert seen["type"] == "ReadyAnswer", (seen, time.monotonic() - started)
    assert seen["projection"].encode("utf-8") == EXPECTED
    assert seen["wrong_token"] == 401
