"""The container deployment keeps the durable record durable, local state out of the image, and gives
each process only the Redis user and signing key it needs (issue 19, items 4 and 5)."""

from __future__ import annotations

import fnmatch
import subprocess
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
    for name in ("worker-chain", "worker-guard"):
        assert SERVICES[name]["environment"]["EC_REDIS_DURABILITY"] == "fsync", name


def test_every_service_has_a_memory_limit_and_the_apps_a_healthcheck_and_a_restart_policy() -> None:
    for name, service in SERVICES.items():
        assert service["deploy"]["resources"]["limits"]["memory"], name
    for name in ("worker-chain", "worker-guard", "audit-sink", "gateway"):
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
        "deploy/k8s/generated/ledger.key",
        "deploy/k8s/generated/redis-reader.env",
        "anywhere/signing.key",
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


def agents(name: str) -> set[str]:
    value = SERVICES[name].get("environment", {}).get("EC_AGENTS", "postprocess,project,ledger,guard")
    return set(value.split(","))


def test_the_workers_together_run_every_agent_once_and_the_guard_apart_from_the_ledger() -> None:
    workers = [n for n, s in SERVICES.items() if s.get("command") == ["evidence-chain", "worker"]]
    every = sorted(a for n in workers for a in agents(n))
    assert every == sorted(["postprocess", "project", "ledger", "guard", "semantic"])
    (guard,) = [n for n in workers if "guard" in agents(n)]
    assert agents(guard) == {"guard", "semantic"}  # the semantic review signs with the guard's key


def secrets_of(name: str) -> set[str]:
    return {s if isinstance(s, str) else s["source"] for s in SERVICES[name].get("secrets", [])}


def test_each_key_only_where_it_signs_and_the_trusted_keys_where_entries_are_read() -> None:
    files = {name: spec["file"] for name, spec in COMPOSE["secrets"].items()}
    assert all(path.startswith(".local/compose/") for path in files.values()), "generated, never committed"
    holders = {secret: {n for n in SERVICES if secret in secrets_of(n)} for secret in files}
    ledger = {
        n for n in SERVICES if "ledger" in agents(n) and SERVICES[n].get("command", [""])[-1] == "worker"
    }
    guard = {n for n in SERVICES if "guard" in agents(n) and SERVICES[n].get("command", [""])[-1] == "worker"}
    assert holders["ledger-signing-key"] == ledger
    assert holders["guard-signing-key"] == guard
    assert holders["trusted-keys"] == ledger | guard | {"gateway"}
    assert holders["redis-users"] == {"redis"}
    for name in holders["trusted-keys"]:
        assert SERVICES[name]["environment"]["EC_TRUSTED_KEYS_FILE"] == "/run/secrets/trusted-keys", name
    for name in ledger:
        assert SERVICES[name]["environment"]["EC_SIGNING_KEY_FILE"] == "/run/secrets/ledger-signing-key"
    for name in guard:
        assert SERVICES[name]["environment"]["EC_SIGNING_KEY_FILE"] == "/run/secrets/guard-signing-key"


def test_each_process_logs_in_to_redis_as_its_user() -> None:
    users = subprocess.run(  # noqa: S603 - our own script
        [str(ROOT / "deploy" / "redis" / "acl.sh"), "users"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert users == ["ec-ledger", "ec-guard", "ec-reader"]
    expected = {"worker-chain": "ec-ledger", "worker-guard": "ec-guard", "gateway": "ec-reader"}
    for name, service in SERVICES.items():
        env_files = service.get("env_file", [])
        assert "EC_REDIS_URL" not in service.get("environment", {}), f"{name}: the URL holds a password"
        assert env_files == ([f".local/compose/{expected[name]}.env"] if name in expected else []), name
    command = SERVICES["redis"]["command"]
    assert command[command.index("--aclfile") + 1] == "/run/secrets/redis-users"
    # WAITAOF (7.2+): deploy/local/compose-secrets.sh renders the users for this version.
    version = SERVICES["redis"]["image"].split(":")[1]
    script = (ROOT / "deploy" / "local" / "compose-secrets.sh").read_text()
    assert f"COMPOSE_REDIS_VERSION={version}\n" in script
    assert tuple(int(p) for p in version.split(".")[:2]) >= (7, 2)


def _keys_up(local_dir: Path) -> subprocess.CompletedProcess[str]:
    """deploy/local/keys.sh's keys_up (what `make up` and `make run` call) on keys under ``local_dir``."""
    script = (
        f'source "{ROOT}/deploy/local/lib.sh"; LOCAL_DIR="{local_dir}"; '
        f'source "{ROOT}/deploy/local/keys.sh"; keys_up required'
    )
    return subprocess.run(  # noqa: S603 - our own scripts
        ["bash", "-c", script], capture_output=True, text=True, timeout=120, check=False
    )


def test_make_up_writes_role_named_keys_and_upgrades_an_old_checkouts_bare_ones(tmp_path: Path) -> None:
    """SPEC 3.7: keys have roles, and a bare key line is a configuration error. A checkout made before
    roles has bare lines in .local/keys: keys_up names them (it knows which file is which key)."""
    from streams.trust.keys import load_signer, load_trusted_keys

    done = _keys_up(tmp_path)
    assert done.returncode == 0, done.stderr
    keys = tmp_path / "keys"
    ledger, guard = (load_signer(keys / f"{name}.key").key_id for name in ("ledger", "guard"))
    trusted = load_trusted_keys(keys / "trusted.keys")
    assert trusted.roles_of(ledger) == ("ledger",) and trusted.roles_of(guard) == ("guard",)
    for name in ("ledger", "guard"):  # as an old checkout has them: the key alone on its line
        pub = keys / f"{name}.pub"
        lines = pub.read_text().splitlines()
        pub.write_text("\n".join(line if line[:1] == "#" else line.split()[-1] for line in lines) + "\n")
    (keys / "trusted.keys").write_text((keys / "ledger.pub").read_text() + (keys / "guard.pub").read_text())
    done = _keys_up(tmp_path)
    assert done.returncode == 0, done.stderr
    trusted = load_trusted_keys(keys / "trusted.keys")
    assert trusted.roles_of(ledger) == ("ledger",) and trusted.roles_of(guard) == ("guard",)
    assert (keys / "ledger.pub").read_text().splitlines()[-1].startswith("ledger ")
    (keys / "retired.keys").write_text("# an old ledger key\n" + "ab" * 32 + "\n")  # keys.sh cannot tell
    done = _keys_up(tmp_path)
    assert done.returncode != 0 and "retired.keys has a key without its role" in done.stderr
