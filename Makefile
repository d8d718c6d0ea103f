# hubhost — build, plugins, run, test, bench. See README.md.
SWIFT      ?= swift
CONFIG     ?= debug
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
test:
	$(SWIFT) build --build-tests
	umask 022 && $(SWIFT) test --skip-build

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
