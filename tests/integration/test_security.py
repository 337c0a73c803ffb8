"""Security settings reach every client the project creates, and no secret is ever printed.

The tests' own broker has a SASL_PLAINTEXT (PLAIN) listener and a Redis of this module's own runs with
``requirepass``: the whole sample flow (``demo``: publish, the worker, the ledger, the guard), then
every command that talks to Kafka or Redis, runs through them, and neither password appears in any
output or log.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from streams import codec
from tests.console import clean_env
from tests.integration.helpers import CLI, golden_lines
from tests.services import SASL_PASSWORD, SASL_USER, FaultKafka, FaultRedis

REDIS_PASSWORD = "r3dis-Pa55-w0rd"
pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def locked_redis(tmp_path: Path) -> Iterator[FaultRedis]:
    server = FaultRedis(tmp_path / "redis", password=REDIS_PASSWORD)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def secure_env(kafka: FaultKafka, redis_url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = clean_env(
        EC_KAFKA_BOOTSTRAP=kafka.sasl_bootstrap,
        EC_KAFKA_SECURITY_PROTOCOL="SASL_PLAINTEXT",
        EC_KAFKA_SASL_MECHANISM="PLAIN",
        EC_KAFKA_SASL_USERNAME=SASL_USER,
        EC_KAFKA_SASL_PASSWORD=SASL_PASSWORD,
        EC_REDIS_URL=redis_url,
        EC_TOPIC_PREFIX="sec-",
        EC_APP_ID="sec-app",
        EC_NS="sec",
        EC_AUDIT_DB=str(tmp_path / "audit.db"),
        EC_DATA_DIR=str(tmp_path / "faust"),
        EC_BROKER_SESSION_TIMEOUT_SECONDS="6",
        EC_BROKER_HEARTBEAT_SECONDS="1",
        EC_STARTUP_WAIT_SECONDS="20",
    )
    env.update(extra)
    return env


def run(
    env: dict[str, str], *args: str, stdin: bytes = b"", timeout: float = 120
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(  # noqa: S603 - our own console script
        [CLI, *args],
        env=env,
        input=stdin,
        capture_output=True,
        timeout=timeout,
        check=False,
        cwd=env["EC_DATA_DIR"],
    )


def no_secret(*texts: bytes | str) -> None:
    for text in texts:
        raw = text.encode() if isinstance(text, str) else text
        assert REDIS_PASSWORD.encode() not in raw, "the Redis password was printed"
        assert SASL_PASSWORD.encode() not in raw, "the SASL password was printed"


def test_the_sample_flow_and_every_command_through_sasl_and_a_redis_password(
    fault_kafka: FaultKafka, locked_redis: FaultRedis, tmp_path: Path
) -> None:
    env = secure_env(fault_kafka, locked_redis.url, tmp_path)
    Path(env["EC_DATA_DIR"]).mkdir()
    demo = run(env, "demo", "--prefix", "sec-", "--wait-seconds", "120", timeout=240)
    worker_log = next(Path(env["EC_DATA_DIR"]).glob("**/*worker.log"), None)
    logs = worker_log.read_bytes() if worker_log else b""
    assert demo.returncode == 0, demo.stderr.decode() + logs.decode(errors="replace")[-3000:]
    out = demo.stdout.decode()
    assert "PASS" in out and "REJECT" in out and "FALLBACK" in out  # the sample's three verdicts
    assert "redis://****@127.0.0.1" in out  # the URL shown, its password not
    no_secret(demo.stdout, demo.stderr, logs)

    commands = [
        ("topics",),
        ("ledger", "export", "--run", "run-demo-1"),
        ("replay", "--out", str(tmp_path / "diff.jsonl")),
        ("ledger", "rebuild"),
        ("audit-sink", "--once"),
        ("inspect", "run-demo-1"),
        ("replay", "--mode", "reset", "--from-offset", "0"),
    ]
    for args in commands:
        done = run(env, *args)
        assert done.returncode == 0, (args, done.stderr.decode())
        no_secret(done.stdout, done.stderr)
    exported = run(env, "ledger", "export", "--run", "run-demo-1").stdout
    assert len(exported.splitlines()) >= 2
    verified = run(
        env, "verify", "--redis", stdin=b"\n".join(golden_lines("guard", "drafts.jsonl")[:2]) + b"\n"
    )
    assert verified.returncode == 0 and len(verified.stdout.splitlines()) == 2
    published = run(env, "publish", "raw-hits", stdin=b'{"run_id":"r","tool_call_id":"c","response":{}}\n')
    assert published.returncode == 0 and b"published 1 records" in published.stderr
    no_secret(verified.stdout, verified.stderr, published.stdout, published.stderr)
    assert codec.loads(exported.splitlines()[0])["run_id"] == "run-demo-1"


def test_wrong_credentials_fail_loudly_and_say_what_to_fix(
    fault_kafka: FaultKafka, locked_redis: FaultRedis, tmp_path: Path
) -> None:
    env = secure_env(fault_kafka, locked_redis.url, tmp_path, EC_KAFKA_SASL_PASSWORD="wrong-" + SASL_PASSWORD)
    Path(env["EC_DATA_DIR"]).mkdir()
    done = run(env, "topics", timeout=60)
    assert done.returncode != 0
    assert b"Traceback" not in done.stderr
    no_secret(done.stdout, done.stderr)
    # Redis without its password: the ledger cannot be read, and the command says why (no secret)
    bare = locked_redis.url.replace(f":{REDIS_PASSWORD}@", "")
    env = secure_env(fault_kafka, bare, tmp_path)
    done = run(env, "verify", "--redis", stdin=golden_lines("guard", "drafts.jsonl")[0] + b"\n", timeout=60)
    assert done.returncode != 0 and b"EC_REDIS_URL" in done.stderr, done.stderr
    assert b"Traceback" not in done.stderr
    no_secret(done.stdout, done.stderr)
