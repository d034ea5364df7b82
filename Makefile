# iclr25: one Makefile for the whole federation. Python 3.11, pip and make are all a fresh machine needs.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
export UV_PYTHON_DOWNLOADS := never
export UV_PYTHON := $(shell command -v python3.11 || command -v python3)
PYTHON ?= python3
UV ?= uv
# uv comes from PATH, or from the checkout's own .venvs/_uv (ci/bootstrap_uv.sh; the system Python is untouched)
export PATH := $(CURDIR)/.venvs/_uv/bin:$(PATH)
PKG ?=
OUT ?= results
UV_SPEC := uv>=0.13.9,<0.14

.PHONY: help uv setup demo test test-all contract lint lock lock-check test-utils build-check pip-check test-packages sweeps \
        notebooks gallery own-data-check docs docs-serve bench bench-check repro new clean claims-table speed-tables claims-fresh backend-check gpu-check hardware-table figure-check

help:
	@echo "make setup            install uv when missing (into .venvs/_uv, never into the system Python), then"
	@echo "                      sync the dev environment .venv"
	@echo "make demo             run every installed method's demo into $(OUT)/ (with an index README)"
	@echo "make test [PKG=slug]  contract check, lint, lock check, shared-utils tests, build check, plain-pip"
	@echo "                      check, then each package's tests in its own environment (only PKG's when set)"
	@echo "make sweeps           the input/output/safety and size sweeps over every command (after make test's"
	@echo "                      environments exist; part of make test)"
	@echo "make own-data-check   each README's 'Your own data' commands on files in the papers' data formats"
	@echo "make gallery          run every package's examples/gallery/ scripts on kernels, for the site's gallery"
	@echo "make docs             run the notebooks and the gallery on Jupyter kernels, build the site (strict) into"
	@echo "                      build/docs/site, open it in headless Chromium when installed (part of make test)"
	@echo "make docs-serve       serve the built site on http://127.0.0.1:8000"
	@echo "make bench PKG=slug   the package's side-by-side benchmarks (each through ci/quiet_run.py: waits for"
	@echo "                      load < 1.5, records date, load and wall time)"
	@echo "make bench-check [PKG=slug]  each benchmark script's --help runs in its package environment"
	@echo "make repro PKG=slug   the package's reduced-scale reproduction into $(OUT)/<slug>-repro (quiet_run.py"
	@echo "                      too; ARGS=--overwrite to write over a previous one)"
	@echo "make claims-table [PKG=slug]  rewrite README claims tables from the committed claims.json files"
	@echo "make speed-tables [PKG=slug]  rewrite the speed-table blocks of READMEs and EVIDENCE.md from their"
	@echo "                      benchmark JSONs (make contract fails on a stale block or a README ratio typed by hand)"
	@echo "make claims-fresh [PKG=slug] [RUNG=test] [SIDE=1]  re-decide every claim at fresh seeds (from the date and"
	@echo "                      version) into packages/<slug>/claims-fresh.json; names every changed verdict;"
	@echo "                      SIDE=1 also each side rung with a committed docs/<rung>/claims.json"
	@echo "make backend-check PKG=slug [BACKEND=dask]  the package's repro serially and on a local 2-worker cluster;"
	@echo "                      the claims compared in ci/reports/backend-check.json (the backend's extra installed)"
	@echo "make hardware-table   rewrite INSTALL.md's what-runs-where table from the registries' paper rungs"
	@echo "make figure-check [PKG=slug]  run the demos and list figures without a title, axis labels or colour bar"
	@echo "make gpu-check [PKG=slug]  on a GPU machine: test-rung claims with --device cpu and cuda, a table in"
	@echo "                      benchmarks/gpu/ (without a GPU: one line, exit 0)"
	@echo "make lint | lock | new PKG=slug | clean"

uv:
	@command -v $(UV) >/dev/null 2>&1 || bash ci/bootstrap_uv.sh '$(PYTHON)' '$(UV_SPEC)'

setup: uv
	$(UV) sync --frozen --all-packages --all-extras

demo: setup
	.venv/bin/iclr25 demo --all --overwrite --out $(OUT)

ifeq ($(PKG),)
test: contract lint lock-check test-utils build-check pip-check test-packages sweeps docs
else
test: uv
	$(PYTHON) ci/check_contract.py $(PKG)
	$(PYTHON) ci/run_package_tests.py $(PKG)
	$(PYTHON) ci/input_sweep.py $(PKG)
	$(PYTHON) ci/size_sweep.py $(PKG)
endif

contract:
	$(PYTHON) ci/check_contract.py

# README claims tables rewritten from each package's committed claims.json (make test checks they agree)
claims-table:
	$(PYTHON) ci/claims_table.py $(PKG)

# speed-table blocks rewritten from their benchmark JSONs (issue 65; make contract checks them, and README ratios)
speed-tables:
	$(PYTHON) ci/speed_tables.py $(PKG) --report

# every claim re-decided at new seeds, outside the make test gate (the dashboard shows the latest verdicts)
RUNG ?= test
claims-fresh: uv
	$(PYTHON) ci/claims_fresh.py $(PKG) --rung $(RUNG) $(if $(SIDE),--side-rungs)

backend-check: uv
	$(PYTHON) ci/backend_check.py $(PKG) --backend $(or $(BACKEND),dask)

hardware-table: uv
	$(PYTHON) ci/hardware_table.py

# every demo's figures checked for a title, axis labels and colour bars (issue 66), outside the make test gate
figure-check: uv
	$(PYTHON) ci/figure_check.py $(PKG)

# on a machine with an NVIDIA GPU: every package's test-rung claims with --device cpu and cuda, one table in
# benchmarks/gpu/ (without a GPU: one line, exit 0)
gpu-check: uv
	$(PYTHON) ci/gpu_check.py $(PKG)

lint: uv
	@UV_PROJECT_ENVIRONMENT=.venvs/_tools $(UV) sync --frozen --quiet --exact --no-default-groups --only-group dev
	.venvs/_tools/bin/ruff check .

lock: uv
	$(UV) lock

lock-check: uv
	$(UV) lock --check

test-utils: uv
	$(PYTHON) ci/run_package_tests.py utils --pytest-args "tests ../ci/tests --doctest-modules src"

build-check: uv
	bash ci/build_check.sh

# plain pip, as the README tells a newcomer: one venv per backend family, --help and the base-install demo
pip-check:
	$(PYTHON) ci/pip_check.py

test-packages: uv
	$(PYTHON) ci/run_package_tests.py

# the bad-input, data-loss and safety sweeps over every command of every package (in the environments
# test-packages built): counts per category and package in build/sweeps/, exit 1 on any defect
sweeps: uv
	$(PYTHON) ci/input_sweep.py --json build/sweeps/input-sweep.json
	$(PYTHON) ci/size_sweep.py --json build/sweeps/size-sweep.json

# notebooks/*.py (jupytext) executed on an ipykernel of an environment holding every package
notebooks: uv
	@UV_PROJECT_ENVIRONMENT=.venvs/_notebooks $(UV) sync --frozen --quiet --exact --compile-bytecode --all-packages \
	  --no-default-groups --group notebooks
	.venvs/_notebooks/bin/python ci/run_notebooks.py

# each README's "Your own data" commands, verbatim, on files in the paper datasets' formats (issue 64; after
# test-packages built the environments)
own-data-check:
	$(PYTHON) ci/own_data_check.py

# packages/*/examples/gallery/NN_*.py executed on kernels of the notebooks environment (two at a time), for the
# site's example gallery
gallery: uv
	@UV_PROJECT_ENVIRONMENT=.venvs/_notebooks $(UV) sync --frozen --quiet --exact --compile-bytecode --all-packages \
	  --no-default-groups --group notebooks
	.venvs/_notebooks/bin/python ci/run_gallery.py

# the documentation site: tests of its tooling, the strict build, then the browser check
docs: notebooks gallery
	@UV_PROJECT_ENVIRONMENT=.venvs/_docs $(UV) sync --frozen --quiet --exact --no-install-workspace \
	  --no-default-groups --only-group docs
	.venvs/_docs/bin/python -m pytest -q -p no:cacheprovider ci/docs/tests
	NO_MKDOCS_2_WARNING=1 .venvs/_docs/bin/python ci/docs/build_site.py
	.venvs/_docs/bin/python ci/docs/browser_check.py --require

docs-serve:
	cd build/docs/site && $(PYTHON) -m http.server --bind 127.0.0.1 8000

bench: uv
	@test -n "$(PKG)" || { echo "make bench needs PKG=<slug>"; exit 2; }
	@UV_PROJECT_ENVIRONMENT=.venvs/$(PKG) $(UV) sync --frozen --quiet --package iclr25-$(PKG) --all-extras --group test
	@shopt -s nullglob; files=(packages/$(PKG)/benchmarks/[!_]*.py); \
	  test $${#files[@]} -gt 0 || { echo "packages/$(PKG)/benchmarks has no benchmark scripts"; exit 0; }; \
	  for f in "$${files[@]}"; do echo "== $$f"; $(PYTHON) ci/quiet_run.py --log $(OUT)/$(PKG)-bench/quiet-runs.jsonl -- \
	    .venvs/$(PKG)/bin/python "$$f" --out $(OUT)/$(PKG)-bench; done

# each benchmark script starts from a clone: SCRIPT --help in the package's environment (after make test)
bench-check:
	$(PYTHON) ci/bench_check.py $(PKG)

repro: uv
	@test -n "$(PKG)" || { echo "make repro needs PKG=<slug>"; exit 2; }
	@UV_PROJECT_ENVIRONMENT=.venvs/$(PKG) $(UV) sync --frozen --quiet --package iclr25-$(PKG) --all-extras --group test
	$(PYTHON) ci/quiet_run.py --log $(OUT)/$(PKG)-repro.quiet-runs.jsonl -- \
	  .venvs/$(PKG)/bin/python -m iclr25.$(subst -,_,$(PKG)) repro --out $(OUT)/$(PKG)-repro $(ARGS)

new:
	@test -n "$(PKG)" || { echo "make new needs PKG=<slug>"; exit 2; }
	$(PYTHON) ci/new_package.py $(PKG)

clean:
	rm -rf .venvs dist build $(OUT) .pytest_cache
