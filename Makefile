# Developer entry points. `make test` is what CI runs (.ci/run). See docs/local-stack.md.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
# Targets run in the order given even under `make -j`.
.NOTPARALLEL:

PYTHON ?= python3.11
VENV := .venv
VENV_PY := $(VENV)/bin/python
INSTALL_STAMP := $(VENV)/.installed-stamp
STACK := deploy/local/stack.sh

# check-jsonschema lives in its own venv: it needs click >= 8.5, which faust-streaming does not accept.
TOOLS_VENV := .local/tools-venv
TOOLS_STAMP := $(TOOLS_VENV)/.installed-stamp
CHECK_JSONSCHEMA_SPEC := check-jsonschema>=0.33,<1

.PHONY: help venv install install-check up up-postgres up-cluster down-cluster up-sentinel down-sentinel browser netns-tools prometheus down status check lint typecheck compose-check test unit smoke smoke-steps run bench clean distclean

help:
	@echo 'make install    create .venv ($(PYTHON)) and pip install -e ".[dev]" (again only when pyproject.toml changes)'
	@echo 'make up         start the local stack: Kafka on 127.0.0.1:9092, Redis on 127.0.0.1:6379'
	@echo '                (and PostgreSQL too with EC_STACK_POSTGRES=1); Redis users and dev signing'
	@echo '                keys under .local/ when missing (docs/security.md)'
	@echo 'make up-postgres start PostgreSQL for the audit tests (Debian package; 127.0.0.1:5432 or next free)'
	@echo 'make up-cluster start a three-broker Kafka cluster (KRaft) on 127.0.0.1:19092,19094,19096 beside'
	@echo '                the single broker: min.insync.replicas=2; use EC_TOPIC_REPLICATION_FACTOR=3'
	@echo 'make down-cluster stop the three-broker cluster'
	@echo 'make up-sentinel start a Redis that fails over: primary 127.0.0.1:6380, replica 6381, three'
	@echo '                Sentinels on 26379-26381 (master name ec-ledger); set EC_REDIS_SENTINELS to use it'
	@echo 'make down-sentinel stop the Sentinel-managed Redis'
	@echo 'make browser    install Debian chromium + chromium-driver for the browser tests if missing'
	@echo 'make prometheus install Debian prometheus (promtool and the server) for the alert tests if missing'
	@echo 'make status     show the local stack'
	@echo 'make down       stop the local stack'
	@echo 'make check      ruff, mypy, docker-compose.yml schema, topic contracts, docs/openapi.yaml'
	@echo 'make openapi    bundle docs/openapi.source.yaml with the models into docs/openapi.yaml (edit the source)'
	@echo 'make clients-check generate Java and Python clients from docs/openapi.yaml and run them on a gateway'
	@echo 'make install-check build the wheel and sdist, install the wheel (no extras) in a clean venv, run it'
	@echo 'make test       install + up + up-postgres + browser + check + install-check + the whole pytest suite,'
	@echo '                the smoke runs of the benchmarks and the generated clients (CI); steps that leave a'
	@echo '                core idle run beside one that does not (deploy/local/together.sh)'
	@echo 'make smoke      the smoke runs of the benchmarks (tiny sizes: every figure and path still runs)'
	@echo 'make unit       the tests that need no service (rules, fakes, CLI, contracts), two at a time'
	@echo 'make run        install + up, then deploy/local/run.sh (chain and guard workers, each with its own key and Redis user)'
	@echo 'make run-mcp    the agent loop through evidence-chain mcp only (a scripted model, a py-rag stand-in)'
	@echo 'make bench      station CPU vs orjson, then the stream figures into BENCHMARKS.md (needs the stack)'
	@echo 'make clean      down, then delete .local state except downloads'
	@echo 'make distclean  down, then delete .local, .venv and caches'

venv: $(VENV_PY)

$(VENV_PY):
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found: install Python 3.11 or run 'make PYTHON=/path/to/python3.11 ...'" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)

# The project's own modules are compiled to bytecode here: an editable install leaves them as source, and
# with PYTHONDONTWRITEBYTECODE=1 (as on this project's build machines) every process would compile them again,
# ~0.15 CPU-s for each of the hundreds of workers and commands the tests start.
install: $(INSTALL_STAMP)
	@$(VENV_PY) -m compileall -q streams models benchmarks tests deploy examples

$(INSTALL_STAMP): pyproject.toml | $(VENV_PY)
	$(VENV_PY) -m pip install --quiet -e '.[dev]'
	touch $@

up:
	$(STACK) up

# PostgreSQL for the audit sink's PostgreSQL backend and its tests; `make up` alone does not start it.
up-postgres:
	$(STACK) up-postgres

# Three KRaft brokers for the cluster fault tests (tests/faults/test_cluster.py starts it when it is down).
up-cluster:
	$(STACK) up-cluster

down-cluster:
	$(STACK) down-cluster

# A primary, a replica and three Sentinels for the Redis failover test (tests/faults/test_sentinel.py
# starts it when it is down) and for EC_REDIS_SENTINELS (docs/local-stack.md).
up-sentinel:
	$(STACK) up-sentinel

down-sentinel:
	$(STACK) down-sentinel

# tests/faults/test_network.py runs a worker in a network namespace of its own, joined by a wire of TUN
# devices (tests/faults/wire.py, as this kernel has no sch_netem): iproute2 (ip netns) and root (CI runs as root).
netns-tools:
	@if command -v ip >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo '[make] installing the Debian package iproute2 (for tests/faults/test_network.py)'; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends iproute2 >/dev/null; \
	else \
		echo 'ip not found: install iproute2 (Debian/Ubuntu: sudo apt-get install iproute2)' >&2; \
		exit 1; \
	fi

# The serve tests drive Debian's headless Chromium through chromedriver; install both when missing.
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo '[make] installing Debian packages chromium chromium-driver (for tests/integration/test_serve.py)'; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null; \
	else \
		echo 'chromium and chromedriver not found: install them (Debian/Ubuntu: sudo apt-get install chromium chromium-driver)' >&2; \
		exit 1; \
	fi

# The alert tests (tests/test_alerts.py: promtool check/test rules; tests/faults/test_alerts.py: a real
# Prometheus scraping a worker, on ports of its own) need Debian's prometheus package.
prometheus:
	@if command -v promtool >/dev/null && command -v prometheus >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo '[make] installing the Debian package prometheus (for tests/test_alerts.py, tests/faults/test_alerts.py)'; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; \
	else \
		echo 'promtool and prometheus not found: install them (Debian/Ubuntu: sudo apt-get install prometheus)' >&2; \
		exit 1; \
	fi

down:
	$(STACK) down

status:
	$(STACK) status

lint: install
	$(VENV)/bin/ruff check .

typecheck: install
	$(VENV)/bin/mypy

$(TOOLS_STAMP):
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found: install Python 3.11" >&2; exit 1; }
	$(PYTHON) -m venv $(TOOLS_VENV)
	$(TOOLS_VENV)/bin/python -m pip install --quiet '$(CHECK_JSONSCHEMA_SPEC)'
	touch $@

compose-check: $(TOOLS_STAMP)
	$(TOOLS_VENV)/bin/check-jsonschema --builtin-schema vendor.compose-spec docker-compose.yml

# The AsyncAPI parser lives in its own npm prefix, as check-jsonschema lives in its own venv.
TOOLS_NODE := .local/tools-node
TOOLS_NODE_STAMP := $(TOOLS_NODE)/.installed-stamp
ASYNCAPI_PARSER_SPEC := @asyncapi/parser@3.6.6

$(TOOLS_NODE_STAMP):
	@command -v npm >/dev/null || { echo "npm not found: install Node.js 20 or later (with npm)" >&2; exit 1; }
	npm install --prefix $(TOOLS_NODE) --no-audit --no-fund --loglevel=error '$(ASYNCAPI_PARSER_SPEC)'
	touch $@

.PHONY: contracts-check
# docs/schemas/ must be what `evidence-chain schemas` writes; docs/asyncapi.yaml must parse, $refs resolved.
contracts-check: install $(TOOLS_NODE_STAMP)
	$(VENV)/bin/evidence-chain schemas --out docs/schemas --openapi docs/openapi.yaml --check
	node .ci/validate-asyncapi.mjs $(TOOLS_NODE) docs/asyncapi.yaml

# Quix Streams (benchmarks/anchor_quix.py) lives in its own venv: it is no dependency of the product.
# There: quixstreams, the repo without its dependencies, and what the stations import (pyproject.toml pins).
QUIX_VENV := .local/bench/quix-venv
QUIX_STAMP := $(QUIX_VENV)/.installed-stamp
QUIX_SPEC := quixstreams>=3.28,<4
STATION_DEPS := 'pydantic>=2.13,<3' 'pydantic-settings>=2.6,<3' 'orjson>=3.10,<4' 'redis>=5,<9' 'text2num>=2.5,<4' 'confusable-homoglyphs>=3.2,<4'

.PHONY: bench-quix-venv
bench-quix-venv: $(QUIX_STAMP)

$(QUIX_STAMP): pyproject.toml Makefile
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found: install Python 3.11" >&2; exit 1; }
	$(PYTHON) -m venv $(QUIX_VENV)
	$(QUIX_VENV)/bin/python -m pip install --quiet '$(QUIX_SPEC)' $(STATION_DEPS)
	$(QUIX_VENV)/bin/python -m pip install --quiet --no-deps -e .
	touch $@

.PHONY: openapi-check
# docs/openapi.yaml (the gateway's HTTP interface) must be valid OpenAPI 3.1, its $refs to docs/schemas resolved.
openapi-check: install
	$(VENV)/bin/openapi-spec-validator docs/openapi.yaml docs/openapi.source.yaml

.PHONY: openapi clients-check clients-steps
# docs/openapi.yaml is docs/openapi.source.yaml bundled with the models: edit the source, then run this.
openapi: install
	$(VENV)/bin/evidence-chain schemas --out docs/schemas --openapi docs/openapi.yaml

# The contract as client generators read it: a Java client (openapi-generator from Maven Central, -g java
# --library native) and a Python client (openapi-python-client, its own venv under .local/clients) are
# generated from docs/openapi.yaml, and a Java program on the first (tests/clients/java) and a script on
# the second drive a real gateway: lookup -> the ledger's bytes, draft -> verdict, 401 without the token.
clients-check: install up
	$(SUB_MAKE) clients-steps

clients-steps:
	tests/clients/generate.sh
	$(VENV_PY) -m pytest tests/clients

check: lint typecheck compose-check contracts-check openapi-check

# The tiers that need no service (rules, agents on fakes, the CLI, contracts, manifests) run two at a
# time (they use the CPU); the integration tests on the shared broker, Redis and PostgreSQL three at a
# time, a file per pytest worker (each test has its own topic prefix, group, namespace and database, and
# stops only what it started; much of their time is waiting on workers and brokers).
# The fault tests run three files at a time (they wait on session timeouts, cuts and restarts, and
# start brokers and workers again and again: on two cores they keep both about 85 % busy): each pytest
# worker starts a fault broker of its own (tests/conftest.py), each test its own Redis; the
# three-broker cluster and the Sentinel set are used by one file each (test_cluster.py,
# test_sentinel.py), so never by two lanes at once. A fault test waits on its own conditions (entries
# found, assignments seen), never on another lane's pace. In both service tiers the longest files go
# first, each handed to a lane only when it is about to run out (tests/lanes.py, the order in each
# tier's conftest.py), so the lanes end together.
UNIT_TESTS := tests --ignore=tests/integration --ignore=tests/faults --ignore=tests/clients --ignore=tests/install
INTEGRATION_TESTS := tests/integration
FAULT_TESTS := tests/faults

# The quick loop: every test that needs no service (CI still runs everything through `make test`), in
# under a minute on two cores: the CLI tests fork their commands from one preloaded interpreter
# (tests/console.py) instead of starting the console script a hundred times.
unit: install prometheus
	$(VENV_PY) -m pytest -n 2 $(UNIT_TESTS)

TOGETHER := deploy/local/together.sh
SUB_MAKE := $(MAKE) --no-print-directory

# The benchmarks' smoke modes (tiny sizes, every figure and path) so they cannot rot; they need the stack.
# The *-steps targets are the same without starting anything: make test runs them on its stack while
# the integration tests run, and stack.sh up re-applies Redis's users, which the tests must not see.
smoke: install up bench-quix-venv
	$(SUB_MAKE) smoke-steps

smoke-steps:
	$(VENV_PY) benchmarks/stream.py --smoke --out .local/bench/smoke.md
	$(VENV_PY) benchmarks/lookup.py --smoke --out .local/bench/smoke.md
	$(VENV_PY) benchmarks/mcp_lookup.py --smoke --out .local/bench/smoke.md
	$(VENV_PY) benchmarks/trickle.py --smoke --out .local/bench/smoke.md
	$(VENV_PY) benchmarks/kafka_floor.py --smoke
	$(VENV_PY) benchmarks/review_score.py --smoke
	$(VENV_PY) benchmarks/semantic.py --smoke --out .local/bench/smoke.md

# pytest's own exit code goes through untouched (5 = no tests collected is a failure here too).
# On two cores the steps that leave a core idle run beside one that does not (deploy/local/together.sh:
# the first command's output live, the others' logs after it): the project's install beside Debian's
# prometheus (the unit tests need promtool); the unit tests beside the stack's start,
# the installs (apt, pip, npm: network), the checks and the wheel's install check; the integration tests
# (a quarter of their time waiting on workers) beside the benchmarks' smoke runs and the generated
# clients. The fault tests run alone: they keep both cores busy. Every step runs to its end and each
# failure is reported, then make stops.
test:
	$(TOGETHER) '$(SUB_MAKE) install' '$(SUB_MAKE) prometheus'
	$(TOGETHER) '$(VENV_PY) -m pytest -n 2 $(UNIT_TESTS)' \
		'$(SUB_MAKE) up up-postgres browser netns-tools' \
		'$(SUB_MAKE) check' \
		'$(SUB_MAKE) install-check' \
		'$(SUB_MAKE) bench-quix-venv'
	$(TOGETHER) '$(VENV_PY) -m pytest -n 3 --dist loadfile --no-loadscope-reorder --durations=10 $(INTEGRATION_TESTS)' \
		'$(SUB_MAKE) smoke-steps' \
		'$(SUB_MAKE) clients-steps'
	$(VENV_PY) -m pytest -n 3 --dist loadfile --no-loadscope-reorder --durations=10 $(FAULT_TESTS)

# The package as a user installs it: python -m build (sdist, then the wheel from it), the wheel with no
# extras in a virtualenv of its own, then --help, pipe and verify on the golden cases with no Kafka or
# Redis, and the one-line error of a PostgreSQL audit store without psycopg (tests/install; ~40 s).
install-check: install
	$(VENV_PY) -m pytest tests/install

run: install up
	deploy/local/run.sh

.PHONY: run-mcp
# Only the loop through the MCP server (examples/mcp_loop.py), with make run's two workers.
run-mcp: install up
	deploy/local/run.sh --mode mcp

# Benchmarks report ratios measured in one run; they are never timed assertions in tests.
BENCH_STAMP := $(VENV)/.bench-stamp

$(BENCH_STAMP): pyproject.toml | $(INSTALL_STAMP)
	$(VENV_PY) -m pip install --quiet -e '.[dev,bench]'
	touch $@

# The stream and lookup figures (BENCHMARKS.md) need the local stack; about 30 minutes.
bench: install up bench-quix-venv $(BENCH_STAMP)
	$(VENV_PY) benchmarks/chain.py
	$(VENV_PY) benchmarks/review_score.py
	$(VENV_PY) benchmarks/breakdown.py
	$(VENV_PY) benchmarks/stream.py --profile
	$(VENV_PY) benchmarks/lookup.py
	$(VENV_PY) benchmarks/semantic.py --drafts 2000 --latency 0.3 --in-flight 16
	$(VENV_PY) benchmarks/mcp_lookup.py
	$(VENV_PY) benchmarks/trickle.py --rates 20,100,500
	$(VENV_PY) benchmarks/stages.py --rate 600 --seconds 15 --write
	$(VENV_PY) benchmarks/kafka_floor.py --write

clean:
	$(STACK) clean

distclean:
	$(STACK) down
	rm -rf .local $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
	find . -maxdepth 1 -name '*.egg-info' -exec rm -rf {} +
