#!/usr/bin/env bash
# `make run`: the real workers on the bundled sample (deploy/sample), outcome shown as tables.
#
# As deployed (deploy/k8s, docker-compose.yml; docs/security.md): two workers, each holding only what
# it needs. The chain (postprocess, project, ledger) logs in to Redis as ec-ledger and signs entries
# with .local/keys/ledger.key; the guard logs in as ec-guard (it reads the ledger and keeps its report
# claims) and signs verdicts with .local/keys/guard.key; every process trusts both public keys (.local/keys/trusted.keys), each in its
# role: entries verify only under the ledger key, verdicts only under the guard's (SPEC 3.7). The keys
# and users are made by `make up` (deploy/local/keys.sh, redis.sh), and here again if missing.
# EC_REDIS_URL set in the environment: that Redis, as that user, for everything.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=deploy/local/lib.sh
source "$here/lib.sh"
# shellcheck source=deploy/local/keys.sh
source "$here/keys.sh"
cd "$REPO_ROOT"

keys_up required
run_dir="$LOCAL_DIR/run"
(
    umask 077
    mkdir -p "$run_dir"
)
chain_env="$run_dir/chain.env"
guard_env="$run_dir/guard.env"
users="$LOCAL_DIR/redis/users"
(
    umask 077
    {
        echo "# The chain worker's own settings (deploy/local/run.sh writes this file on every run)."
        echo "EC_SIGNING_KEY_FILE=$KEYS_DIR/ledger.key"
    } >"$chain_env"
    {
        echo "# The guard worker's own settings (deploy/local/run.sh writes this file on every run)."
        echo "EC_SIGNING_KEY_FILE=$KEYS_DIR/guard.key"
    } >"$guard_env"
    if [[ -z ${EC_REDIS_URL:-} ]]; then
        [[ -s $users/ec-ledger.url && -s $users/ec-guard.url && -s $users/ec-reader.url ]] \
            || die "no Redis users in ${users#"$REPO_ROOT"/}: run 'make up' first"
        echo "EC_REDIS_URL=$(<"$users/ec-ledger.url")" >>"$chain_env"
        echo "EC_REDIS_URL=$(<"$users/ec-guard.url")" >>"$guard_env"
    fi
)
if [[ -z ${EC_REDIS_URL:-} ]]; then
    # The demo itself and its agent loop only read the ledger.
    EC_REDIS_URL=$(<"$users/ec-reader.url")
    export EC_REDIS_URL
fi
export EC_TRUSTED_KEYS_FILE="$TRUSTED_KEYS"
unset EC_SIGNING_KEY_FILE
exec .venv/bin/evidence-chain demo --chain-env "$chain_env" --guard-env "$guard_env" "$@"
