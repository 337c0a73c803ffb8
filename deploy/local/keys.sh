# Development signing keys (SPEC 3.7, 4.1) under .local/keys, made with `evidence-chain keys generate`.
# Sourced by stack.sh and run.sh after lib.sh; defines keys_up.
#
#   .local/keys/ledger.key   the ledger agent's private key (EC_SIGNING_KEY_FILE of the ledger worker)
#   .local/keys/guard.key    the guard's private key (EC_SIGNING_KEY_FILE of the guard worker)
#   .local/keys/*.pub        their public keys, each a role-named line (`ledger <hex>`, `guard <hex>`)
#   .local/keys/trusted.keys both public keys, then retired.keys if present (old public keys kept
#                            trusted after a rotation, each line `<role> <hex>` too):
#                            EC_TRUSTED_KEYS_FILE of every process
# Keys have roles (SPEC 3.7): entries verify only under the ledger key, verdicts only under the guard
# key. A checkout made before roles has bare hex lines in ledger.pub and guard.pub: keys_up rewrites
# them with the role their file name says (the key itself is unchanged), so `make up` keeps working.
# Each worker gets only its own private key; everything reads the trusted keys. Dev keys only:
# deploy/k8s and docker-compose.yml take theirs from secrets (docs/security.md).
# shellcheck shell=bash

KEYS_DIR="$LOCAL_DIR/keys"
KEY_NAMES=(ledger guard)
TRUSTED_KEYS="$KEYS_DIR/trusted.keys"

# keys_with_role FILE ROLE: rewrite FILE's bare 64-hex lines (written before keys had roles) as
# `ROLE <hex>`, in place and atomically; a file already role-named is left as it is.
keys_with_role() {
    local file=$1 role=$2
    grep -qE '^[[:space:]]*[0-9a-fA-F]{64}[[:space:]]*$' "$file" || return 0
    sed -E "s/^[[:space:]]*([0-9a-fA-F]{64})[[:space:]]*\$/$role \1/" "$file" >"$file.tmp"
    chmod 644 "$file.tmp"
    mv "$file.tmp" "$file"
    log "signing keys: ${file#"$REPO_ROOT"/} named its key's role ($role), as keys now must (SPEC 3.7)"
}

# keys_up [required]: make the missing key pairs and rewrite trusted.keys. Without the project's CLI
# (no .venv yet: `make install`) it warns and returns, unless "required" (run.sh) makes that fatal.
keys_up() {
    local cli="$REPO_ROOT/.venv/bin/evidence-chain" name made=()
    if [[ ! -x $cli ]] || ! "$cli" keys generate --help >/dev/null 2>&1; then
        [[ ${1:-} == required ]] && die "signing keys: $cli has no 'keys generate'; run 'make install'"
        warn "signing keys: no $cli with 'keys generate' yet ('make install'); not made, workers would run unsigned"
        return 0
    fi
    (
        umask 077
        mkdir -p "$KEYS_DIR"
    )
    chmod 700 "$KEYS_DIR"
    for name in "${KEY_NAMES[@]}"; do
        if [[ -e $KEYS_DIR/$name.key ]]; then
            [[ -s $KEYS_DIR/$name.pub ]] \
                || die "signing keys: $KEYS_DIR/$name.key has no $name.pub beside it; delete the .key to make a new pair"
            keys_with_role "$KEYS_DIR/$name.pub" "$name"
            continue
        fi
        [[ -e $KEYS_DIR/$name.pub ]] && rm -f "$KEYS_DIR/$name.pub" # a public key without its private one
        "$cli" keys generate "$KEYS_DIR" --role "$name" --name "$name" >/dev/null \
            || die "signing keys: 'evidence-chain keys generate $KEYS_DIR --role $name --name $name' failed"
        made+=("$name")
    done
    if [[ -s $KEYS_DIR/retired.keys ]] && grep -qE '^[[:space:]]*[0-9a-fA-F]{64}[[:space:]]*(#.*)?$' "$KEYS_DIR/retired.keys"; then
        die "signing keys: $KEYS_DIR/retired.keys has a key without its role; prefix each line with \`ledger \` or \`guard \` (what the retired key signed)"
    fi
    {
        printf '# Trusted public keys of the local stack (deploy/local/keys.sh rewrites this file).\n'
        for name in "${KEY_NAMES[@]}"; do
            cat "$KEYS_DIR/$name.pub"
        done
        if [[ -s $KEYS_DIR/retired.keys ]]; then
            printf '# Retired keys, still trusted so that older entries and receipts verify (retired.keys).\n'
            cat "$KEYS_DIR/retired.keys"
        fi
    } >"$TRUSTED_KEYS.tmp"
    chmod 644 "$TRUSTED_KEYS.tmp"
    mv "$TRUSTED_KEYS.tmp" "$TRUSTED_KEYS"
    if ((${#made[@]})); then
        log "signing keys: made ${made[*]} in ${KEYS_DIR#"$REPO_ROOT"/}/ (dev only); trusted keys in ${TRUSTED_KEYS#"$REPO_ROOT"/}"
    else
        log "signing keys: ${KEY_NAMES[*]} in ${KEYS_DIR#"$REPO_ROOT"/}/; trusted keys in ${TRUSTED_KEYS#"$REPO_ROOT"/}"
    fi
}
