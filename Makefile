# gradviz: `make lab` to open the lessons, `make test` to run every test.
# Each target sets up what it needs first (scripts/setup.sh, safe to re-run).

PYTHON      ?= python3
VENV        := .venv
VPY         := $(VENV)/bin/python
PORT        ?= 8888
PYTEST_ARGS ?=
# processes running the tests, each taking whole test files (pytest-xdist's
# loadfile: a file's tests in order, its fixtures made once); 0 runs all in one
TEST_JOBS ?= 2
CROSSCHECK_ARGS ?=

.DEFAULT_GOAL := help
.PHONY: help setup setup-test test crosscheck crosscheck-setup lab bench reports frontend clean distclean

help:
	@echo "make lab       set up, then open JupyterLab on notebooks/ (PORT=$(PORT))"
	@echo "make test      set up (incl. Chromium), then run every test (PYTEST_ARGS=...)"
	@echo "make crosscheck  run gradviz beside the pinned TensorFlow (CROSSCHECK_ARGS=--fresh ...)"
	@echo "make setup     install Graphviz dot and the Python packages into $(VENV)"
	@echo "make bench     run every bench/*.py (not _*.py helpers) and print its tables"
	@echo "make reports   build the HTML reports into reports/"
	@echo "make frontend  rebuild the viewer's script (static/stepper.js) from static/viewer/*.js"
	@echo "make clean     remove build outputs (make distclean also removes $(VENV))"

setup:
	@PYTHON=$(PYTHON) bash scripts/setup.sh lab

setup-test:
	@PYTHON=$(PYTHON) bash scripts/setup.sh test

test: setup-test
	@echo "==> running the tests: $(VPY) -m pytest -n $(TEST_JOBS) --dist loadfile $(PYTEST_ARGS)"
	$(VPY) -m pytest -n $(TEST_JOBS) --dist loadfile $(PYTEST_ARGS)

# gradviz beside TensorFlow itself: random programs, every op's edge cases, bad
# arguments (crosscheck/), in build/crosscheck-venv with requirements-crosscheck.txt
crosscheck:
	@PYTHON=$(PYTHON) bash scripts/crosscheck.sh $(CROSSCHECK_ARGS)

# only the environment make crosscheck runs in (CI makes it while the tests run)
crosscheck-setup:
	@CROSSCHECK_SETUP_ONLY=1 PYTHON=$(PYTHON) bash scripts/crosscheck.sh

lab:
	@$(PYTHON) scripts/check_port.py $(PORT)
	@PYTHON=$(PYTHON) bash scripts/setup.sh lab
	@bash scripts/lab.sh $(PORT)

bench: setup
	@failed=""; found=no; \
	for script in bench/[!_]*.py; do \
		[ -f "$$script" ] || continue; found=yes; \
		echo "==> $$script"; \
		$(VPY) "$$script" || failed="$$failed $$script"; \
	done; \
	[ $$found = yes ] || echo "==> no benchmarks yet (bench/*.py)"; \
	[ -z "$$failed" ] || { echo "ERROR: these benchmarks failed:$$failed" >&2; exit 1; }

reports: setup
	@[ -f scripts/build_reports.py ] || { echo "ERROR: scripts/build_reports.py does not exist yet" >&2; exit 1; }
	$(VPY) scripts/build_reports.py

# The viewer's ES modules, put together into the one script the widget and the
# report run (committed; tests/test_frontend.py fails while it is out of date).
frontend:
	$(PYTHON) scripts/build_frontend.py

clean:
	rm -rf build reports .pytest_cache *.egg-info
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
