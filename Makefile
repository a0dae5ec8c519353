# The README's two commands: `make serve` and `make test`. Each creates the
# virtualenv and installs the project on first use, so a fresh clone needs nothing else.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test lint bench clean

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

test: lint
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
