# The README's two commands: `make serve` and `make test`. Each creates the
# virtualenv and installs the project on first use, so a fresh clone needs nothing else.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test test-fast lint bench clean constraints

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/digest-bot serve

lint: $(STAMP)
	$(BIN)/ruff check bot tests bench
	$(BIN)/mypy

# Every test, one worker per core; then, alone, the few that assert wall-clock bounds
# (a 300 ms stall bound means nothing while other tests' workers share two cores).
# CI runs exactly this.
test: lint
	$(BIN)/python -m pytest -n auto --dist worksteal -m "not timing"
	$(BIN)/python -m pytest -m timing

# The inner loop: no process-starting end-to-end tests, no long property tests.
test-fast: $(STAMP)
	$(BIN)/ruff check bot tests bench
	$(BIN)/python -m pytest -n auto --dist worksteal -m "not slow and not property"

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache

# The Dockerfile installs exactly these versions. Regenerate after changing the
# runtime dependencies in pyproject.toml (a clean venv of them, frozen).
LOCK_VENV := /tmp/pr-digest-lock
constraints:
	rm -rf $(LOCK_VENV) && $(PYTHON) -m venv $(LOCK_VENV)
	$(PYTHON) -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))' > $(LOCK_VENV)/deps.txt
	$(LOCK_VENV)/bin/pip install -q -r $(LOCK_VENV)/deps.txt
	{ echo "# Exact runtime dependency versions for the Docker image: regenerate with 'make constraints'."; \
	  echo "# tests/project/test_packaging.py checks every runtime dependency is pinned here."; \
	  $(LOCK_VENV)/bin/pip freeze; } > constraints.txt
