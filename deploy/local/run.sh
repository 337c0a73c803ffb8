#!/usr/bin/env bash
# `make run`: the stations end to end on the sample input, once the CLI exists.
# Placeholder until the CLI lands: it will start the worker against the local stack and publish samples.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

sample=deploy/sample/raw-hits.jsonl
if ! .venv/bin/python -c 'import streams.cli' 2>/dev/null || [[ ! -f $sample ]]; then
    echo "make run: not yet wired (needs streams/cli.py and $sample)"
    exit 0
fi
exec .venv/bin/evidence-chain pipe <"$sample"
