#!/usr/bin/env bash
# The local stack: one Kafka broker (KRaft) and one Redis, all state under .local/; PostgreSQL on request.
#
#   deploy/local/stack.sh up           start what is not running, wait until it answers (idempotent);
#                                      PostgreSQL too when EC_STACK_POSTGRES=1; Redis's users and the
#                                      dev signing keys are made when missing (docs/security.md)
#   deploy/local/stack.sh up-postgres  start only PostgreSQL (for the audit sink's PostgreSQL backend)
#   deploy/local/stack.sh up-cluster   start a three-broker Kafka cluster on 127.0.0.1:19092,19094,19096
#                                      beside the single broker (min.insync.replicas=2); starts only the
#                                      nodes that are not running, then waits for all three
#   deploy/local/stack.sh up-cluster-node N   start node N (1-3) of it if it is down and wait for it
#   deploy/local/stack.sh down-cluster stop the three-broker cluster
#   deploy/local/stack.sh up-sentinel  start a Redis that fails over: a primary (127.0.0.1:6380), a replica
#                                      (6381) and three Sentinels (26379-26381, master name ec-ledger);
#                                      starts what is down (a node back joins the current primary)
#   deploy/local/stack.sh down-sentinel stop it (sentinels first)
#   deploy/local/stack.sh down         stop everything; waits for exit, SIGKILL after a timeout
#   deploy/local/stack.sh status       show what runs; exit 0 when all answer, 3 when something is stopped
#   deploy/local/stack.sh clean        down, then delete .local state except downloads (jars, tool venv)
#
# EC_KAFKA_BOOTSTRAP / EC_REDIS_URL / EC_TEST_POSTGRES_DSN set in the environment: that service is
# external, nothing is started. See docs/local-stack.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=deploy/local/lib.sh
source "$here/lib.sh"
# shellcheck source=deploy/local/kafka.sh
source "$here/kafka.sh"
# shellcheck source=deploy/local/cluster.sh
source "$here/cluster.sh"
# shellcheck source=deploy/local/redis.sh
source "$here/redis.sh"
# shellcheck source=deploy/local/sentinel.sh
source "$here/sentinel.sh"
# shellcheck source=deploy/local/postgres.sh
source "$here/postgres.sh"
# shellcheck source=deploy/local/keys.sh
source "$here/keys.sh"

usage() {
    sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

cmd_up() {
    mkdir -p "$LOCAL_DIR"
    redis_up
    kafka_up
    if [[ ${EC_STACK_POSTGRES:-} == 1 ]]; then
        postgres_up
    fi
    keys_up
}

cmd_down() {
    cluster_down
    kafka_down
    sentinel_down
    redis_down
    postgres_down
}

cmd_status() {
    local rc=0 r
    kafka_status || { r=$?; ((r > rc)) && rc=$r; }
    cluster_status || { r=$?; ((r > rc)) && rc=$r; }
    redis_status || { r=$?; ((r > rc)) && rc=$r; }
    sentinel_status || { r=$?; ((r > rc)) && rc=$r; }
    postgres_status || { r=$?; ((r > rc)) && rc=$r; }
    return "$rc"
}

cmd_clean() {
    cmd_down
    [[ -d $LOCAL_DIR ]] || return 0
    log "removing .local state (keeping downloads: kafka/libs, maven, tools-venv)"
    find "$LOCAL_DIR" -mindepth 1 -maxdepth 1 ! -name kafka ! -name maven ! -name tools-venv -exec rm -rf {} +
    if [[ -d $LOCAL_DIR/kafka ]]; then
        find "$LOCAL_DIR/kafka" -mindepth 1 -maxdepth 1 ! -name libs -exec rm -rf {} +
    fi
}

if [[ ${1:-} == up-cluster-node ]]; then
    (($# == 2)) && [[ $2 =~ ^[123]$ ]] || usage
    cluster_node_up "$2"
    exit 0
fi
(($# == 1)) || usage
case $1 in
    up) cmd_up ;;
    up-postgres)
        mkdir -p "$LOCAL_DIR"
        postgres_up
        ;;
    up-cluster)
        mkdir -p "$LOCAL_DIR"
        cluster_up
        ;;
    down-cluster) cluster_down ;;
    up-sentinel)
        mkdir -p "$LOCAL_DIR"
        sentinel_up
        ;;
    down-sentinel) sentinel_down ;;
    down) cmd_down ;;
    status) cmd_status ;;
    clean) cmd_clean ;;
    -h | --help | help) usage ;;
    *) usage ;;
esac
