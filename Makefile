# Two commands for a fresh machine:  make demo   and   make test
# Each creates the virtual environment(s) it needs under .venv/.

PYTHON ?= python3
PIP_QUIET ?= -q
# On the public index Linux torch is the CUDA build (several GB): without a GPU, pass
# TORCH_INDEX=https://download.pytorch.org/whl/cpu for the CPU build.
TORCH ?= torch==2.13.0
TORCH_INDEX ?=
VF_031 := 0.3.1
VF_040 := 0.4.0
PYTEST_ARGS ?=

.PHONY: demo test lint test-031 test-040 bench clean venvs

.venv/vf%/.installed: pyproject.toml
	@echo ">> creating .venv/vf$* (verifiers==$(VF_$*))" >&2
	$(PYTHON) -m venv .venv/vf$*
	.venv/vf$*/bin/python -m pip install $(PIP_QUIET) --upgrade pip
	.venv/vf$*/bin/python -m pip install $(PIP_QUIET) "$(TORCH)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	.venv/vf$*/bin/python -m pip install $(PIP_QUIET) -e ".[test,train]" "verifiers==$(VF_$*)"
	@touch $@

venvs: .venv/vf031/.installed .venv/vf040/.installed

# SKILL.md's v1 road end to end, offline, on a toy the project ships (demo/toy.py): the steps run in the
# 0.4.0 venv; migrate_env's classic side in the 0.3.1 one. Writes .demo-out/report.html and prints its path.
demo: .venv/vf031/.installed .venv/vf040/.installed
	PATH="$(CURDIR)/.venv/vf040/bin:$$PATH" bash demo/run.sh

# Lint and format check first (fast), then both verifiers generations, each in its own virtual environment.
# One after the other: both at once on 2 cores took 29 min instead of about 47 with no load failure (local_train's runs
# are reproducible under load since each rollout samples from its own seed), but the worker-timeout and
# fault tests keep more headroom on a quiet machine, and CI's 90 minutes hold the sequential run.
test: lint test-031 test-040

lint: .venv/vf031/.installed
	.venv/vf031/bin/ruff check .
	.venv/vf031/bin/ruff format --check .

# The 0.3.1 run needs the 0.4.0 venv too: migrate_env proves a migration by scoring in both generations.
test-031: .venv/vf031/.installed .venv/vf040/.installed
	PATH="$(CURDIR)/.venv/vf031/bin:$$PATH" .venv/vf031/bin/python -m pytest $(PYTEST_ARGS)

test-040: .venv/vf040/.installed
	PATH="$(CURDIR)/.venv/vf040/bin:$$PATH" .venv/vf040/bin/python -m pytest $(PYTEST_ARGS)

# TRL, only for bench_local_train's comparison; never installed into the test venvs.
.venv/bench/.installed:
	$(PYTHON) -m venv .venv/bench
	.venv/bench/bin/python -m pip install $(PIP_QUIET) --upgrade pip
	.venv/bench/bin/python -m pip install $(PIP_QUIET) "$(TORCH)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	.venv/bench/bin/python -m pip install $(PIP_QUIET) trl
	@touch $@

bench: .venv/vf031/.installed .venv/bench/.installed
	.venv/vf031/bin/python bench/run_all.py

clean:
	rm -rf .venv .demo-out
