"""The container deployment keeps the durable record durable and local state out of the image."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]


def test_kafka_keeps_its_log_in_a_named_volume() -> None:
    kafka = SERVICES["kafka"]
    log_dir = kafka["environment"]["KAFKA_LOG_DIRS"]
    assert any(v.split(":")[0] in COMPOSE["volumes"] and v.split(":")[1] == log_dir for v in kafka["volumes"])


def test_redis_fsyncs_before_it_replies() -> None:
    command = SERVICES["redis"]["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert command[command.index("--appendfsync") + 1] == "always"
    assert SERVICES["worker"]["environment"]["EC_REDIS_DURABILITY"] == "fsync"


def test_every_service_has_a_memory_limit_and_the_apps_a_healthcheck_and_a_restart_policy() -> None:
    for name, service in SERVICES.items():
        assert service["deploy"]["resources"]["limits"]["memory"], name
    for name in ("worker", "audit-sink", "gateway"):
        assert "livez" in " ".join(SERVICES[name]["healthcheck"]["test"]), name
        assert SERVICES[name]["restart"] == "unless-stopped", name


def test_the_gateway_listens_on_every_address_only_with_a_token_from_the_environment() -> None:
    gateway = SERVICES["gateway"]
    assert gateway["command"] == ["evidence-chain", "gateway"]
    env = gateway["environment"]
    assert env["EC_GATEWAY_HOST"] == "0.0.0.0"
    # Interpolated from the host's environment, never written into the file.
    assert env["EC_GATEWAY_TOKEN"].startswith("${EC_GATEWAY_TOKEN")
    port = env["EC_GATEWAY_PORT"]
    assert port in " ".join(gateway["healthcheck"]["test"])
    # Published on the host's loopback only, like Kafka and Redis.
    assert all(p.startswith("127.0.0.1:") and p.endswith(f":{port}") for p in gateway["ports"])


def test_the_audit_directory_is_created_and_owned_by_the_app_user() -> None:
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    assert (
        "mkdir -p /data/audit" in dockerfile
        and "chown -R evidence-chain:evidence-chain /data/audit" in dockerfile
    )
    assert dockerfile.index("chown") < dockerfile.index("USER evidence-chain")
    assert SERVICES["audit-sink"]["environment"]["EC_AUDIT_DB"].startswith("/data/audit/")


def test_local_state_never_enters_the_image() -> None:
    patterns = [p for p in (ROOT / ".dockerignore").read_text().splitlines() if p and not p.startswith("#")]

    def matches(path: str, p: str) -> bool:
        return (
            fnmatch.fnmatch(path, p)
            or fnmatch.fnmatch(path, p.removeprefix("**/"))
            or path.startswith(f"{p}/")
        )

    def ignored(path: str) -> bool:
        # As Docker reads the file: the last pattern that matches decides, and `!` lets a path back in.
        verdict = False
        for p in patterns:
            if matches(path, p.removeprefix("!")):
                verdict = not p.startswith("!")
        return verdict

    for path in (
        "evidence-chain-audit.db",
        "x/audit.db-wal",
        "replay-differences.jsonl",
        ".local/kafka/libs",
        ".venv/bin",
        ".env",
    ):
        assert ignored(path), path
    for path in (
        "streams/worker/app.py",
        "deploy/sample/raw-hits.jsonl",
        "pyproject.toml",
        "models/ids.py",
        # streams/openapi.yaml links to it: the gateway serves it from the installed package.
        "docs/openapi.yaml",
        "streams/openapi.yaml",
    ):
        assert not ignored(path), path
    assert ignored("docs/design.md")
