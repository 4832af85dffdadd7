# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lab check java nginx wrk clean

## setup: the virtual environment in .venv with the project and its Jupyter kernel
setup: $(STAMP)

$(STAMP): pyproject.toml
	@$(MAKE) --no-print-directory java
	@$(MAKE) --no-print-directory nginx
	@$(MAKE) --no-print-directory wrk
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed; found " + sys.version.split()[0])'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	$(BIN)/python -c 'from workbench.report import ensure_kernel; ensure_kernel()'
	@# Apache Kafka's jars (the embedded broker) and Spark's Kafka connector, once, from Maven
	@# Central; `workbench up` and the first Spark session try again, and say how else to
	@# provide them, if this machine cannot reach it now.
	$(BIN)/workbench jars || echo "the jars could not be resolved now; \`workbench up\` and Spark will try again" >&2
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

## nginx: the load balancer in front of several proxy processes (Debian package);
## without it the stack says so and clients round-robin over the proxy URLs.
nginx:
	@if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing nginx (Debian package nginx-light) for the proxy load balancer"; \
	  guard=; if [ ! -e /usr/sbin/policy-rc.d ]; then guard=1; printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; fi; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light) >/dev/null 2>&1 \
	    || echo "nginx could not be installed; several proxies will be used round-robin by the client" >&2; \
	  if [ -n "$$guard" ]; then rm -f /usr/sbin/policy-rc.d; fi; \
	else \
	  echo "nginx is not installed (sudo apt-get install nginx-light); several proxies will be used round-robin by the client" >&2; \
	fi

## wrk: the compiled HTTP load generator of the proxy benchmarks (`client=wrk`, Debian
## package); without it those benchmarks say so and the Python client still works.
wrk:
	@if command -v wrk >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing wrk (Debian package) for the proxy benchmarks' compiled load generator"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk) >/dev/null 2>&1 \
	    || echo "wrk could not be installed; the proxy benchmarks will use client=python only" >&2; \
	else \
	  echo "wrk is not installed (sudo apt-get install wrk); the proxy benchmarks will use client=python only" >&2; \
	fi

## demo: start the stack, run every notebook, write reports/<run>/index.html, stop the stack
demo: setup
	$(BIN)/workbench demo

## test: unit, integration and notebook tests against the real embedded stack
# The workbench's modules are compiled once first: where PYTHONDONTWRITEBYTECODE is set
# (CI images often set it), each of the ~250 processes a run starts (proxies, kernels,
# Spark's Python workers) would compile them again (measured: 0.05 s of CPU a process).
test: setup
	$(BIN)/python -m compileall -q workbench
	$(BIN)/python -m pytest

## lab: the stack plus JupyterLab on notebooks/ (Ctrl-C stops both)
lab: setup
	$(BIN)/workbench lab

## check: lint and types
check: setup
	$(BIN)/ruff check workbench tests
	$(BIN)/ruff format --check workbench tests
	$(BIN)/mypy
	$(BIN)/mypy --explicit-package-bases tests

clean:
	rm -rf $(VENV) .workbench reports .pytest_cache .mypy_cache .ruff_cache
