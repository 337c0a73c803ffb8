"""deploy/k8s: every manifest is valid against its schema, and agrees with the code it deploys.

Core objects are checked with kubernetes-validate (the Kubernetes OpenAPI schemas it bundles, strict:
unknown fields fail). Custom resources (Strimzi, KEDA, prometheus-operator) are checked against the
published schemas vendored in deploy/k8s/schemas (see its README.md), made strict the same way. The
files are read as kustomization.yaml lists them; the base has no patches, so that is what
`kubectl apply -k deploy/k8s` applies, plus the Secrets and the ConfigMap its generators make from
what deploy/k8s/secrets.sh generates (run here into a temporary directory). Then the settings, topics,
users, probes, autoscaling, keys, Redis users and NetworkPolicies are compared with streams.settings,
streams.kafka, streams.worker.app, deploy/redis/users.acl and Faust.
"""

from __future__ import annotations

import atexit
import copy
import functools
import json
import os
import posixpath
import re
import shutil
import stat
import subprocess
import tempfile
import typing
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock
from urllib.parse import urlsplit

import jsonschema
import kubernetes_validate
import pytest
import yaml
from faust.assignor.leader_assignor import LeaderAssignor
from pydantic import BaseModel, SecretStr

from models.vocab import Station, Topic
from streams.kafka.admin import TOPIC_NAMES, topic_configs
from streams.settings import Settings
from streams.trust.keys import load_signer, load_trusted_keys
from streams.web.gateway import bearer_token, is_loopback
from streams.worker.app import INPUT_TOPIC

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "k8s"
SCHEMAS = K8S / "schemas"
ACL = ROOT / "deploy" / "redis" / "acl.sh"
GENERATED = "generated/"
"""Where the generators of kustomization.yaml read: what deploy/k8s/secrets.sh writes (gitignored)."""

KUBERNETES_VERSIONS = ("1.30.0", "1.34.0")
"""The oldest Kubernetes the Strimzi release of the schemas supports, and a recent one."""

CRD_GROUPS = frozenset({"kafka.strimzi.io", "keda.sh", "monitoring.coreos.com"})
"""API groups of custom resources: validated against deploy/k8s/schemas, not kubernetes-validate."""

PENDING_SETTINGS = frozenset({"EC_AUDIT_SINK_PORT"})
"""Deployment variables whose setting is being added to streams.settings; drop each once it is there."""

Object = dict[str, Any]


# --- the manifests ------------------------------------------------------------------------------


@functools.cache
def kustomization() -> Object:
    loaded: Object = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    return loaded


@functools.cache
def objects() -> tuple[Object, ...]:
    """Every object of every file kustomization.yaml lists, in order."""
    out: list[Object] = []
    for name in kustomization()["resources"]:
        for document in yaml.safe_load_all((K8S / name).read_text()):
            if document is not None:
                document["__file__"] = name
                out.append(document)
    return tuple(out)


def manifest(obj: Object) -> Object:
    """The object without the test's bookkeeping."""
    return {key: value for key, value in obj.items() if key != "__file__"}


def of_kind(kind: str) -> list[Object]:
    return [obj for obj in objects() if obj["kind"] == kind]


def one(kind: str, name: str) -> Object:
    found = [obj for obj in of_kind(kind) if obj["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name}, found {len(found)}"
    return found[0]


def group_of(obj: Object) -> str:
    api_version: str = obj["apiVersion"]
    return api_version.split("/")[0] if "/" in api_version else ""


def where(obj: Object) -> str:
    return f"{obj['__file__']}: {obj['kind']} {obj['metadata']['name']}"


def container(deployment: Object) -> Object:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1, where(deployment)
    found: Object = containers[0]
    return found


def plain_env(deployment: Object) -> dict[str, str]:
    """The container's literal env values (valueFrom entries left out)."""
    return {e["name"]: e["value"] for e in container(deployment).get("env", []) if "value" in e}


def config_map() -> dict[str, str]:
    (found,) = of_kind("ConfigMap")
    data: dict[str, str] = found["data"]
    return data


@functools.cache
def generated_dir() -> Path:
    """deploy/k8s/secrets.sh run once into a temporary directory (as an operator runs it before apply)."""
    scratch = tempfile.mkdtemp(prefix="ec-k8s-secrets-")
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    out = Path(scratch) / "generated"
    env = {
        **os.environ,
        "EC_K8S_SECRETS_DIR": str(out),
        "EC_CLI": str(ROOT / ".venv" / "bin" / "evidence-chain"),
    }
    subprocess.run([str(K8S / "secrets.sh")], env=env, check=True, capture_output=True, timeout=120)  # noqa: S603
    return out


def env_file(path: Path) -> dict[str, str]:
    """The NAME=VALUE lines of an env file, as kustomize's ``envs`` reads them."""
    lines = [line for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    return dict(line.split("=", 1) for line in lines)


def generator_data(generator: Object) -> dict[str, str]:
    """The keys and values one secretGenerator / configMapGenerator entry makes from generated/."""
    data: dict[str, str] = {}
    for source in generator.get("files", []):
        key, _, path = source.rpartition("=")
        assert path.startswith(GENERATED), f"{generator['name']}: {path} is not generated by secrets.sh"
        data[key or posixpath.basename(path)] = (generated_dir() / path.removeprefix(GENERATED)).read_text()
    for path in generator.get("envs", []):
        assert path.startswith(GENERATED), f"{generator['name']}: {path} is not generated by secrets.sh"
        data.update(env_file(generated_dir() / path.removeprefix(GENERATED)))
    assert set(generator) <= {"name", "files", "envs"}, generator["name"]
    return data


def generated(kind: str) -> dict[str, dict[str, str]]:
    """``{name: data}`` of the Secrets (kind "secret") or ConfigMaps ("configMap") the generators make."""
    return {g["name"]: generator_data(g) for g in kustomization().get(f"{kind}Generator", [])}


def secret_data() -> dict[str, dict[str, str]]:
    """Every Secret that `kubectl apply -k` applies: generated ones and those written in the files."""
    written = {s["metadata"]["name"]: s["stringData"] for s in of_kind("Secret")}
    return {**written, **generated("secret")}


def settings_of(deployment: Object | None = None) -> Settings:
    """The settings a process of ``deployment`` reads (ConfigMap, then its literal env), nothing else."""
    env = dict(config_map())
    if deployment is not None:
        env.update(plain_env(deployment))
    with mock.patch.dict(os.environ, env, clear=True):
        return Settings()


def workers() -> list[Object]:
    """The Deployments that run ``evidence-chain worker``."""
    found = [d for d in of_kind("Deployment") if container(d)["command"][-1] == "worker"]
    assert found, "no worker Deployment"
    return found


def audit_sink() -> Object:
    (found,) = [d for d in of_kind("Deployment") if container(d)["command"][-1] == "audit-sink"]
    return found


def gateway() -> Object:
    """The Deployment that runs ``evidence-chain gateway``."""
    (found,) = [d for d in of_kind("Deployment") if container(d)["command"][-1] == "gateway"]
    return found


def kafka_cluster() -> Object:
    (found,) = of_kind("Kafka")
    return found


# --- the kustomization --------------------------------------------------------------------------


def test_every_manifest_file_is_a_resource_of_the_kustomization() -> None:
    listed = kustomization()["resources"]
    assert len(listed) == len(set(listed)), "a resource is listed twice"
    on_disk = {path.name for path in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(listed) == on_disk
    assert not any("/" in name for name in listed), "resources are the files beside kustomization.yaml"
    # The tests read the files as they are: a patch would make them check something other than what is
    # applied. The generators only make the secrets (and the trusted keys) from secrets.sh's files.
    assert set(kustomization()) <= {
        "apiVersion",
        "kind",
        "namespace",
        "resources",
        "images",
        "secretGenerator",
        "configMapGenerator",
        "generatorOptions",
    }
    assert kustomization()["generatorOptions"]["labels"]["app.kubernetes.io/part-of"] == "evidence-chain"
    assert "disableNameSuffixHash" not in kustomization()["generatorOptions"], (
        "a new secret must roll the pods"
    )


def test_every_object_is_named_and_labelled_part_of_the_app() -> None:
    for obj in objects():
        assert obj["metadata"].get("name"), obj["__file__"]
        assert obj["metadata"].get("labels", {}).get("app.kubernetes.io/part-of") == "evidence-chain", where(
            obj
        )
        assert "namespace" not in obj["metadata"], f"{where(obj)}: the kustomization sets the namespace"


# --- schemas ------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_core_objects_are_valid_kubernetes_objects(version: str) -> None:
    core = [obj for obj in objects() if group_of(obj) not in CRD_GROUPS]
    assert {obj["kind"] for obj in core} >= {
        "Namespace",
        "ServiceAccount",
        "ConfigMap",
        "Secret",
        "Service",
        "StatefulSet",
        "Deployment",
        "PersistentVolumeClaim",
        "PodDisruptionBudget",
    }
    errors = []
    for obj in core:
        try:
            kubernetes_validate.validate(manifest(obj), version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            errors.append(f"{where(obj)}: {'.'.join(map(str, exc.path))}: {exc.message}")
    assert not errors, "\n".join(errors)


def strict(schema: Any) -> Any:
    """The schema with unknown fields refused, as the API server's strict field validation does
    (kubectl's default): objects that list their properties get ``additionalProperties: false``."""
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key in ("properties", "patternProperties") and isinstance(value, dict):
            out[key] = {name: strict(sub) for name, sub in value.items()}
        else:
            out[key] = strict(value)
    if (
        out.get("type") == "object"
        and "properties" in out
        and "additionalProperties" not in out
        and not out.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


def schema_path(obj: Object) -> Path:
    group, version = obj["apiVersion"].split("/")
    return SCHEMAS / group / f"{obj['kind'].lower()}_{version}.json"


@functools.cache
def crd_validator(path: Path) -> jsonschema.Draft4Validator:
    schema = strict(json.loads(path.read_text()))
    # CRD schemas are OpenAPI 3.0 schema objects: JSON Schema draft 4 plus x-kubernetes-* keywords.
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def test_custom_resources_match_their_published_schemas() -> None:
    custom = [obj for obj in objects() if group_of(obj) in CRD_GROUPS]
    assert {obj["kind"] for obj in custom} == {
        "Kafka",
        "KafkaNodePool",
        "KafkaTopic",
        "KafkaUser",
        "ScaledObject",
        "TriggerAuthentication",
        "PodMonitor",
        "PrometheusRule",
    }
    errors = []
    for obj in custom:
        path = schema_path(obj)
        assert path.is_file(), f"{where(obj)}: no vendored schema {path.relative_to(ROOT)} (see its README)"
        for error in crd_validator(path).iter_errors(manifest(obj)):
            errors.append(f"{where(obj)}: {'.'.join(map(str, error.path))}: {error.message}")
        # The CRD schemas say only `metadata: object`; the API server checks it as ObjectMeta.
        carrier = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj["metadata"]}
        try:
            kubernetes_validate.validate(carrier, KUBERNETES_VERSIONS[-1], strict=True)
        except kubernetes_validate.ValidationError as exc:
            errors.append(f"{where(obj)}: metadata.{'.'.join(map(str, exc.path))}: {exc.message}")
    assert not errors, "\n".join(errors)


def test_the_strict_schemas_refuse_an_unknown_field() -> None:
    topic = copy.deepcopy(manifest(of_kind("KafkaTopic")[0]))
    topic["spec"]["partitons"] = 6
    assert not crd_validator(schema_path(topic)).is_valid(topic)


def test_every_vendored_schema_is_used_and_documented() -> None:
    vendored = {path.relative_to(SCHEMAS).as_posix() for path in SCHEMAS.rglob("*.json")}
    used = {
        schema_path(obj).relative_to(SCHEMAS).as_posix() for obj in objects() if group_of(obj) in CRD_GROUPS
    }
    assert vendored == used
    readme = (SCHEMAS / "README.md").read_text()
    for name in vendored:
        assert name in readme, f"schemas/README.md does not say where {name} came from"


# --- settings -----------------------------------------------------------------------------------


def setting_variables() -> set[str]:
    """Every EC_* variable streams.settings reads (nested models with ``__``)."""
    names = set()
    for name, field in Settings.model_fields.items():
        variable = f"EC_{name.upper()}"
        names.add(variable)
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            names |= {f"{variable}__{sub.upper()}" for sub in field.annotation.model_fields}
    return names


def secret_variables() -> set[str]:
    """The EC_* variables of SecretStr settings."""
    return {
        f"EC_{name.upper()}"
        for name, field in Settings.model_fields.items()
        if SecretStr in (field.annotation, *typing.get_args(field.annotation))
    }


def test_every_config_map_key_is_a_setting() -> None:
    unknown = set(config_map()) - setting_variables()
    assert not unknown, f"not settings of streams.settings (typos are ignored silently): {sorted(unknown)}"
    settings_of()  # and every value is one the settings accept


def test_every_ec_variable_of_a_deployment_is_a_setting() -> None:
    known = setting_variables() | PENDING_SETTINGS
    for deployment in of_kind("Deployment"):
        names = {e["name"] for e in container(deployment).get("env", []) if e["name"].startswith("EC_")}
        assert names <= known, f"{where(deployment)}: {sorted(names - known)}"
        settings_of(deployment)


def test_no_secret_in_the_config_map() -> None:
    assert secret_variables() >= {"EC_REDIS_URL", "EC_REDIS_PASSWORD", "EC_KAFKA_SASL_PASSWORD"}
    for key, value in config_map().items():
        assert key not in secret_variables(), key
        assert not any(word in key for word in ("PASSWORD", "SECRET", "TOKEN", "REDIS_URL")), key
        assert "@" not in value, f"{key} looks like a URL with credentials"


def test_secret_settings_come_from_secrets() -> None:
    made_by_strimzi = {u["metadata"]["name"] for u in of_kind("KafkaUser")} | {
        f"{kafka_cluster()['metadata']['name']}-cluster-ca-cert"
    }
    secrets = secret_data()
    for deployment in of_kind("Deployment"):
        for entry in container(deployment).get("env", []):
            if entry["name"] in secret_variables():
                assert "value" not in entry, f"{where(deployment)}: {entry['name']} written out"
            ref = entry.get("valueFrom", {}).get("secretKeyRef")
            if ref is None:
                continue
            if ref["name"] in secrets:
                assert ref["key"] in secrets[ref["name"]], f"{where(deployment)}: {ref}"
            else:
                assert ref["name"] in made_by_strimzi, f"{where(deployment)}: no Secret {ref['name']}"
    for secret in of_kind("Secret"):
        assert "data" not in secret, f"{where(secret)}: stringData only, so it can be read"


def test_no_password_key_or_token_is_written_into_the_manifests() -> None:
    """The secrets are generated (secrets.sh) into a gitignored directory, never shipped as placeholders:
    without them kustomize fails on the missing files instead of applying a password everyone knows."""
    assert not (K8S / "secret.yaml").exists()
    assert "generated/" in (K8S / ".gitignore").read_text().split()
    for path in K8S.glob("*.yaml"):
        text = path.read_text()
        assert "REPLACE_ME" not in text and "PRIVATE KEY" not in text, path.name
        assert not re.search(r"redis://[^/\s]*@", text), f"{path.name}: a Redis URL with credentials"
    for secret in of_kind("Secret"):  # only KEDA's fixed, non-secret parameters are written out
        assert not set(secret["stringData"]) & {"password", "EC_REDIS_URL", "EC_GATEWAY_TOKEN"}, where(secret)
    for deployment in pod_templates():
        names = {
            e["name"]
            for main in deployment["spec"]["template"]["spec"]["containers"]
            for e in main.get("env", [])
        }
        assert "EC_REDIS_PASSWORD" not in names, f"{where(deployment)}: the password is in its user's URL"


def test_secrets_sh_generates_strong_values_once_and_keeps_them() -> None:
    out = generated_dir()
    passwords = {path.name: path.read_text().strip() for path in out.glob("*.password")}
    assert set(passwords) == {f"{user}.password" for user in redis_users()}
    token = env_file(out / "gateway.env")["EC_GATEWAY_TOKEN"]
    for value in [*passwords.values(), token]:
        assert re.fullmatch(r"[0-9a-f]{64}", value), "32 random bytes, hex"
    assert len({*passwords.values(), token}) == len(passwords) + 1
    for path in out.iterdir():
        mode = stat.S_IMODE(path.stat().st_mode)
        public = path.name.endswith((".pub", ".keys"))
        assert mode == (0o644 if public else 0o600), (path.name, oct(mode))
    acl = (out / "redis-users.acl").read_text()
    assert not any(password in acl for password in passwords.values()), "the aclfile holds hashes only"
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    env = {
        **os.environ,
        "EC_K8S_SECRETS_DIR": str(out),
        "EC_CLI": str(ROOT / ".venv" / "bin" / "evidence-chain"),
    }
    subprocess.run([str(K8S / "secrets.sh")], env=env, check=True, capture_output=True, timeout=120)  # noqa: S603
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before, "a second run changes nothing"


# --- Kafka --------------------------------------------------------------------------------------


def test_the_kafka_cluster_is_kraft_with_three_persistent_dual_role_nodes() -> None:
    kafka = kafka_cluster()
    annotations = kafka["metadata"]["annotations"]
    assert annotations["strimzi.io/node-pools"] == "enabled"
    assert annotations["strimzi.io/kraft"] == "enabled"
    (pool,) = of_kind("KafkaNodePool")
    assert pool["metadata"]["labels"]["strimzi.io/cluster"] == kafka["metadata"]["name"]
    assert pool["spec"]["replicas"] == 3
    assert set(pool["spec"]["roles"]) == {"controller", "broker"}
    volumes = pool["spec"]["storage"].get("volumes", [pool["spec"]["storage"]])
    assert all(v["type"] == "persistent-claim" and v.get("deleteClaim") is False for v in volumes)
    spec = kafka["spec"]
    assert set(spec["entityOperator"]) >= {"topicOperator", "userOperator"}
    assert spec["kafka"]["authorization"]["type"] == "simple"
    config = spec["kafka"]["config"]
    assert config["min.insync.replicas"] == 2
    assert config["default.replication.factor"] == 3
    assert config["auto.create.topics.enable"] is False
    assert config["message.max.bytes"] >= settings_of().topic_max_message_bytes


def test_the_clients_dial_the_strimzi_listener_as_it_is_secured() -> None:
    settings = settings_of()
    name = kafka_cluster()["metadata"]["name"]
    listeners = {
        f"{name}-kafka-bootstrap:{lsn['port']}": lsn for lsn in kafka_cluster()["spec"]["kafka"]["listeners"]
    }
    listener = listeners[settings.kafka_bootstrap]
    assert listener["type"] == "internal"
    assert listener["authentication"]["type"] == "scram-sha-512"
    assert settings.kafka_sasl_mechanism == "SCRAM-SHA-512"
    assert settings.kafka_security_protocol == ("SASL_SSL" if listener["tls"] else "SASL_PLAINTEXT")
    for deployment in of_kind("Deployment"):
        if settings.kafka_security_protocol == "SASL_SSL":
            assert settings.kafka_ssl_cafile is not None
            ca = mounted(deployment, posixpath.dirname(settings.kafka_ssl_cafile))
            assert ca["secret"]["secretName"] == f"{name}-cluster-ca-cert", where(deployment)
    for scaled in of_kind("ScaledObject"):
        for trigger in scaled["spec"]["triggers"]:
            assert trigger["metadata"]["bootstrapServers"] == settings.kafka_bootstrap


def kafka_topics() -> dict[str, Object]:
    return {t["spec"]["topicName"]: t for t in of_kind("KafkaTopic")}


def test_every_topic_has_a_kafka_topic_with_the_configs_the_code_gives() -> None:
    settings = settings_of()
    topics = kafka_topics()
    cluster = kafka_cluster()["metadata"]["name"]
    for name in TOPIC_NAMES:
        topic = topics.get(settings.topic(name))
        assert topic is not None, f"no KafkaTopic for {settings.topic(name)}"
        spec = topic["spec"]
        assert topic["metadata"]["labels"]["strimzi.io/cluster"] == cluster
        assert spec["partitions"] == settings.topic_partitions, name
        assert spec["replicas"] == settings.topic_replication_factor == 3, name
        config = {key: str(value) for key, value in spec["config"].items()}
        for key, value in topic_configs(settings, name).items():
            assert config.get(key) == value, f"{name}: {key}={config.get(key)}, the code says {value}"
        assert config["min.insync.replicas"] == "2", name
    ledger = {
        key: str(value) for key, value in topics[settings.topic(Topic.LEDGER)]["spec"]["config"].items()
    }
    assert ledger["cleanup.policy"] == "delete"
    retention = int(ledger["retention.ms"])
    assert retention == -1 or retention >= settings.ledger_ttl_seconds * 1000  # SPEC 7


def test_the_nine_topics_share_one_partition_count() -> None:
    settings = settings_of()
    counts = {kafka_topics()[settings.topic(name)]["spec"]["partitions"] for name in TOPIC_NAMES}
    assert counts == {settings.topic_partitions}


def leader_topic_name(app_id: str) -> str:
    """Faust's own name for its leader assignor's topic, asked of a stand-in app with just the id,
    so a Faust upgrade that renames the topic fails here rather than in the cluster."""
    name = vars(LeaderAssignor)["_leader_topic_name"]
    stand_in = SimpleNamespace(app=SimpleNamespace(conf=SimpleNamespace(id=app_id)))
    return str(name.__get__(stand_in, LeaderAssignor))


def test_faust_leader_topic_is_made_like_faust_makes_it_but_replicated() -> None:
    settings = settings_of()
    topic = kafka_topics().get(leader_topic_name(settings.app_id))
    assert topic is not None, f"no KafkaTopic for {leader_topic_name(settings.app_id)}"
    # faust.assignor.leader_assignor declares it with one partition: the holder of partition 0 leads.
    assert topic["spec"]["partitions"] == 1
    assert topic["spec"]["replicas"] == settings.topic_replication_factor
    assert str(topic["spec"]["config"]["min.insync.replicas"]) == "2"
    assert set(kafka_topics()) == {settings.topic(n) for n in TOPIC_NAMES} | {
        leader_topic_name(settings.app_id)
    }


def kafka_user(deployment: Object) -> Object:
    username = plain_env(deployment)["EC_KAFKA_SASL_USERNAME"]
    user = one("KafkaUser", username)
    assert user["spec"]["authentication"]["type"] == "scram-sha-512"
    (password,) = [e for e in container(deployment)["env"] if e["name"] == "EC_KAFKA_SASL_PASSWORD"]
    assert password["valueFrom"]["secretKeyRef"] == {"name": username, "key": "password"}, where(deployment)
    return user


def allowed(user: Object, kind: str, name: str) -> set[str]:
    """The operations a KafkaUser's ACLs allow on one resource."""
    ops: set[str] = set()
    for acl in user["spec"]["authorization"]["acls"]:
        resource = acl["resource"]
        if resource["type"] != kind or acl.get("type", "allow") != "allow":
            continue
        pattern = resource.get("patternType", "literal")
        if (pattern == "literal" and resource["name"] in (name, "*")) or (
            pattern == "prefix" and name.startswith(resource["name"])
        ):
            ops |= set(acl["operations"])
    return ops


def inputs_of(deployment: Object) -> set[str]:
    settings = settings_of(deployment)
    return {settings.topic(INPUT_TOPIC[station]) for station in settings.agents}


def test_each_process_has_a_kafka_user_allowed_what_it_does() -> None:
    for deployment in [*workers(), audit_sink()]:
        settings = settings_of(deployment)
        user = kafka_user(deployment)
        for name in TOPIC_NAMES:  # ensure_topics describes all nine at start
            assert {"Describe", "Create"} <= allowed(user, "topic", settings.topic(name)), (
                where(deployment),
                name,
            )
    for deployment in workers():
        settings = settings_of(deployment)
        user = kafka_user(deployment)
        for topic in inputs_of(deployment):
            assert "Read" in allowed(user, "topic", topic), (where(deployment), topic)
        assert {"Read", "Describe"} <= allowed(user, "group", settings.app_id)
        assert {"Read", "Describe", "Create"} <= allowed(user, "topic", leader_topic_name(settings.app_id))
        assert "Write" in allowed(user, "topic", settings.topic(Topic.AUDIT))
        assert "Write" in allowed(user, "topic", settings.topic(Topic.DEAD_LETTERS))
    sink = audit_sink()
    settings = settings_of(sink)
    user = kafka_user(sink)
    assert "Read" in allowed(user, "topic", settings.topic(Topic.AUDIT))
    # streams.audit.sink consumes in group <app_id>-audit-sink.
    assert {"Read", "Describe"} <= allowed(user, "group", f"{settings.app_id}-audit-sink")


def test_no_user_of_the_app_may_write_what_only_the_agent_harness_writes() -> None:
    settings = settings_of()
    door = kafka_user(gateway())  # the harness's own door: it writes for the agents with the token
    for user in of_kind("KafkaUser"):
        if user is door:
            continue
        for name in (Topic.RAW_HITS, Topic.DIAGNOSIS_DRAFTS):  # SPEC "Trust boundary"
            assert not allowed(user, "topic", settings.topic(name)) & {"Write", "All"}, (where(user), name)


def test_the_gateway_user_writes_the_two_inputs_and_reads_the_two_replies_and_nothing_else() -> None:
    settings = settings_of(gateway())
    user = kafka_user(gateway())
    expected = {
        Topic.RAW_HITS: {"Write", "Describe"},
        Topic.DIAGNOSIS_DRAFTS: {"Write", "Describe"},
        Topic.LEDGER: {"Read", "Describe"},  # replies read by assignment: no group, no commits
        Topic.VERDICTS: {"Read", "Describe"},
    }
    for name in TOPIC_NAMES:
        assert allowed(user, "topic", settings.topic(name)) == expected.get(name, set()), name
    assert all(acl["resource"]["type"] == "topic" for acl in user["spec"]["authorization"]["acls"])
    assert all(
        acl["resource"].get("patternType", "literal") == "literal"
        for acl in user["spec"]["authorization"]["acls"]
    )


def test_the_gateway_listens_for_the_service_with_a_token_from_the_secret() -> None:
    deployment = gateway()
    settings = settings_of(deployment)
    assert not is_loopback(settings.gateway_host), "the Service could not reach a loopback gateway"
    (token,) = [e for e in container(deployment)["env"] if e["name"] == "EC_GATEWAY_TOKEN"]
    ref = token["valueFrom"]["secretKeyRef"]
    value = secret_data()[ref["name"]][ref["key"]]
    # The token secrets.sh generates is one the gateway accepts on that address.
    with mock.patch.dict(
        os.environ, {**config_map(), **plain_env(deployment), "EC_GATEWAY_TOKEN": value}, clear=True
    ):
        assert bearer_token(Settings(), settings.gateway_host) == value.encode()
    service = one("Service", "evidence-chain-gateway")
    assert selects({"matchLabels": service["spec"]["selector"]}, pod_labels(deployment))
    (port,) = service["spec"]["ports"]
    ports = {p["name"]: p["containerPort"] for p in container(deployment)["ports"]}
    assert ports[port["targetPort"]] == settings.gateway_port
    assert deployment["spec"]["replicas"] >= 2
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    # In-flight requests finish within the grace period (each waits at most the gateway timeout).
    grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    assert grace > settings.gateway_timeout_ms / 1000 + 5
    assert "emptyDir" in mounted(deployment, "/tmp")


def test_the_gateway_keeps_one_replica_through_a_drain() -> None:
    deployment = gateway()
    (budget,) = [
        b for b in of_kind("PodDisruptionBudget") if selects(b["spec"]["selector"], pod_labels(deployment))
    ]
    assert budget["spec"]["minAvailable"] == 1 < deployment["spec"]["replicas"]


# --- the Deployments ----------------------------------------------------------------------------


def mounted(deployment: Object, path: str) -> Object:
    """The volume mounted at ``path`` in the Deployment's container."""
    (mount,) = [m for m in container(deployment).get("volumeMounts", []) if m["mountPath"] == path]
    (volume,) = [v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == mount["name"]]
    found: Object = volume
    return found


def pod_templates() -> Iterator[Object]:
    for obj in objects():
        if obj["kind"] in ("Deployment", "StatefulSet"):
            yield obj


def test_the_workers_together_run_every_agent_once() -> None:
    agents = [station for deployment in workers() for station in settings_of(deployment).agents]
    assert sorted(agents) == sorted(INPUT_TOPIC), "each agent in exactly one worker Deployment"
    assert {Station.POSTPROCESS, Station.PROJECT, Station.LEDGER} in [
        settings_of(d).agents for d in workers()
    ]


def test_every_deployment_probes_livez_and_readyz_on_its_port() -> None:
    expected_port = {d["metadata"]["name"]: settings_of(d).web_port for d in workers()}
    expected_port[audit_sink()["metadata"]["name"]] = int(plain_env(audit_sink())["EC_AUDIT_SINK_PORT"])
    expected_port[gateway()["metadata"]["name"]] = settings_of(gateway()).gateway_port
    assert set(expected_port) == {d["metadata"]["name"] for d in of_kind("Deployment")}
    for deployment in of_kind("Deployment"):
        main = container(deployment)
        ports = {p["name"]: p["containerPort"] for p in main["ports"]}
        for probe, path in (
            ("livenessProbe", "/livez"),
            ("readinessProbe", "/readyz"),
            ("startupProbe", "/livez"),
        ):
            get = main[probe]["httpGet"]
            assert get["path"] == path, (where(deployment), probe)
            assert ports.get(get["port"], get["port"]) == expected_port[deployment["metadata"]["name"]], (
                where(deployment),
                probe,
            )
    for deployment in workers():
        assert settings_of(deployment).web_enabled, where(deployment)


def test_every_pod_is_unprivileged_with_a_read_only_root_and_resources() -> None:
    for obj in pod_templates():
        pod = obj["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True, where(obj)
        assert pod["automountServiceAccountToken"] is False, where(obj)
        assert pod["terminationGracePeriodSeconds"] >= 60, where(obj)
        for each in pod["containers"]:
            context = each["securityContext"]
            assert context["readOnlyRootFilesystem"] is True, where(obj)
            assert context["allowPrivilegeEscalation"] is False, where(obj)
            assert context["capabilities"]["drop"] == ["ALL"], where(obj)
            for bound in ("requests", "limits"):
                assert set(each["resources"][bound]) >= {"cpu", "memory"}, (where(obj), bound)


def test_the_writable_paths_are_volumes() -> None:
    for deployment in workers():
        assert "emptyDir" in mounted(deployment, settings_of(deployment).data_dir), where(deployment)
        assert "emptyDir" in mounted(deployment, "/tmp"), where(deployment)
    sink = audit_sink()
    database = posixpath.dirname(settings_of(sink).audit_db)
    claim = mounted(sink, database)["persistentVolumeClaim"]["claimName"]
    one("PersistentVolumeClaim", claim)
    assert sink["spec"]["replicas"] == 1 and sink["spec"]["strategy"]["type"] == "Recreate"


def selects(selector: Object, labels: dict[str, str]) -> bool:
    if any(labels.get(key) != value for key, value in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        if expression["operator"] != "In" or labels.get(expression["key"]) not in expression["values"]:
            return False
    return True


def pod_labels(deployment: Object) -> dict[str, str]:
    labels: dict[str, str] = deployment["spec"]["template"]["metadata"]["labels"]
    return labels


def test_each_worker_scales_on_its_input_lag_within_the_partition_count() -> None:
    scaled = {s["spec"]["scaleTargetRef"]["name"]: s for s in of_kind("ScaledObject")}
    assert set(scaled) == {d["metadata"]["name"] for d in workers()}
    auth = {t["metadata"]["name"] for t in of_kind("TriggerAuthentication")}
    for deployment in workers():
        settings = settings_of(deployment)
        spec = scaled[deployment["metadata"]["name"]]["spec"]
        assert "replicas" not in deployment["spec"], f"{where(deployment)}: KEDA owns the replica count"
        assert spec["minReplicaCount"] >= 1
        assert spec["maxReplicaCount"] <= settings.topic_partitions
        topics = set()
        for trigger in spec["triggers"]:
            assert trigger["type"] == "kafka"
            meta = trigger["metadata"]
            assert meta["consumerGroup"] == settings.app_id
            assert meta["allowIdleConsumers"] == "false"
            assert int(meta["lagThreshold"]) >= 1
            assert trigger["authenticationRef"]["name"] in auth
            topics.add(meta["topic"])
        assert topics == inputs_of(deployment), where(deployment)


def test_keda_reads_the_lag_as_a_describe_only_user() -> None:
    (auth,) = of_kind("TriggerAuthentication")
    refs = {ref["parameter"]: ref for ref in auth["spec"]["secretTargetRef"]}
    secrets = {s["metadata"]["name"]: s["stringData"] for s in of_kind("Secret")}
    params = {p: secrets[r["name"]][r["key"]] for p, r in refs.items() if r["name"] in secrets}
    assert params["sasl"] == "scram_sha512" and params["tls"] == "enable"
    user = one("KafkaUser", params["username"])
    assert refs["password"]["name"] == params["username"] and refs["password"]["key"] == "password"
    settings = settings_of()
    assert allowed(user, "group", settings.app_id) == {"Describe"}
    for deployment in workers():
        for topic in inputs_of(deployment):
            assert allowed(user, "topic", topic) == {"Describe"}


def test_each_worker_has_a_disruption_budget() -> None:
    budgets = of_kind("PodDisruptionBudget")
    for deployment in workers():
        mine = [b for b in budgets if selects(b["spec"]["selector"], pod_labels(deployment))]
        assert len(mine) == 1, where(deployment)
        assert mine[0]["spec"].get("maxUnavailable") == 1


def test_prometheus_scrapes_metrics_of_every_deployment() -> None:
    (monitor,) = of_kind("PodMonitor")
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    assert endpoint["path"] == "/metrics"
    for deployment in of_kind("Deployment"):
        assert selects(monitor["spec"]["selector"], pod_labels(deployment)), where(deployment)
        assert endpoint["port"] in {p["name"] for p in container(deployment)["ports"]}, where(deployment)


def test_redis_fsyncs_every_write_to_a_persistent_volume_behind_a_password() -> None:
    (redis,) = of_kind("StatefulSet")
    main = container(redis)
    args = main["args"]
    assert args[args.index("--appendonly") + 1] == "yes"
    assert args[args.index("--appendfsync") + 1] == "always"
    assert args[args.index("--maxmemory-policy") + 1] == "noeviction"
    assert "--requirepass" not in args, "named users (--aclfile), not one password for all"
    (claim,) = redis["spec"]["volumeClaimTemplates"]
    assert {m["name"]: m["mountPath"] for m in main["volumeMounts"]}[claim["metadata"]["name"]] == "/data"
    assert settings_of().redis_durability == "fsync"
    service = one("Service", "evidence-chain-redis")
    assert selects(
        {"matchLabels": service["spec"]["selector"]}, redis["spec"]["template"]["metadata"]["labels"]
    )
    for deployment in redis_clients():
        assert urlsplit(redis_url_of(deployment)).hostname == service["metadata"]["name"], where(deployment)


# --- Redis users, signing keys, NetworkPolicies (issue 19, items 4 and 5) ------------------------


def redis_users() -> list[str]:
    """The users of deploy/redis/users.acl."""
    done = subprocess.run([str(ACL), "users"], check=True, capture_output=True, text=True, timeout=30)  # noqa: S603
    return done.stdout.split()


def env_ref(deployment: Object, name: str) -> Object | None:
    """The secretKeyRef of an env variable of the Deployment's container, if it has one."""
    for entry in container(deployment).get("env", []):
        if entry["name"] == name:
            ref: Object = entry["valueFrom"]["secretKeyRef"]
            return ref
    return None


def redis_clients() -> list[Object]:
    """The Deployments that connect to Redis (they have EC_REDIS_URL)."""
    return [d for d in of_kind("Deployment") if env_ref(d, "EC_REDIS_URL") is not None]


def redis_url_of(deployment: Object) -> str:
    ref = env_ref(deployment, "EC_REDIS_URL")
    assert ref is not None, where(deployment)
    return secret_data()[ref["name"]][ref["key"]]


def runs(deployment: Object, station: Station) -> bool:
    return (
        container(deployment).get("command", [""])[-1] == "worker"
        and station in settings_of(deployment).agents
    )


def secrets_in(obj: Object) -> set[str]:
    """Every Secret a pod template reads: env, envFrom and volumes."""
    pod = obj["spec"]["template"]["spec"]
    names = set()
    for main in pod["containers"]:
        for entry in main.get("env", []):
            if ref := entry.get("valueFrom", {}).get("secretKeyRef"):
                names.add(ref["name"])
        names |= {e["secretRef"]["name"] for e in main.get("envFrom", []) if "secretRef" in e}
    for volume in pod.get("volumes", []):
        if "secret" in volume:
            names.add(volume["secret"]["secretName"])
    return names


def test_each_pod_logs_in_to_redis_as_the_user_it_needs() -> None:
    """The ledger agent writes as ec-ledger; the guard reads and keeps its report claims as ec-guard; the
    gateway only reads, as ec-reader; the audit sink never touches Redis; Redis itself knows them from
    the aclfile secrets.sh renders."""
    clients = {d["metadata"]["name"]: urlsplit(redis_url_of(d)).username for d in redis_clients()}
    expected = {
        d["metadata"]["name"]: "ec-ledger"
        if runs(d, Station.LEDGER)
        else "ec-guard"
        if runs(d, Station.GUARD)
        else "ec-reader"
        for d in redis_clients()
    }
    assert clients == expected
    assert set(clients.values()) == set(redis_users()) == {"ec-ledger", "ec-guard", "ec-reader"}
    assert audit_sink()["metadata"]["name"] not in clients
    assert gateway()["metadata"]["name"] in clients
    for deployment in redis_clients():
        url = urlsplit(redis_url_of(deployment))
        password = (generated_dir() / f"{url.username}.password").read_text().strip()
        assert url.password == password and url.path == "/0", where(deployment)
    (redis,) = of_kind("StatefulSet")
    args = container(redis)["args"]
    aclfile = args[args.index("--aclfile") + 1]
    secret = mounted(redis, posixpath.dirname(aclfile))["secret"]["secretName"]
    acl = secret_data()[secret][posixpath.basename(aclfile)]
    lines = [line for line in acl.splitlines() if line and not line.startswith("#")]
    assert {line.split()[1] for line in lines} == {"default", *redis_users()}
    (default,) = [line for line in lines if line.split()[1] == "default"]
    assert default == "user default reset on nopass +ping", "without a password: PING only (the probes)"
    # Rendered for the Redis this file runs (7.2+: WAITAOF, so no CONFIG GET for the writer).
    version = container(redis)["image"].split(":")[1]
    for line in lines:
        if line.split()[1] != "default":
            user = line.split()[1]
            done = subprocess.run(  # noqa: S603
                [str(ACL), "rules", user, version, settings_of().ns],
                check=True,
                capture_output=True,
                text=True,
            )
            assert line.rsplit(" ", 1)[0] == f"user {user} {done.stdout.strip()}"
            assert re.fullmatch(r"#[0-9a-f]{64}", line.rsplit(" ", 1)[1])
    assert "+waitaof" in acl and "+config|get" not in acl
    for probe in ("readinessProbe", "livenessProbe"):
        assert container(redis)[probe]["exec"]["command"] == ["redis-cli", "ping"]


def test_only_the_ledger_agent_holds_the_ledger_key_and_only_the_guard_the_guard_key() -> None:
    ledger_key, guard_key = "evidence-chain-ledger-key", "evidence-chain-guard-key"
    assert {ledger_key, guard_key} <= set(generated("secret"))
    for obj in pod_templates():
        held = secrets_in(obj)
        assert (ledger_key in held) == runs(obj, Station.LEDGER), where(obj)
        assert (guard_key in held) == runs(obj, Station.GUARD), where(obj)
        if runs(obj, Station.GUARD):
            assert not runs(obj, Station.LEDGER), (
                f"{where(obj)}: the guard must not share a pod with the ledger"
            )
    trusted = generated("configMap")["evidence-chain-trusted-keys"]["trusted.keys"]
    for deployment in workers():
        settings = settings_of(deployment)
        own = ledger_key if runs(deployment, Station.LEDGER) else guard_key
        assert settings.signing_key_file is not None and settings.trusted_keys_file is not None
        key = mounted(deployment, posixpath.dirname(settings.signing_key_file))["secret"]
        assert key["secretName"] == own, where(deployment)
        assert key["defaultMode"] & 0o077 == 0o040, "readable by the app's group (fsGroup), nobody else"
        assert posixpath.basename(settings.signing_key_file) in generated("secret")[own]
        assert "PRIVATE KEY" in generated("secret")[own][posixpath.basename(settings.signing_key_file)]
        trusted_volume = mounted(deployment, posixpath.dirname(settings.trusted_keys_file))
        assert trusted_volume["configMap"]["name"] == "evidence-chain-trusted-keys", where(deployment)
        # A worker whose own public key is not trusted in its role refuses to start: both are in the
        # ConfigMap, each under its role (SPEC 3.7: the ledger key signs entries, the guard key verdicts).
        role = own.removeprefix("evidence-chain-").removesuffix("-key")
        public = (generated_dir() / f"{role}.pub").read_text()
        assert public.splitlines()[-1].startswith(f"{role} "), where(deployment)
        assert public.splitlines()[-1] in trusted.splitlines(), where(deployment)
        assert load_trusted_keys(generated_dir() / "trusted.keys").roles_of(
            load_signer(generated_dir() / f"{role}.key").key_id
        ) == (role,), where(deployment)
    for name in generated("secret"):  # none reaches a pod through the ConfigMap
        assert "PRIVATE KEY" not in trusted, name


def ingress_peers(policy: Object, port: int) -> list[Object]:
    """The ``from`` peers of a NetworkPolicy's rules that admit ``port``."""
    peers = []
    for rule in policy["spec"].get("ingress", []):
        ports = {p["port"] for p in rule.get("ports", [])}
        if not ports or port in ports:
            peers += rule.get("from", [])
    return peers


def admitted(peers: list[Object], labels: dict[str, str]) -> bool:
    """Whether a pod of this namespace with ``labels`` is one of the peers."""
    return any(
        "namespaceSelector" not in peer and "ipBlock" not in peer and selects(peer["podSelector"], labels)
        for peer in peers
    )


def test_network_policies_deny_ingress_and_admit_only_who_needs_redis_and_kafka() -> None:
    policies = of_kind("NetworkPolicy")
    deny = [p for p in policies if p["spec"]["podSelector"] == {} and not p["spec"].get("ingress")]
    assert deny and deny[0]["spec"]["policyTypes"] == ["Ingress"], "a default deny of ingress"
    (redis,) = of_kind("StatefulSet")
    redis_labels = pod_labels(redis)
    on_redis = [
        p for p in policies if p["spec"]["podSelector"] and selects(p["spec"]["podSelector"], redis_labels)
    ]
    assert on_redis, "a NetworkPolicy selects the Redis pod"
    peers = [peer for policy in on_redis for peer in ingress_peers(policy, 6379)]
    assert all("namespaceSelector" not in p and "ipBlock" not in p for p in peers), "from this namespace only"
    for obj in pod_templates():
        if obj is redis:
            continue
        needs = obj in redis_clients()
        assert admitted(peers, pod_labels(obj)) == needs, (
            f"{where(obj)} {'cannot' if needs else 'can'} reach Redis"
        )
    for policy in on_redis:
        for rule in policy["spec"]["ingress"]:
            assert [p["port"] for p in rule["ports"]] == [6379]
    # Kafka: Strimzi's own policy admits the listener's networkPolicyPeers: the app pods, KEDA, not Redis.
    (listener,) = kafka_cluster()["spec"]["kafka"]["listeners"]
    kafka_peers = listener["networkPolicyPeers"]
    for deployment in of_kind("Deployment"):
        assert admitted(kafka_peers, pod_labels(deployment)), where(deployment)
    assert not admitted(kafka_peers, redis_labels)
    keda = [p for p in kafka_peers if "namespaceSelector" in p]
    assert keda and all(p.get("podSelector") for p in keda), "KEDA's operator, not its whole namespace"
    # The gateway takes agents from labelled namespaces only; Prometheus reaches the metrics ports.
    on_gateway = [
        p
        for p in policies
        if p["spec"]["podSelector"] and selects(p["spec"]["podSelector"], pod_labels(gateway()))
    ]
    assert any(
        peer.get("namespaceSelector", {}).get("matchLabels") == {"evidence-chain.io/gateway-client": "true"}
        for policy in on_gateway
        for peer in ingress_peers(policy, settings_of(gateway()).gateway_port)
    )
