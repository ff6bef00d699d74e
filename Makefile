# icml26-lit: one command to run every check, one to execute and build the whole book.
#   make test                      every check (sync, pytest, papermill, book build, browser check)
#   make test CHAPTERS="06 09"     core plus the named chapters, for quick iteration
#   make book                      export, execute every notebook at scale=ci, build the HTML book
#   make run NB=nbs/00_core/12_example_experiments.ipynb SCALE=cpu   (or colab/full, DEVICE=cuda)
#   make run NB=... SCALE=full NPROC=4   the same on 4 torchrun ranks (chapters with run_experiment)
#   make run NB=... SCALE=full NPROC=2 PARALLEL=data   2 ranks train each unit together (DDP)
#   make run NB=... SCALE=cpu THREADS=1   one thread per process (a machine shared with other work)
#   make lint                      ruff (width 100, pyflakes, imports, pyupgrade) and the import contracts
#   make verdicts                  rewrite results/ci_verdicts.json from the last `make test`'s ci claims
#                                  (make test prints each verdict that moved since it was written)
#   make exercises                 student copies of the exercises (no solutions) and their HTML book
#   make alone CHAPTERS="02 17"    each chapter's experiments notebook alone in an empty folder, from
#                                  the wheel and its extra in a fresh environment (not in make test)
#   make colab-check               resolve every extra against Colab's versions (network; not in make test)
#   make nbtest                    nbdev_test (for authors; papermill is what CI runs)
# The development environment is .venv/ at the repository root, made from requirements/pins.txt
# (the one list of exact versions) the first time any target needs it.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PINS := requirements/pins.txt
# pip's notes about local index folders it skips are noise here
QUIET_PIP := 2> >(grep -v '^WARNING: Location' >&2)
STAMP := $(VENV)/.icml26-$(shell cat $(PINS) settings.ini setup.py 2>/dev/null | sha1sum | cut -c1-12)
CHAPTERS ?=
NB ?=
SCALE ?= colab
NPROC ?= 1
PARALLEL ?= units
THREADS ?=
DEVICE ?= auto
SEED ?= 0
# Where to find a CPU build of torch on machines that need one from elsewhere; empty means the
# default index (this project's machines have the CPU wheel locally).
TORCH_INDEX ?=

.PHONY: venv test book run nbtest export clean bench gpu gpu-pack toc exercises lint verdicts colab-check alone

venv: $(STAMP)

$(STAMP): $(PINS) settings.ini setup.py
	@set -e; t0=$$(date +%s); \
	if [ ! -x $(PY) ]; then $(PYTHON) -m venv $(VENV); fi; \
	$(PY) -m pip install -q --upgrade pip setuptools wheel $(QUIET_PIP); \
	torch_pin=$$(grep -E '^torch==' $(PINS)); \
	if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then \
	  echo "CUDA machine: installing $$torch_pin (CUDA build)"; $(PY) -m pip install -q "$$torch_pin" $(QUIET_PIP); \
	else \
	  echo "no CUDA: installing $$torch_pin, CPU build"; \
	  $(PY) -m pip install -q $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) "$$torch_pin" $(QUIET_PIP); \
	  if $(PY) -c 'import torch,sys; sys.exit(0 if torch.version.cuda is None else 1)'; then :; else \
	    echo "error: a CUDA build of torch was installed on a machine without CUDA;" \
	         "set TORCH_INDEX to a CPU wheel index and run again"; exit 1; fi; \
	fi; \
	$(PY) -m pip install -q -c $(PINS) -r <($(PYTHON) requirements/pins.py regular | grep -v '^torch$$') $(QUIET_PIP); \
	nodeps=$$($(PYTHON) requirements/pins.py nodeps); \
	if [ -n "$$nodeps" ]; then $(PY) -m pip install -q --no-deps -c $(PINS) $$nodeps $(QUIET_PIP); fi; \
	$(PY) -m pip install -q --no-deps -e . $(QUIET_PIP); \
	rm -f $(VENV)/.icml26-*; touch $(STAMP); \
	echo "environment ready in $$(( $$(date +%s) - t0 )) s: $(VENV)"

export: venv
	$(VENV)/bin/nbdev_export
	$(PY) book/argdocs.py write

test: venv
	@bash .ci/system-tools
	$(PY) book/pipeline.py test --chapters "$(CHAPTERS)"

verdicts: venv
	$(PY) book/pipeline.py verdicts --chapters "$(CHAPTERS)"

book: venv
	$(PY) book/pipeline.py book --chapters "$(CHAPTERS)"

run: venv
	@test -n "$(NB)" || { echo "usage: make run NB=<notebook> SCALE=cpu|colab|full DEVICE=auto|cpu|cuda NPROC=1 PARALLEL=units|data"; exit 2; }
	RUN_THREADS=$(THREADS) $(PY) book/pipeline.py run "$(NB)" --scale $(SCALE) --device $(DEVICE) --seed $(SEED) --nproc $(NPROC) --parallel $(PARALLEL)

colab-check: venv
	$(PY) book/colab_check.py

alone: venv
	$(PY) book/alone.py $(or $(CHAPTERS),02 05 09 11 14 17)

nbtest: venv
	$(VENV)/bin/nbdev_test --n_workers 2

bench: venv
	$(PY) -m icml26_lit.bench --budget-s 420

GPU_PY = $(if $(wildcard $(VENV)/bin/python),$(VENV)/bin/python,python3)
gpu:  # no venv prerequisite: a GPU machine brings its own torch and Triton (no network there)
	@if [ -d .gpu-wheels ]; then $(GPU_PY) book/gpu_pack.py install; fi
	PYTHONPATH=$(CURDIR)/.gpu-site$${PYTHONPATH:+:$$PYTHONPATH} $(GPU_PY) -m icml26_lit.gpu_check --budget-s 360

gpu-pack: venv  # here, with network: the wheels the GPU image lacks, into .gpu-wheels/ (carry it)
	$(VENV)/bin/python book/gpu_pack.py download

lint: venv
	$(VENV)/bin/ruff check icml26_lit tests book nbs
	$(VENV)/bin/ruff format --check tests book nbs
	$(VENV)/bin/lint-imports

exercises: venv
	$(PY) book/exercises.py html

toc: venv
	$(PY) book/bootstrap.py write
	$(PY) book/make_toc.py
	$(PY) book/colab.py write

clean:
	rm -rf _build book/_build
