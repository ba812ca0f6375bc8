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
# pytest-xdist workers of each versioned run (the two run at once): most tests wait on child processes and time
# limits, so four workers keep the 2-core machine busy. Five (three for 0.3.1) ended no sooner: the 2 cores are
# saturated (1,400 s with every run ending together, against 1,386 s).
TEST_WORKERS_031 ?= 2
TEST_WORKERS_040 ?= 2
# the waits share (tests/conftest.py BOUND_WAITS): one worker per test in 0.3.1, so each hang starts at once; the
# 0.4.0 waits run in turn (one process)
WAITS_WORKERS_031 ?= 6

.PHONY: demo test lint test-031 test-040 test-waits-031 test-waits-040 test-031-once test-once test-load bench clean venvs

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

# Lint and format check first (fast), then the suite in five runs, started together (make -j4):
#   test-waits-031,     the tests whose wall time is a hang's bound, stretched by the load average (VLAB_TEST_RUN=waits):
#   test-waits-040      mostly asleep, started while the load average is still low (0.3.1: a worker per test)
#   test-031, test-040  every other test that touches verifiers (VLAB_TEST_RUN=versioned): the classic ones in the
#                       0.3.1 venv, the v1 and generation-neutral ones in the 0.4.0 venv (tests/conftest.py
#                       runs_in_this_generation), in TEST_WORKERS_031 / TEST_WORKERS_040 pytest-xdist workers
#   test-once           the pack's own logic (modules marked "once"), a single time, with verifiers hidden; it runs
#                       after test-031 (test-031-once), beside the longer 0.4.0 run's end (2,770 s of test time
#                       against 3,550 on 2026-11-29): started at once, it only slowed the others (458 s instead of 188)
# No test's verdict depends on the machine's speed (learning tests count steps on seeded runs, time limits are
# bounds on hangs stretched by the load), so the runs may share the cores; `make test-load` proves it beside a
# CPU hog. At the end: the 20 slowest tests and the suite's wall time (tests/suite_report.py), and a failure if any
# test wrote bytecode into the skill folder (nothing we run may write there).
REPORTS := .test-reports
# each run also writes every hint and next step its scenarios emit: tests/hint_commands.py checks their commands
PYTEST_RUN = -m pytest -p no:cacheprovider --junitxml=$(REPORTS)/$(1).xml -o junit_family=xunit2 $(PYTEST_ARGS)
# a module's tests stay in one worker (its module fixtures are built once)
XDIST = --dist loadfile -n
HINTS_TO = VLAB_HINTS_OUT="$(CURDIR)/$(REPORTS)/hints-$(1).jsonl"

test: lint .venv/vf031/.installed .venv/vf040/.installed
	@rm -rf $(REPORTS) && mkdir -p $(REPORTS) && date +%s > $(REPORTS)/started
	@$(MAKE) --no-print-directory -k -j4 -Otarget test-waits-031 test-waits-040 test-040 test-031-once; rc=$$?; \
	  PATH="$(CURDIR)/.venv/vf040/bin:$$PATH" .venv/vf040/bin/python tests/hint_commands.py $(REPORTS)/hints-*.jsonl \
	  || rc=1; .venv/vf040/bin/python tests/suite_report.py $(REPORTS) $$(cat $(REPORTS)/started); \
	  written=$$(find skills -name '*.pyc' -newer $(REPORTS)/started); if [ -n "$$written" ]; then \
	  echo "error: the tests wrote bytecode into the skill folder (a python -I child ignores PYTHONDONTWRITEBYTECODE: add -B):"; \
	  echo "$$written"; rc=1; fi; exit $$rc

lint: .venv/vf031/.installed
	.venv/vf031/bin/ruff check .
	.venv/vf031/bin/ruff format --check .

# The 0.3.1 run needs the 0.4.0 venv too: migrate_env proves a migration by scoring in both generations.
test-031: .venv/vf031/.installed .venv/vf040/.installed
	@mkdir -p $(REPORTS)
	PATH="$(CURDIR)/.venv/vf031/bin:$$PATH" VLAB_TEST_RUN=versioned $(call HINTS_TO,vf031) \
	  .venv/vf031/bin/python $(call PYTEST_RUN,vf031) $(XDIST) $(TEST_WORKERS_031)

test-040: .venv/vf040/.installed
	@mkdir -p $(REPORTS)
	PATH="$(CURDIR)/.venv/vf040/bin:$$PATH" VLAB_TEST_RUN=versioned $(call HINTS_TO,vf040) \
	  .venv/vf040/bin/python $(call PYTEST_RUN,vf040) $(XDIST) $(TEST_WORKERS_040)

test-waits-031: .venv/vf031/.installed
	@mkdir -p $(REPORTS)
	PATH="$(CURDIR)/.venv/vf031/bin:$$PATH" VLAB_TEST_RUN=waits $(call HINTS_TO,waits-vf031) \
	  .venv/vf031/bin/python $(call PYTEST_RUN,waits-vf031) --dist load -n $(WAITS_WORKERS_031)

test-waits-040: .venv/vf040/.installed
	@mkdir -p $(REPORTS)
	PATH="$(CURDIR)/.venv/vf040/bin:$$PATH" VLAB_TEST_RUN=waits $(call HINTS_TO,waits-vf040) \
	  .venv/vf040/bin/python $(call PYTEST_RUN,waits-vf040)

test-031-once:
	@$(MAKE) --no-print-directory test-031; rc=$$?; $(MAKE) --no-print-directory test-once || rc=1; exit $$rc

test-once: .venv/vf040/.installed
	@mkdir -p $(REPORTS)
	PATH="$(CURDIR)/.venv/vf040/bin:$$PATH" VLAB_TEST_RUN=once PYTHONPATH="$(CURDIR)/tests/without_verifiers" \
	  $(call HINTS_TO,once) .venv/vf040/bin/python $(call PYTEST_RUN,once)

# The whole suite beside a CPU hog on every core (not in CI): every verdict must be the same as on a quiet machine.
test-load: .venv/vf040/.installed
	.venv/vf040/bin/python tests/cpu_hog.py --seconds 7200 & hog=$$!; \
	  $(MAKE) --no-print-directory test; rc=$$?; kill $$hog; exit $$rc

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
	rm -rf .venv .demo-out .test-reports
