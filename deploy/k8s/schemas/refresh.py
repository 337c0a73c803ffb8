#!/usr/bin/env python3
"""Re-vendor the JSON schemas of the custom resources deploy/k8s uses (see README.md beside this file).

Run from anywhere, on a machine with Maven and npm:  python3 deploy/k8s/schemas/refresh.py
It downloads the packages below into a temporary directory, takes out one schema per kind and
writes ``<group>/<kind>_<version>.json`` here. Bump the versions below to refresh; review the diff and
run ``pytest tests/test_k8s.py``.

The schemas are kept as published, with two mechanical changes: ``description`` texts are dropped
(size), and the ``metadata`` property becomes ``{"type": "object"}`` where the package pointed it at
its own ObjectMeta schema (tests/test_k8s.py checks metadata against the Kubernetes ObjectMeta schema).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent

STRIMZI_VERSION = "0.51.0"
"""io.strimzi:api (Maven Central); its ``tests`` jar holds the CRDs Strimzi's crd-generator makes."""
STRIMZI_CRDS = {
    "Kafka": "crds/v1beta2/040-Crd-kafka.yaml",
    "KafkaTopic": "crds/v1beta2/043-Crd-kafkatopic.yaml",
    "KafkaUser": "crds/v1beta2/044-Crd-kafkauser.yaml",
    "KafkaNodePool": "crds/v1beta2/045-Crd-kafkanodepool.yaml",
}
STRIMZI_API_VERSION = "v1beta2"

NPM_SOURCES = {
    # package@version: {kind: (file in the package, apiVersion)}
    "@kubernetes-models/keda@0.3.2": {
        "ScaledObject": ("package/keda.sh/v1alpha1/ScaledObject.js", "keda.sh/v1alpha1"),
        "TriggerAuthentication": ("package/keda.sh/v1alpha1/TriggerAuthentication.js", "keda.sh/v1alpha1"),
    },
    "@kubernetes-models/prometheus-operator@4.0.0": {
        "PodMonitor": ("package/monitoring.coreos.com/v1/PodMonitor.js", "monitoring.coreos.com/v1"),
        "PrometheusRule": ("package/monitoring.coreos.com/v1/PrometheusRule.js", "monitoring.coreos.com/v1"),
    },
}
"""Newer releases of these packages ship compiled validators only, not the schemas as data."""


def strip_descriptions(schema: Any) -> Any:
    """The schema without ``description`` texts (a property *named* description is kept)."""
    if isinstance(schema, list):
        return [strip_descriptions(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "description" and isinstance(value, str):
            continue
        if key in ("properties", "patternProperties", "definitions") and isinstance(value, dict):
            out[key] = {name: strip_descriptions(sub) for name, sub in value.items()}
        else:
            out[key] = strip_descriptions(value)
    return out


def write(api_version: str, kind: str, schema: dict[str, Any], source: str) -> None:
    group, version = api_version.split("/")
    schema = strip_descriptions(schema)
    metadata = schema.get("properties", {}).get("metadata")
    if metadata is not None and "$ref" in json.dumps(metadata):
        schema["properties"]["metadata"] = {"type": "object"}
    if "$ref" in json.dumps(schema):
        raise SystemExit(f"{kind}: the schema has references this script does not resolve")
    target = HERE / group / f"{kind.lower()}_{version}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    document = {"$comment": f"{api_version} {kind} from {source}; descriptions removed", **schema}
    target.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    print(f"wrote {target.relative_to(HERE)} ({target.stat().st_size} bytes)")


def strimzi(work: Path) -> None:
    subprocess.run(  # noqa: S603 - fixed arguments
        [  # noqa: S607 - mvn from PATH
            "mvn",
            "-q",
            "dependency:copy",
            f"-Dartifact=io.strimzi:api:{STRIMZI_VERSION}:jar:tests",
            f"-DoutputDirectory={work}",
        ],
        check=True,
    )
    jar = work / f"api-{STRIMZI_VERSION}-tests.jar"
    with zipfile.ZipFile(jar) as archive:
        for kind, member in STRIMZI_CRDS.items():
            crd = yaml.safe_load(archive.read(member))
            assert crd["spec"]["names"]["kind"] == kind, member
            (version,) = [v for v in crd["spec"]["versions"] if v["name"] == STRIMZI_API_VERSION]
            source = f"Maven io.strimzi:api:{STRIMZI_VERSION}:tests {member}"
            write(
                f"{crd['spec']['group']}/{STRIMZI_API_VERSION}",
                kind,
                version["schema"]["openAPIV3Schema"],
                source,
            )


def js_schema(text: str, where: str) -> dict[str, Any]:
    """The ``const schema = {...};`` object literal (JSON) of a kubernetes-models module."""
    start = text.index("const schema = ") + len("const schema = ")
    schema, _ = json.JSONDecoder().raw_decode(text, start)
    if not isinstance(schema, dict):
        raise SystemExit(f"{where}: no schema object")
    return schema


def npm(work: Path) -> None:
    for spec, kinds in NPM_SOURCES.items():
        out = subprocess.run(  # noqa: S603 - fixed arguments
            ["npm", "pack", spec, "--silent", "--pack-destination", str(work)],  # noqa: S607 - npm from PATH
            check=True,
            capture_output=True,
            text=True,
        )
        tarball = work / out.stdout.strip().splitlines()[-1]
        with tarfile.open(tarball) as archive:
            for kind, (member, api_version) in kinds.items():
                handle = archive.extractfile(member)
                assert handle is not None, member
                schema = js_schema(handle.read().decode(), f"{spec} {member}")
                write(api_version, kind, schema, f"npm {spec} {member.removeprefix('package/')}")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        strimzi(Path(tmp))
        npm(Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
