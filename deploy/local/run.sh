#!/usr/bin/env bash
# `make run`: the real workers on the bundled sample (deploy/sample), outcome shown as tables.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
exec .venv/bin/evidence-chain demo "$@"
