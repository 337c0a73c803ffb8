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

.PHONY: help venv install up down status check lint typecheck compose-check test run bench clean distclean

help:
	@echo 'make install    create .venv ($(PYTHON)) and pip install -e ".[dev]" (again only when pyproject.toml changes)'
	@echo 'make up         start the local stack: Kafka on 127.0.0.1:9092, Redis on 127.0.0.1:6379'
	@echo 'make status     show the local stack'
	@echo 'make down       stop the local stack'
	@echo 'make check      ruff, mypy, docker-compose.yml schema'
	@echo 'make test       install + up + check + the whole pytest suite, integration tests included (CI)'
	@echo 'make run        install + up, then deploy/local/run.sh'
	@echo 'make bench      CPU cost of the station chain relative to orjson (benchmarks/)'
	@echo 'make clean      down, then delete .local state except downloads'
	@echo 'make distclean  down, then delete .local, .venv and caches'

venv: $(VENV_PY)

$(VENV_PY):
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found: install Python 3.11 or run 'make PYTHON=/path/to/python3.11 ...'" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)

install: $(INSTALL_STAMP)

$(INSTALL_STAMP): pyproject.toml | $(VENV_PY)
	$(VENV_PY) -m pip install --quiet -e '.[dev]'
	touch $@

up:
	$(STACK) up

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

check: lint typecheck compose-check

# pytest's own exit code goes through untouched (5 = no tests collected is a failure here too).
test: install up check
	$(VENV_PY) -m pytest tests

run: install up
	deploy/local/run.sh

# Benchmarks report ratios measured in one run; they are never timed assertions in tests.
bench: install
	$(VENV_PY) benchmarks/chain.py
	$(VENV_PY) benchmarks/breakdown.py

clean:
	$(STACK) clean

distclean:
	$(STACK) down
	rm -rf .local $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
	find . -maxdepth 1 -name '*.egg-info' -exec rm -rf {} +
