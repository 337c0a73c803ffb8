#!/usr/bin/env bash
# Generate the gateway's clients from docs/openapi.yaml as a Java and a Python team would, and build the
# Java check program on the generated client (tests/clients/test_generated_clients.py runs both against
# a real gateway). Downloads: openapi-generator-cli from Maven Central (cached in .local/clients), the
# Java client's dependencies (Maven), openapi-python-client from PyPI in its own venv.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

OUT=.local/clients
GENERATOR_VERSION=7.25.0
GENERATOR_JAR=$OUT/openapi-generator-cli-$GENERATOR_VERSION.jar
PY_VENV=$OUT/pyclient-venv
PY_SPEC='openapi-python-client>=0.29,<0.30'
PYTHON=${PYTHON:-python3.11}
mkdir -p "$OUT"

for tool in java mvn; do
    command -v "$tool" >/dev/null || { echo "$tool not found: install a JDK 17+ and Maven" >&2; exit 1; }
done

if [ ! -f "$GENERATOR_JAR" ]; then
    echo "[clients] downloading org.openapitools:openapi-generator-cli:$GENERATOR_VERSION (Maven Central)"
    mvn -q -B org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
        -Dartifact="org.openapitools:openapi-generator-cli:$GENERATOR_VERSION" \
        -DoutputDirectory="$OUT"
fi

echo "[clients] Java client (openapi-generator $GENERATOR_VERSION, -g java --library native)"
rm -rf "$OUT/java"
java -jar "$GENERATOR_JAR" generate -i docs/openapi.yaml -g java --library native -o "$OUT/java" \
    --additional-properties=invokerPackage=org.evidencechain.client,apiPackage=org.evidencechain.client.api,modelPackage=org.evidencechain.client.model,hideGenerationTimestamp=true \
    >"$OUT/java-generate.log" 2>&1 || { tail -40 "$OUT/java-generate.log" >&2; exit 1; }

echo "[clients] building the Java check program on it (tests/clients/java)"
mvn -q -B -f tests/clients/java/pom.xml -Dclient.dir="$PWD/$OUT/java" package -DskipTests

if [ ! -f "$PY_VENV/.installed-stamp" ]; then
    "$PYTHON" -m venv "$PY_VENV"
    "$PY_VENV/bin/python" -m pip install --quiet "$PY_SPEC" 'python-dateutil>=2.8,<3'
    touch "$PY_VENV/.installed-stamp"
fi
echo "[clients] Python client (openapi-python-client)"
rm -rf "$OUT/python"
"$PY_VENV/bin/openapi-python-client" generate --path docs/openapi.yaml --meta none \
    --output-path "$OUT/python/evidence_chain_client" >"$OUT/python-generate.log" 2>&1 \
    || { tail -40 "$OUT/python-generate.log" >&2; exit 1; }
for operation in lookup check search entry; do
    [ -f "$OUT/python/evidence_chain_client/api/agent/$operation.py" ] \
        || { echo "openapi-python-client generated no $operation operation" >&2; cat "$OUT/python-generate.log" >&2; exit 1; }
done
echo "[clients] generated in $OUT/java and $OUT/python"
