# Needlework: `make run` starts the app, `make test` runs ruff, mypy and every test.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q
PORT ?= 8501
# The source watcher is off for everyday use: it would put an inotify watch on every folder
# below the repository, .venv included. `make run WATCH=auto` reloads on code changes.
WATCH ?= none
# The demo variant trained only on short responses: it scores the needle lab's seeded result.
DEMO_SHORT := data/demo-model-short
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Parallel test workers (pytest-xdist): one more than the cores, at most 4, for `make check` and
# `make test` alike (on 2 cores: check 85 s with 3 workers, 107 s with 2; make test 17 min with
# 3 workers or 4, and 4 made the browser tests' timing flakier). `make test JOBS=1` runs
# everything in one process.
CORES := $(shell nproc 2>/dev/null || echo 2)
JOBS ?= $(shell n=$(CORES); echo $$(( n + 1 > 4 ? 4 : n + 1 )))
xdist = $(if $(filter 1,$(1)),,-n $(1) --dist worksteal)

.PHONY: run test check test-times venv test-deps chromium oidc-provider seed lint bench clean

# pip installs torch: it takes the CPU wheel where a machine keeps one on disk (pip's find-links),
# which uv does not look at. uv installs everything else, many wheels at a time: from a warm
# cache about 20 s in all, where pip took 75-90 s. Both read the pins in requirements.txt. Neither
# compiles every module to bytecode at install (pip's compile was most of its time): Python
# writes a module's bytecode the first time it is imported, and make does not pass on
# PYTHONDONTWRITEBYTECODE, which would have every test process compile torch, transformers and
# streamlit again.
UV_VERSION := 0.13.9
UV_INSTALL := $(VENV)/bin/uv pip install -q --native-tls --python $(PY)
unexport PYTHONDONTWRITEBYTECODE

$(VENV)/.runtime: requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --no-compile uv==$(UV_VERSION) "$$(grep -E '^torch==' requirements.txt)" 2>&1 | grep -v "is ignored: it is neither" || true
	$(UV_INSTALL) -r requirements.txt
	@$(PY) -c "import streamlit, torch, transformers, sqlite_utils" && touch $@

$(VENV)/.test: $(VENV)/.runtime requirements-test.txt
	$(UV_INSTALL) -r requirements-test.txt
	@$(PY) -c "import pytest, playwright, mypy" && touch $@

# Local mode's refusal of a wide address, read by Python at start-up (a .pth file), so that
# `streamlit run serve.py --server.address 0.0.0.0` stops before Streamlit opens a socket.
$(VENV)/.listen-guard: $(VENV)/.runtime listen_guard.py
	@$(PY) listen_guard.py install >/dev/null && touch $@

venv: $(VENV)/.runtime $(VENV)/.listen-guard

# The browser tests run Debian's Chromium headless shell (tests/browser/harness.py says why).
chromium:
	@test -x /usr/bin/chromium-headless-shell || \
	  ( $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium-headless-shell fonts-dejavu-core fonts-noto-color-emoji >/dev/null )
	@/usr/bin/chromium-headless-shell --version

# HAProxy from Debian's packages, in front of `make serve-team`'s processes (docs/scaling.md).
.PHONY: haproxy serve-team
haproxy:
	@test -x /usr/sbin/haproxy || command -v haproxy >/dev/null || \
	  ( $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq haproxy >/dev/null )
	@PATH="$$PATH:/usr/sbin" haproxy -v | head -1

# The demo models are shipped in models/ (built once by `python -m needlework demo-models build`):
# install checks every file against models/SHA256SUMS and copies them into data/.
seed: venv
	$(PY) -m needlework seed-demo --if-empty
	$(PY) -m needlework demo-models install
	$(PY) -m needlework needle seed-demo --model $(DEMO_SHORT)
	$(PY) -m needlework suggestions seed-demo --model data/demo-model

# Local mode (the default) listens on 127.0.0.1 only; team mode on the address in needlework.toml
# (docs/teams.md). A wrong needlework.toml stops here with the file and key named.
run: venv seed
	@line=$$($(PY) -m needlework mode) || exit 1; mode=$${line%% *}; address=$${line#* }; \
	echo "needlework: $$mode mode, serving on http://$$address:$(PORT)"; \
	$(PY) -m streamlit run serve.py --server.address "$$address" --server.port $(PORT) \
	  --server.headless true --browser.gatherUsageStats false --server.fileWatcherType $(WATCH)

# Team mode on WORKERS processes behind HAProxy (docs/scaling.md): the proxy on needlework.toml's
# address and PORT, the processes on 127.0.0.1 from PORT+1; CERT=file.pem serves HTTPS. The
# options are checked (local mode is refused) before anything is seeded or started.
WORKERS ?= 2
serve_team = $(PY) -m needlework serve-team --workers $(WORKERS) --port $(PORT) $(if $(CERT),--certificate "$(CERT)")
serve-team: venv haproxy
	@$(serve_team) --print-config >/dev/null
	@$(MAKE) --no-print-directory seed
	$(serve_team)

# The OpenID Connect provider the teams tests start (panva's oidc-provider, from npm).
OIDC_PROVIDER := tests/oidc/node_modules/.package-lock.json

$(OIDC_PROVIDER): tests/oidc/package.json tests/oidc/package-lock.json
	@command -v npm >/dev/null || ( $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq nodejs npm >/dev/null )
	cd tests/oidc && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

oidc-provider: $(OIDC_PROVIDER)

# TypeScript's checker for the browser scripts (tests/test_js_types.py), from npm: nothing is
# built with it, `make run` needs none of it.
TSC := tests/tsc/node_modules/.package-lock.json

$(TSC): tests/tsc/package.json tests/tsc/package-lock.json
	@command -v npm >/dev/null || ( $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq nodejs npm >/dev/null )
	cd tests/tsc && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# ruff first (seconds); mypy runs beside the tests, not before them (a cold mypy takes
# minutes), and a type error fails the target all the same. Each test's phases are timed
# into artifacts/test-times: `make test-times` says where the time went.
TIMES := artifacts/test-times
# mypy's cache is the machine's, not the clone's: a fresh clone checks only what changed.
export MYPY_CACHE_DIR ?= $(HOME)/.cache/needlework/mypy
with_mypy = mkdir -p artifacts && ( $(PY) -m mypy > artifacts/mypy.log 2>&1; echo $$? > artifacts/mypy.rc ) & \
	$(1); tests=$$?; wait; cat artifacts/mypy.log; \
	[ $$tests -eq 0 ] && [ "$$(cat artifacts/mypy.rc)" = 0 ]

test: $(VENV)/.test $(VENV)/.listen-guard chromium haproxy $(OIDC_PROVIDER) $(TSC)
	$(PY) -m ruff check .
	$(PY) -m needlework demo-models install
	@rm -rf $(TIMES)
	@$(call with_mypy,NEEDLEWORK_TEST_TIMES=$(TIMES) $(PY) -m pytest $(call xdist,$(JOBS)) --durations=30)

# The slowest test files, tests and set-ups of the last `make test` (benchmarks/test_times.py).
test-times:
	$(PY) benchmarks/test_times.py $(TIMES)

# The inner loop: unit and page (AppTest) tests, no browser and nothing marked slow (a
# subprocess, a server, a kill, training, or over about a second on 2 cores), with mypy
# beside them. `make test` runs them all.
check: $(VENV)/.test $(VENV)/.listen-guard
	$(PY) -m ruff check .
	$(PY) -m needlework demo-models install
	@$(call with_mypy,$(PY) -m pytest $(call xdist,$(JOBS)) -q -m "not browser and not slow")

# ruff over the repository, mypy over the four Python layers (pyproject.toml's [tool.mypy]).
lint: $(VENV)/.test
	$(PY) -m ruff check .
	$(PY) -m mypy

clean:
	rm -rf $(VENV) .pytest_cache
