# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lab check java clean

## setup: the virtual environment in .venv with the project and its Jupyter kernel
setup: $(STAMP)

$(STAMP): pyproject.toml
	@$(MAKE) --no-print-directory java
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed; found " + sys.version.split()[0])'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	$(BIN)/python -c 'from workbench.report import ensure_kernel; ensure_kernel()'
	touch $(STAMP)

## java: PySpark needs Java 17 or newer
java:
	@v=$$(java -version 2>&1 | awk -F'"' '/version/ {print $$2}' | cut -d. -f1); \
	if [ -z "$$v" ] || [ "$$v" -lt 17 ]; then \
	  echo "PySpark needs Java 17 or newer (found: $${v:-no java on PATH})." >&2; \
	  echo "Install it with 'sudo apt-get install openjdk-17-jre-headless' (Debian/Ubuntu)," >&2; \
	  echo "'conda install -c conda-forge openjdk=17', or point JAVA_HOME and PATH at a JDK 17+." >&2; \
	  exit 1; \
	fi

## demo: start the stack, run every notebook, write reports/<run>/index.html, stop the stack
demo: setup
	$(BIN)/workbench demo

## test: unit, integration and notebook tests against the real embedded stack
test: setup
	$(BIN)/python -m pytest

## lab: the stack plus JupyterLab on notebooks/ (Ctrl-C stops both)
lab: setup
	$(BIN)/workbench lab

## check: lint and types
check: setup
	$(BIN)/ruff check workbench tests
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .workbench reports .pytest_cache .mypy_cache .ruff_cache
