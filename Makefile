# Fresh-machine entry points. Everything is bootstrapped from python3 alone:
# a private tools venv gets the pinned uv, and uv builds .venv from uv.lock.
PYTHON ?= python3
UV_VERSION := 0.13.9
TOOLS := .tools
UV := $(TOOLS)/bin/uv
export UV_PYTHON_DOWNLOADS := never
# The real interpreter, not a shim: uv recreates .venv when the interpreter path changes.
export UV_PYTHON := $(shell $(PYTHON) -c "import sys; print(sys.executable)")
export UV_PROJECT_ENVIRONMENT := .venv
RUN := $(UV) run --locked --no-sync
# Two pytest workers per core: many tests wait (on a language server, a subprocess, a real
# editor, PostgreSQL), and a worker that waits leaves its core to the other (docs/performance.md).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))

.PHONY: demo test lint typecheck unit postgres vscode vscode-e2e sync bench clean

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet "uv==$(UV_VERSION)"

# --compile-bytecode covers the installed packages, not the workspace's own (installed
# editable): those are compiled here, or every start with PYTHONDONTWRITEBYTECODE set would
# compile them from source again (about a sixth of a command's CPU).
sync: $(UV)
	$(UV) sync --locked --all-packages --compile-bytecode
	$(RUN) python -m compileall -q core/rutter_core server

# The main job: register the example monorepo in a private RUTTER_HOME and
# print the effective instruction stack of one file in it.
demo: sync
	rm -rf .demo-home
	RUTTER_HOME=.demo-home $(RUN) rutter workspace register demo docs/examples/monorepo
	RUTTER_HOME=.demo-home $(RUN) rutter context instructions --workspace demo \
		--target services/api/internal/parser/input.go

lint: sync
	$(RUN) ruff check .
	$(RUN) ruff format --check .
	$(RUN) lint-imports

typecheck: sync
	$(RUN) mypy

# Every core runs tests (pytest-xdist); each module's tests stay on one worker, so a module's
# shared fixture (a language server, a seeded store) is built once. `postgres` installs the
# server the PostgreSQL tests start for themselves, where it is missing.
unit: sync postgres
	$(RUN) pytest -n $(TEST_WORKERS) --dist loadscope

# The store's tests on PostgreSQL start a private server (tests/postgres.py) and need its
# programs: installed from Debian's packages where missing, as root (otherwise it stops and
# names them). Nothing is done when they are there.
postgres:
	@if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; \
	then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql postgresql-contrib; \
	else \
		echo "PostgreSQL is missing; install it first: apt-get install postgresql postgresql-contrib" >&2; \
		exit 1; \
	fi

# The VS Code extension: type check, lint, unit and protocol tests (against .venv's
# rutter-lsp), then the .vsix, then the real-editor suite on it (code-server in headless
# Chromium; e2e/install.mjs installs what it needs). Needs Node 20 and npm.
vscode: sync
	cd editors/vscode && npm ci && npm test && npm run package && npm run test:e2e

# The real-editor suite alone (builds the .vsix it installs).
vscode-e2e: sync
	cd editors/vscode && npm ci && npm run package && npm run test:e2e

test: lint typecheck unit vscode

bench: sync
	$(RUN) python benchmarks/discovery.py

clean:
	rm -rf $(TOOLS) .venv .demo-home .pytest_cache .mypy_cache .ruff_cache
	rm -rf editors/vscode/node_modules editors/vscode/dist editors/vscode/*.vsix editors/vscode/e2e/artifacts
