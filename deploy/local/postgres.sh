# Local PostgreSQL from Debian's postgresql package, for the audit sink's PostgreSQL backend and its tests.
# Sourced by stack.sh after lib.sh; defines postgres_up, postgres_down, postgres_status.
#
# Started only on request (`make up-postgres`, or `make up` with EC_STACK_POSTGRES=1), so a plain `make up`
# stays as fast as before. The cluster lives in .local/postgres/data, listens on 127.0.0.1 only (no Unix
# socket), on 5432 or, when that port is taken, the next free one; the port and a DSN with a generated
# password are written to .local/postgres/port and .local/postgres/dsn (mode 0600), which the tests read.
# PostgreSQL refuses to run as root: as root the cluster runs as the `postgres` system user the package
# creates; as anyone else, as that user.
# shellcheck shell=bash

PG_HOST=127.0.0.1
PG_PORT_FIRST=${EC_STACK_POSTGRES_PORT:-5432}
PG_READY_TIMEOUT_S=${PG_READY_TIMEOUT_S:-60}
PG_STOP_TIMEOUT_S=${PG_STOP_TIMEOUT_S:-30}
PG_ROLE=ec

PG_HOME="$LOCAL_DIR/postgres"
PG_DATA="$PG_HOME/data"
PG_LOG="$PG_HOME/postgres.log"
PG_PORT_FILE="$PG_HOME/port"
PG_DSN_FILE="$PG_HOME/dsn"
PG_PASSWORD_FILE="$PG_HOME/password"

# postgres_bindir: the newest /usr/lib/postgresql/<version>/bin (Debian keeps the server off PATH), else
# the directory of an initdb on PATH; empty when there is none.
postgres_bindir() {
    local dir
    dir=$(compgen -G "/usr/lib/postgresql/*/bin/postgres" | sort -V | tail -n1) || true
    if [[ -n $dir ]]; then
        printf '%s\n' "${dir%/postgres}"
        return 0
    fi
    dir=$(command -v initdb 2>/dev/null) || return 0
    printf '%s\n' "$(dirname "$(readlink -f "$dir")")"
}

postgres_install() {
    PG_BIN=$(postgres_bindir)
    [[ -n $PG_BIN ]] && return 0
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
        log "postgres: no PostgreSQL server found; installing Debian package postgresql"
        if [[ -z ${_EC_APT_UPDATED:-} ]]; then
            DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || die "apt-get update failed"
            _EC_APT_UPDATED=1
        fi
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null \
            || die "apt-get install postgresql failed; install it yourself and retry"
        INSTALLED_PKGS+=(postgresql)
        PG_BIN=$(postgres_bindir)
    fi
    [[ -n $PG_BIN ]] \
        || die "no PostgreSQL server found: install it (Debian/Ubuntu: sudo apt-get install postgresql) and retry"
}

# as_owner CMD...: run CMD as the user that owns the cluster (postgres when we are root).
as_owner() {
    if [[ $(id -u) -eq 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

postgres_port() {
    [[ -s $PG_PORT_FILE ]] && cat "$PG_PORT_FILE"
}

# postgres_pid: the postmaster's pid when this checkout's cluster runs (postmaster.pid, checked against
# /proc so a stale file whose pid was reused is not taken for it).
postgres_pid() {
    local pid
    [[ -r $PG_DATA/postmaster.pid ]] || return 1
    pid=$(head -n1 "$PG_DATA/postmaster.pid" 2>/dev/null) || return 1
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    [[ $(cmdline_of "$pid") == *"$PG_DATA"* ]] || return 1
    printf '%s\n' "$pid"
}

postgres_probe() {
    local port
    port=$(postgres_port) || return 1
    "$PG_BIN/pg_isready" -q -h "$PG_HOST" -p "$port" -t 5 >/dev/null 2>&1
}

# postgres_free_port: the first port from PG_PORT_FIRST on that nothing listens on.
postgres_free_port() {
    local port
    for ((port = PG_PORT_FIRST; port < PG_PORT_FIRST + 50; port++)); do
        if ! port_open "$PG_HOST" "$port"; then
            printf '%s\n' "$port"
            return 0
        fi
    done
    die "no free port in $PG_HOST:$PG_PORT_FIRST-$((PG_PORT_FIRST + 49)) for PostgreSQL; set EC_STACK_POSTGRES_PORT"
}

postgres_init() {
    [[ -f $PG_DATA/PG_VERSION ]] && return 0
    mkdir -p "$PG_HOME"
    chmod 0755 "$PG_HOME"
    if [[ $(id -u) -eq 0 ]]; then
        id postgres >/dev/null 2>&1 \
            || die "PostgreSQL refuses to run as root and there is no 'postgres' user; install the postgresql package or run as a non-root user"
        runuser -u postgres -- test -x "$PG_HOME" \
            || die "the postgres user cannot reach $PG_HOME (a parent directory is not searchable by others); chmod o+x the parents, or run as a non-root user"
    fi
    if [[ ! -s $PG_PASSWORD_FILE ]]; then
        (umask 077 && od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$PG_PASSWORD_FILE")
    fi
    log "postgres: creating a cluster in ${PG_DATA#"$REPO_ROOT"/} (role $PG_ROLE, scram-sha-256 on $PG_HOST)"
    rm -rf "$PG_DATA"
    mkdir -p "$PG_DATA"
    # initdb runs as the cluster's owner, who must read the password file: a copy only it can read.
    local pwfile="$PG_HOME/.initdb-password"
    install -m 0600 "$PG_PASSWORD_FILE" "$pwfile"
    if [[ $(id -u) -eq 0 ]]; then
        chown postgres: "$PG_DATA" "$pwfile"
    fi
    if ! as_owner "$PG_BIN/initdb" -D "$PG_DATA" --username="$PG_ROLE" --pwfile="$pwfile" \
        --auth=scram-sha-256 --encoding=UTF8 --no-locale --no-instructions >"$PG_HOME/initdb.log" 2>&1; then
        rm -f "$pwfile"
        tail_log "$PG_HOME/initdb.log"
        die "initdb failed (full output: $PG_HOME/initdb.log); 'make clean' resets .local state, then retry"
    fi
    rm -f "$pwfile"
}

postgres_write_dsn() {
    local port=$1
    printf '%s\n' "$port" >"$PG_PORT_FILE"
    (umask 077 && printf 'postgresql://%s:%s@%s:%s/postgres\n' "$PG_ROLE" "$(<"$PG_PASSWORD_FILE")" \
        "$PG_HOST" "$port" >"$PG_DSN_FILE")
}

postgres_shown_dsn() {
    printf 'postgresql://%s:****@%s:%s/postgres' "$PG_ROLE" "$PG_HOST" "$(postgres_port)"
}

postgres_up() {
    if [[ -n ${EC_TEST_POSTGRES_DSN:-} ]]; then
        log "postgres: EC_TEST_POSTGRES_DSN is set; using that server, starting nothing"
        return 0
    fi
    postgres_install
    local pid port t0=$SECONDS
    if pid=$(postgres_pid); then
        postgres_probe || die "PostgreSQL (pid $pid) runs but does not answer on $PG_HOST:$(postgres_port); see $PG_LOG, then 'make down && make up-postgres'"
        log "postgres: already running (pid $pid) on $PG_HOST:$(postgres_port)"
        return 0
    fi
    postgres_init
    port=$(postgres_free_port)
    postgres_write_dsn "$port"
    if [[ $(id -u) -eq 0 ]]; then
        touch "$PG_LOG"
        chown postgres: "$PG_LOG"
    fi
    # Settings on the command line, not in postgresql.conf: the port may change from one start to the next.
    if ! as_owner "$PG_BIN/pg_ctl" start -D "$PG_DATA" -l "$PG_LOG" -w -t "$PG_READY_TIMEOUT_S" \
        -o "-c listen_addresses=$PG_HOST -p $port -c unix_socket_directories='' -c max_connections=200" \
        >"$PG_HOME/pg_ctl.log" 2>&1; then
        tail_log "$PG_LOG"
        die "PostgreSQL did not start on $PG_HOST:$port within ${PG_READY_TIMEOUT_S}s; see $PG_LOG"
    fi
    postgres_probe || die "PostgreSQL started but does not answer on $PG_HOST:$port; see $PG_LOG"
    log "postgres: ready on $PG_HOST:$port (pid $(postgres_pid), $((SECONDS - t0))s); DSN in ${PG_DSN_FILE#"$REPO_ROOT"/}"
}

postgres_down() {
    local pid
    if ! pid=$(postgres_pid); then
        log "postgres: not running"
        return 0
    fi
    PG_BIN=${PG_BIN:-$(postgres_bindir)}
    log "stopping postgres (pid $pid)"
    # A fast shutdown rolls back open transactions and checkpoints; SIGKILL only if it hangs.
    if ! as_owner "$PG_BIN/pg_ctl" stop -D "$PG_DATA" -m fast -w -t "$PG_STOP_TIMEOUT_S" >/dev/null 2>&1; then
        warn "pg_ctl stop did not finish within ${PG_STOP_TIMEOUT_S}s"
        stop_pids postgres 5 "$pid"
    fi
}

postgres_status() {
    if [[ -n ${EC_TEST_POSTGRES_DSN:-} ]]; then
        log "postgres: external, EC_TEST_POSTGRES_DSN is set"
        return 0
    fi
    local pid
    if ! pid=$(postgres_pid); then
        if [[ ${EC_STACK_POSTGRES:-} == 1 ]]; then
            log "postgres: stopped"
            return 3
        fi
        log "postgres: stopped (started only on request: make up-postgres, or EC_STACK_POSTGRES=1 make up)"
        return 0
    fi
    PG_BIN=${PG_BIN:-$(postgres_bindir)}
    if postgres_probe; then
        log "postgres: running, $("$PG_BIN/postgres" --version | grep -o '[0-9][0-9.]*' | head -n1), pid $pid, $(postgres_shown_dsn), answering"
    else
        log "postgres: process $pid is up but $PG_HOST:$(postgres_port) does not answer (see $PG_LOG)"
        return 1
    fi
}
