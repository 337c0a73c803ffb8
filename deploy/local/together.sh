#!/usr/bin/env bash
# Runs commands at the same time, for `make test` on two cores: a step that leaves a core idle (a
# wheel build, a download) runs beside one that does not.
#
#   deploy/local/together.sh 'FIRST COMMAND' 'OTHER COMMAND' ...
#
# The first command's output goes straight through; each other command writes to a log of its own
# (.local/together/N.log), printed whole when that command has ended and the first one too, so no two
# outputs interleave. Then a table: each command, its seconds and its exit status. Exits 1 when any
# command failed, after all have ended (none is stopped early: each failure is reported).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=deploy/local/lib.sh
source "$here/lib.sh"

(($# >= 1)) || {
    sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

logs="$LOCAL_DIR/together"
mkdir -p "$logs"
commands=("$@")
declare -a pids
start_all=$SECONDS

# Each command leaves "STATUS SECONDS" in N.status when it ends.
run_one() {
    local n=$1 t0=$SECONDS rc=0
    bash -c "${commands[n]}" || rc=$?
    printf '%s %s\n' "$rc" "$((SECONDS - t0))" >"$logs/$n.status"
    return "$rc"
}

rm -f "$logs"/*.status "$logs"/*.log
for ((n = 1; n < ${#commands[@]}; n++)); do
    run_one "$n" >"$logs/$n.log" 2>&1 &
    pids[n]=$!
done
run_one 0 || true
for ((n = 1; n < ${#commands[@]}; n++)); do
    wait "${pids[n]}" || true
    printf '\n[together] output of: %s\n' "${commands[n]}"
    cat "$logs/$n.log"
done

failed=0
printf '\n[together] %-7s %-6s %s\n' seconds status command
for ((n = 0; n < ${#commands[@]}; n++)); do
    read -r rc seconds <"$logs/$n.status" || { rc=1 seconds=?; }
    printf '[together] %-7s %-6s %s\n' "$seconds" "$rc" "${commands[n]}"
    [[ $rc == 0 ]] || failed=1
done
printf '[together] %s s in all\n' "$((SECONDS - start_all))"
exit "$failed"
