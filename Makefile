# YapDB — the commands a newcomer needs. `make demo` runs the guided demo through the `yapdb`
# tool; `make test` runs the tests and ends with a line "N passed, M failed".
SHELL := /bin/bash
SWIFT ?= swift
SCALE ?= full
SIZE ?= quick
BUILD := .build

.PHONY: all deps demo test reliability bench fuzz clean

all: test

# Installs what the build needs when it is missing: liblz4-dev (apt-get when root, otherwise
# prints the exact command to run).
deps:
	@if ! command -v $(SWIFT) >/dev/null 2>&1; then \
	  echo "The Swift toolchain (6.x) is missing: install it from swift.org and put it on PATH."; exit 1; fi
	@if ! pkg-config --exists liblz4 2>/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing liblz4-dev…"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq liblz4-dev pkg-config) >/dev/null || exit 1; \
	  else \
	    echo "liblz4-dev is missing. Run: sudo apt-get install -y liblz4-dev pkg-config"; exit 1; \
	  fi; \
	fi

demo: deps
	@$(SWIFT) build --product yapdb -c release 2>&1 | grep -E "error|warning: unre" || true
	@$(SWIFT) run -c release --skip-build yapdb demo

# Runs every test target; the last line counts test cases from the xunit reports.
test: deps
	@mkdir -p $(BUILD)
	@rm -f $(BUILD)/xunit*.xml
	@set -o pipefail; $(SWIFT) test --xunit-output $(BUILD)/xunit.xml 2>&1 | tee $(BUILD)/test.log; status=$$?; \
	  passed=0; failed=0; \
	  for f in $(BUILD)/xunit*.xml; do \
	    [ -f "$$f" ] || continue; \
	    t=$$(grep -o '<testsuite [^>]*' "$$f" | grep -o 'tests="[0-9]*"' | grep -o '[0-9]*' | awk '{s+=$$1} END {print s+0}'); \
	    x=$$(grep -o '<testsuite [^>]*' "$$f" | grep -o 'failures="[0-9]*"' | grep -o '[0-9]*' | awk '{s+=$$1} END {print s+0}'); \
	    e=$$(grep -o '<testsuite [^>]*' "$$f" | grep -o 'errors="[0-9]*"' | grep -o '[0-9]*' | awk '{s+=$$1} END {print s+0}'); \
	    passed=$$((passed + t - x - e)); failed=$$((failed + x + e)); \
	  done; \
	  if [ $$status -ne 0 ] && [ $$failed -eq 0 ]; then failed=1; fi; \
	  echo "$$passed passed, $$failed failed"; \
	  exit $$status

reliability: deps
	@echo "make reliability: not built yet (the reliability harness issue adds it)"; exit 1

# Builds the libFuzzer targets of Fuzz/ (a separate package) and runs each FUZZ_SECONDS seconds,
# one at a time; one line per target: executions, corpus size, crashes. `make reliability`
# calls it. See Fuzz/README.md.
FUZZ_SECONDS ?= 60
fuzz: deps
	@Fuzz/fuzz.sh build
	@Fuzz/fuzz.sh run $(FUZZ_SECONDS)

# YapDB against SQLite and LMDB (Benchmarks/, its own package; never part of `make test` or CI).
# Installs liblmdb-dev and libsqlite3-dev when missing (apt-get when root, otherwise prints the
# command), runs every workload at $(SIZE) (quick: 100k rows, a few minutes; full: 1M rows), and
# rewrites docs/benchmarks.md, docs/benchmarks.json and the chart docs/benchmarks.png.
bench: deps
	@for pair in lmdb:liblmdb-dev sqlite3:libsqlite3-dev; do \
	  pc=$${pair%%:*}; pkg=$${pair##*:}; \
	  if ! pkg-config --exists $$pc 2>/dev/null; then \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	      echo "Installing $$pkg…"; \
	      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$pkg) >/dev/null || exit 1; \
	    else \
	      echo "$$pkg is missing. Run: sudo apt-get install -y $$pkg"; exit 1; \
	    fi; \
	  fi; \
	done
	@set -o pipefail; cd Benchmarks && $(SWIFT) build -c release --product yapdb-bench 2>&1 | { grep -E "error|warning: unre" || true; }
	@Benchmarks/.build/release/yapdb-bench --size $(SIZE) --work Benchmarks/.build/bench-data \
	  --markdown docs/benchmarks.md --json docs/benchmarks.json --profiles Benchmarks/profiles.md
	@py=""; for p in python3 /usr/bin/python3; do \
	  if $$p -c "import matplotlib" 2>/dev/null; then py=$$p; break; fi; done; \
	if [ -z "$$py" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing python3-matplotlib for the chart…"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-matplotlib >/dev/null 2>&1 && py=/usr/bin/python3; \
	  fi; \
	  if [ -z "$$py" ] && python3 -m pip install --quiet --user matplotlib >/dev/null 2>&1; then py=python3; fi; \
	fi; \
	if [ -n "$$py" ] && $$py -c "import matplotlib" 2>/dev/null; then \
	  $$py Benchmarks/chart.py docs/benchmarks.json docs/benchmarks.png && echo "wrote docs/benchmarks.png"; \
	else \
	  echo "matplotlib is missing: the chart was not redrawn. Run: python3 -m pip install matplotlib"; \
	fi

clean:
	rm -rf $(BUILD)
