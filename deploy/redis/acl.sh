#!/usr/bin/env bash
# Render deploy/redis/users.acl (the Redis users of evidence-chain) for one Redis version.
#
#   acl.sh users                        the user names, one a line
#   acl.sh rules USER VERSION NS...     USER's rules for Redis VERSION (7.0.15, 7.4) and key
#                                       namespaces NS (EC_NS values; a glob such as demo-* works), on
#                                       one line, without a password: append >password for ACL SETUSER
#   acl.sh aclfile VERSION DIR NS...    an aclfile's `user` lines for every user, each with the SHA-256
#                                       of DIR/<user>.password (the plain password never enters it)
#
# Reads users.acl beside this script, or $EC_REDIS_ACL_RULES. See the comments there.
set -euo pipefail

rules_file=${EC_REDIS_ACL_RULES:-"$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/users.acl"}

die() {
    printf 'acl.sh: %s\n' "$*" >&2
    exit 2
}

usage() {
    sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

# version_number 7.0.15 -> 700 (major * 100 + minor)
version_number() {
    [[ $1 =~ ^([0-9]+)\.([0-9]+) ]] || die "not a Redis version: '$1' (expected e.g. 7.0.15 or 7.4)"
    printf '%d\n' $((BASH_REMATCH[1] * 100 + BASH_REMATCH[2]))
}

# applies CONDITION VERSION_NUMBER: true when a line's version column covers the server.
applies() {
    local condition=$1 have=$2
    case $condition in
        all) return 0 ;;
        '>='*) ((have >= $(version_number "${condition#>=}"))) ;;
        '<'*) ((have < $(version_number "${condition#<}"))) ;;
        *) die "$rules_file: unknown version condition '$condition' (all, >=X.Y, <X.Y)" ;;
    esac
}

cmd_users() {
    awk '!/^[[:space:]]*(#|$)/ { print $1 }' "$rules_file" | awk '!seen[$0]++'
}

cmd_rules() {
    (($# >= 3)) || usage
    local user=$1 have ns name condition rule out=()
    have=$(version_number "$2")
    shift 2
    for ns in "$@"; do
        [[ $ns =~ ^[A-Za-z0-9._*-]+$ ]] || die "not a key namespace: '$ns'"
    done
    cmd_users | grep -qxF "$user" || die "no user '$user' in $rules_file"
    while read -r name condition rest; do
        [[ -z $name || $name == \#* || $name != "$user" ]] && continue
        applies "$condition" "$have" || continue
        read -ra words <<<"$rest"
        for rule in "${words[@]}"; do
            if [[ $rule == *'{ns}'* ]]; then
                for ns in "$@"; do out+=("${rule//\{ns\}/$ns}"); done
            else
                out+=("$rule")
            fi
        done
    done <"$rules_file"
    [[ ${out[0]:-} == reset ]] || die "$rules_file: the first line of '$user' must start with 'reset'"
    printf '%s\n' "${out[*]}"
}

cmd_aclfile() {
    (($# >= 3)) || usage
    local version=$1 dir=$2 user password hash
    shift 2
    while read -r user; do
        [[ -s $dir/$user.password ]] || die "no password file $dir/$user.password"
        password=$(<"$dir/$user.password")
        hash=$(printf '%s' "$password" | sha256sum | cut -d' ' -f1)
        printf 'user %s %s #%s\n' "$user" "$(cmd_rules "$user" "$version" "$@")" "$hash"
    done < <(cmd_users)
}

(($# >= 1)) || usage
[[ -r $rules_file ]] || die "cannot read $rules_file"
command=$1
shift
case $command in
    users) cmd_users ;;
    rules) cmd_rules "$@" ;;
    aclfile) cmd_aclfile "$@" ;;
    *) usage ;;
esac
