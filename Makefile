# hubhost — build, plugins, run, test, bench. See README.md.
SWIFT      ?= swift
CONFIG     ?= debug
# bash, for pipefail in the test recipe.
SHELL       = /bin/bash
BIN         = $(shell $(SWIFT) build -c $(CONFIG) --show-bin-path)
PLUGIN_DIR ?= plugins
OUT_DIR    ?= out

.PHONY: all build plugins run test bench lint format clean

all: plugins

build:
	$(SWIFT) build -c $(CONFIG)

# The plugins we ship, copied from the build into ./plugins (the default plugin folder).
plugins: build
	@install -d -m 755 $(PLUGIN_DIR)  # hubhost refuses plugin folders others can write (see README, Security)
	@for lib in HubDemoSwift HubDemoC; do \
	  install -m 755 "$(BIN)/lib$$lib.so" "$(PLUGIN_DIR)/lib$$lib.so"; \
	done
	@echo "plugins: $$(ls $(PLUGIN_DIR) | tr '\n' ' ')"

# The main job on the bundled plugins and example views.
run: plugins
	@scripts/run-examples.sh "$(BIN)/hubhost" "$(PLUGIN_DIR)" examples "$(OUT_DIR)"

# One build (tests and plugins together), then the tests without rebuilding.
# umask 022: the tests make plugin folders, which hubhost refuses when group or others can write them.
# The log is kept in .build/test.log; when a test fails, its issues are printed again at the end,
# so a CI log that keeps only its last lines still names the failure.
test:
	$(SWIFT) build --build-tests
	@umask 022; set -o pipefail; $(SWIFT) test --skip-build 2>&1 | tee .build/test.log || { \
	  echo "== failed tests (full log: .build/test.log) =="; \
	  awk '/^✘|^error:|Fatal error/ { print; more = 1; next } more && /^↳/ { print; next } { more = 0 }' .build/test.log | tail -60; \
	  exit 1; }

# Benchmarks build in release mode, separately from the tests.
bench:
	$(SWIFT) build -c release
	"$$($(SWIFT) build -c release --show-bin-path)/hubhost-bench"

# The formatter ships with the toolchain; .swift-format holds the settings.
lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Plugins

format:
	$(SWIFT) format format --in-place --recursive Sources Tests Plugins

clean:
	rm -rf .build $(PLUGIN_DIR) $(OUT_DIR)
