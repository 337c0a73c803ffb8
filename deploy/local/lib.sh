# Shared helpers for deploy/local/*.sh. Sourced, not run.
# shellcheck shell=bash

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck disable=SC2034  # used by the scripts that source this one
LOCAL_DIR="$REPO_ROOT/.local"

log() { printf '[stack] %s\n' "$*"; }
warn() { printf '[stack] WARNING: %s\n' "$*" >&2; }
die() {
    printf '[stack] ERROR: %s\n' "$*" >&2
    exit 1
}

# port_open HOST PORT: true when something accepts TCP connections there.
port_open() {
    (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

# pid_alive PIDFILE MARKER: print the pid and succeed when the pid in PIDFILE is alive and its command
# line contains MARKER (guards against a stale pid file whose pid was reused by another program).
pid_alive() {
    local pidfile=$1 marker=$2 pid
    [[ -s $pidfile ]] || return 1
    pid=$(<"$pidfile")
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    [[ $(cmdline_of "$pid") == *"$marker"* ]] || return 1
    printf '%s\n' "$pid"
}

# cmdline_of PID: the process's command line with spaces for NULs (empty when it is gone).
cmdline_of() {
    tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" || true
}

# pids_with_arg MARKER: pids of processes whose command line contains MARKER. MARKER is always a path
# under this checkout's .local/, so this only ever finds processes this script started.
pids_with_arg() {
    local marker=$1 d pid
    for d in /proc/[0-9]*; do
        pid=${d#/proc/}
        [[ $pid == "$$" || $pid == "$BASHPID" ]] && continue
        [[ $(cmdline_of "$pid") == *"$marker"* ]] && printf '%s\n' "$pid"
    done
    return 0
}

# stop_pids NAME TIMEOUT_S PID...: SIGTERM, wait up to TIMEOUT_S for exit, then SIGKILL and wait.
stop_pids() {
    local name=$1 timeout_s=$2
    shift 2
    local pids=("$@") pid deadline alive
    ((${#pids[@]})) || return 0
    log "stopping $name (pid ${pids[*]})"
    kill -TERM "${pids[@]}" 2>/dev/null || true
    deadline=$((SECONDS + timeout_s))
    while :; do
        alive=()
        for pid in "${pids[@]}"; do
            kill -0 "$pid" 2>/dev/null && alive+=("$pid")
        done
        ((${#alive[@]})) || break
        if ((SECONDS >= deadline)); then
            warn "$name did not exit within ${timeout_s}s; sending SIGKILL to ${alive[*]}"
            kill -KILL "${alive[@]}" 2>/dev/null || true
            sleep 0.5
            pids=("${alive[@]}")
            deadline=$((SECONDS + 10))
            timeout_s=0
            continue
        fi
        sleep 0.3
    done
}

# ensure_cmd CMD DEBIAN_PACKAGE: install the package with apt-get when CMD is missing (root only).
ensure_cmd() {
    local cmd=$1 pkg=$2
    command -v "$cmd" >/dev/null 2>&1 && return 0
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
        log "$cmd not found; installing Debian package $pkg"
        if [[ -z ${_EC_APT_UPDATED:-} ]]; then
            DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || die "apt-get update failed"
            _EC_APT_UPDATED=1
        fi
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null \
            || die "apt-get install $pkg failed; install it yourself and retry"
        command -v "$cmd" >/dev/null 2>&1 || die "$pkg is installed but $cmd is still not on PATH"
        INSTALLED_PKGS+=("$pkg")
    else
        die "$cmd not found: install $pkg (Debian/Ubuntu: sudo apt-get install $pkg) and retry"
    fi
}
INSTALLED_PKGS=()

# tail_log FILE: the last lines of a log, for error messages.
tail_log() {
    local file=$1 n=${2:-40}
    if [[ -s $file ]]; then
        printf -- '----- last %s lines of %s -----\n' "$n" "$file" >&2
        tail -n "$n" "$file" >&2
        printf -- '-----\n' >&2
    fi
}
