# YapDB — the commands a newcomer needs. `make demo` runs the guided demo through the `yapdb`
# tool; `make test` runs the tests and ends with a line "N passed, M failed".
SHELL := /bin/bash
SWIFT ?= swift
SCALE ?= full
SIZE ?= quick
BUILD := .build

.PHONY: all deps demo test test-cached docs docs-coverage coverage reliability reliability-steps reliability-harness reliability-tsan reliability-coverage reliability-fuzz reliability-report bench fuzz clean

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

# Runs every test target; the last line counts test cases from the xunit reports (XCTest's own
# summary line in the log when swift test writes no XCTest report, as it does not here on Linux).
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
	  if [ ! -f $(BUILD)/xunit.xml ]; then \
	    line=$$(grep -E '^\s*Executed [0-9]+ tests?, with [0-9]+ failures?' $(BUILD)/test.log | tail -1); \
	    xt=$$(echo "$$line" | awk '{print $$2}'); xf=$$(echo "$$line" | awk '{print $$5}'); \
	    passed=$$((passed + $${xt:-0} - $${xf:-0})); failed=$$((failed + $${xf:-0})); \
	  fi; \
	  if [ $$status -ne 0 ] && [ $$failed -eq 0 ]; then failed=1; fi; \
	  echo "$$passed passed, $$failed failed"; \
	  exit $$status

# The engine and API model and crash tests again with index pages read by `pread` through a
# small page cache (the test helpers read YAPDB_TEST_INDEX_READ_MODE; the libraries never do).
# `make test` already runs the engine's seeded model test in both modes (one seed each); this
# runs the rest of these suites in the cached mode too (about 4 minutes on 2 shared cores).
CACHED_SUITES := EngineModelTests|MaintenanceCrashTests|IndexCheckpointTests|IndexCompactionTests|VerifyTests|LifecycleMatrixTests|PagedIndexTests|CrashSweepTests
test-cached: deps
	@YAPDB_TEST_INDEX_READ_MODE=cached:16 $(SWIFT) test --filter '$(CACHED_SUITES)'

# The DocC documentation of the YapDB module: the catalog Sources/YapDB/YapDB.docc (articles)
# and the doc comments, built with swift-docc-plugin (a command plugin: `swift build` and
# `swift test` never build it) into $(DOCS_OUT), laid out for a static web server. Works
# offline with the toolchain's docc. Fails on any DocC warning (a broken ``link``, a parameter
# list that does not match the signature); compiler warnings are counted, not fatal.
DOCS_OUT := $(BUILD)/docs
DOCC ?= $(dir $(shell command -v $(SWIFT) 2>/dev/null))docc

docs: deps
	@mkdir -p $(BUILD)
	@set -o pipefail; export DOCC_EXEC="$${DOCC_EXEC:-$$( [ -x "$(DOCC)" ] && echo "$(DOCC)" )}"; \
	  [ -n "$$DOCC_EXEC" ] || unset DOCC_EXEC; \
	  $(SWIFT) package --allow-writing-to-directory $(DOCS_OUT) generate-documentation --target YapDB \
	    --output-path $(DOCS_OUT) --transform-for-static-hosting --warnings-as-errors 2>&1 | tee $(BUILD)/docs.log; \
	  status=$$?; \
	  docc=$$(awk '/^Building documentation for/ { on = 1 } on && /(warning|error):/' $(BUILD)/docs.log | wc -l); \
	  compiler=$$(awk '/^Building documentation for/ { exit } /: warning:/' $(BUILD)/docs.log | sort -u | wc -l); \
	  echo "DocC warnings: $$docc; compiler warnings: $$compiler"; \
	  if [ $$status -ne 0 ] || [ $$docc -ne 0 ]; then echo "make docs: FAILED (see $(BUILD)/docs.log)"; exit 1; fi; \
	  echo "Documentation: $(CURDIR)/$(DOCS_OUT)"; \
	  echo "Browse: python3 -m http.server --directory $(DOCS_OUT) 8000, then http://localhost:8000/documentation/yapdb/"

# Lists the public symbols of YapDB without a doc comment of their own; fails when there is one.
docs-coverage:
	@docs/check-doc-coverage.sh

# The reliability harness (docs/reliability.md): crash sweep, fault matrix, SIGKILLs, bad input
# and concurrency soaks at SCALE (full, the default, or small), the soaks again under
# ThreadSanitizer (with -DYAPDB_TSAN: see Sources/YapDB/Support/Mutex+ThreadSanitizer.swift), then the
# fuzz step; ends with the report, one figure per line, summed from
# the figure files the tests write to $(BUILD)/reliability. Fails when a test fails, a figure
# that must be zero is not, or the sanitizer reports anything.
RELIABILITY := $(BUILD)/reliability
RELIABILITY_FIGURES := seeds;crash states;distinct crash points;crashes inside recovery;crash states with unsynced names kept by seed;crash points inside the idle checkpoint;recorded real-path calls;crash states from recorded real-path calls;acknowledged commits checked;lost acknowledged commits;partial commits visible;verify failures;failed recoveries;faults injected;read, open, map, list and lock faults injected;real-path faults injected;faults surfaced as typed errors;untyped or unexpected errors;interference cases;descriptor limits tried;SIGKILLs;soak seconds;soak invariant checks;soak invariant violations

reliability: deps
	@rm -rf $(RELIABILITY) && mkdir -p $(RELIABILITY)/tsan
	@echo "== reliability harness, scale $(SCALE)"
	@$(MAKE) --no-print-directory reliability-steps
	@$(MAKE) --no-print-directory reliability-report

# The four steps. `make reliability` runs them one after another; `make -j4 reliability` runs them
# side by side (the fuzz step is bound by time, not work, so on a busy machine this saves most of
# its 70 minutes; each step builds in a scratch directory of its own and writes its own files).
reliability-steps: reliability-harness reliability-tsan reliability-fuzz reliability-coverage

reliability-harness: deps
	@set -o pipefail; YAPDB_SCALE=$(SCALE) YAPDB_RELIABILITY_DIR=$(CURDIR)/$(RELIABILITY) \
	  $(SWIFT) test --filter YapDBReliabilityTests > $(RELIABILITY)/tests.log 2>&1; \
	  echo $$? > $(RELIABILITY)/tests.status; echo "== harness done (exit $$(cat $(RELIABILITY)/tests.status))"

reliability-tsan: deps
	@set -o pipefail; YAPDB_SCALE=$(SCALE) YAPDB_RELIABILITY_DIR=$(CURDIR)/$(RELIABILITY)/tsan TSAN_OPTIONS=halt_on_error=0 \
	  $(SWIFT) test --sanitize=thread -Xswiftc -DYAPDB_TSAN --scratch-path $(BUILD)/tsan --filter "ConcurrencySoakTests|PublishOrderTests" \
	  > $(RELIABILITY)/tsan.log 2>&1; echo $$? > $(RELIABILITY)/tsan.status; echo "== concurrency soaks under ThreadSanitizer done (exit $$(cat $(RELIABILITY)/tsan.status))"

reliability-coverage: deps
	@$(MAKE) --no-print-directory coverage > $(RELIABILITY)/coverage.log 2>&1; echo "== coverage done"; cat $(RELIABILITY)/coverage.log | grep "^line coverage" || true

# Line coverage of the storage, index and engine modules (issue 25): their own tests, the fuzz
# corpus replay and the reliability harness's fault and crash suites at small scale, built with
# coverage instrumentation in a scratch directory of its own ($(BUILD)/coverage, so the normal
# build stays as it is), then llvm-cov's line figure per module, one "line coverage (MODULE): N %"
# line each (the goal: 85 % or more).
COVERAGE_SUITES := YapDBStorageTests|YapDBIndexTests|YapDBEngineTests|YapDBFuzzEntryTests|FaultMatrixTests|RealPathTests|CrashSweepTests
COVERAGE_MODULES := YapDBStorage YapDBIndex YapDBEngine
# The toolchain's own llvm-cov and llvm-profdata: a system LLVM of another version cannot read
# the profiles Swift writes ("unsupported instrumentation profile format version").
TOOLCHAIN_BIN := $(dir $(shell readlink -f $(shell command -v $(SWIFT) 2>/dev/null) 2>/dev/null))
LLVM_COV ?= $(TOOLCHAIN_BIN)llvm-cov
LLVM_PROFDATA ?= $(TOOLCHAIN_BIN)llvm-profdata
coverage: deps
	@echo "== line coverage ($(COVERAGE_MODULES))"
	@rm -rf $(BUILD)/coverage/*/debug/codecov $(BUILD)/coverage/merged.profdata
	@set -o pipefail; YAPDB_SCALE=small YAPDB_RELIABILITY_DIR=$(CURDIR)/$(BUILD)/coverage/figures \
	  $(SWIFT) test --enable-code-coverage --scratch-path $(BUILD)/coverage --filter '$(COVERAGE_SUITES)' > $(BUILD)/coverage.log 2>&1 \
	  || echo "coverage: some tests failed (see $(BUILD)/coverage.log); the figures below still count what ran"
	@profile=$$(find $(BUILD)/coverage -name default.profdata | head -1); \
	  if [ -z "$$profile" ]; then \
	    raw=$$(find $(BUILD)/coverage -path '*codecov*' -name '*.profraw' | head -1); \
	    [ -n "$$raw" ] || { tail -20 $(BUILD)/coverage.log; echo "coverage: no profile (the build failed?)"; exit 1; }; \
	    profile=$(BUILD)/coverage/merged.profdata; \
	    $(LLVM_PROFDATA) merge -sparse "$$(dirname "$$raw")"/*.profraw -o $$profile; \
	  fi; \
	  binary=$$(find $(BUILD)/coverage/debug/ -maxdepth 1 -name '*PackageTests.xctest' | head -1); \
	  [ -f "$$binary/Contents/MacOS/$$(basename $$binary .xctest)" ] && binary="$$binary/Contents/MacOS/$$(basename $$binary .xctest)"; \
	  for module in $(COVERAGE_MODULES); do \
	    $(LLVM_COV) report "$$binary" -instr-profile "$$profile" $(CURDIR)/Sources/$$module 2>/dev/null \
	      | awk -v m=$$module '$$1 == "TOTAL" { printf "line coverage (%s): %s (%d of %d lines)\n", m, $$10, $$8 - $$9, $$8 }'; \
	  done

# The fuzz step (issue 5, item 6): each libFuzzer target of Fuzz/ for 600 s at SCALE=full, 30 s
# at small (FUZZ_SECONDS overrides), one at a time; writes $(RELIABILITY)/fuzz-TARGET.txt with
# "fuzz executions (TARGET): N", "fuzz seconds (TARGET): N" and "fuzz corpus size (TARGET): N",
# which the report prints as they are. A crash fails the run (the report's verdict reads
# fuzz.status). FUZZ_JOBS targets run at a time (1 unless set; see Fuzz/fuzz.sh).
reliability-fuzz:
	@secs=$${FUZZ_SECONDS:-$$( [ "$(SCALE)" = full ] && echo 600 || echo 30 )}; \
	  echo "== fuzzing, $$secs s per target"; \
	  set -o pipefail; Fuzz/fuzz.sh build && Fuzz/fuzz.sh run $$secs > $(RELIABILITY)/fuzz.log 2>&1; status=$$?; cat $(RELIABILITY)/fuzz.log; \
	  awk -v dir="$(RELIABILITY)" '$$1 == "fuzz" && $$3 ~ /^[0-9]+$$/ { t = $$2; sub(":", "", t); \
	    f = dir "/fuzz-" t ".txt"; print "fuzz executions (" t "): " $$3 > f; print "fuzz seconds (" t "): " $$6 > f; \
	    print "fuzz corpus size (" t "): " $$9 " inputs" > f; print "fuzz crashes (" t "): " $$12 > f }' $(RELIABILITY)/fuzz.log; \
	  echo $$status > $(RELIABILITY)/fuzz.status; echo "== fuzzing done (exit $$status)"

reliability-report:
	@echo; echo "== reliability report (scale $(SCALE), $$(date -u +%Y-%m-%dT%H:%MZ))"
	@echo "$(RELIABILITY_FIGURES)" | tr ';' '\n' | while read -r name; do \
	  cat $(RELIABILITY)/*.txt 2>/dev/null | awk -F': ' -v n="$$name" '$$1 == n { s += $$2 } END { printf "%s: %d\n", n, s }'; \
	done
	@cat $(RELIABILITY)/*.txt 2>/dev/null | awk -F': ' '$$1 ~ /^(crash states \(|SIGKILLs with )/ { s[$$1] += $$2 } END { for (n in s) printf "%s: %d\n", n, s[n] }' | sort
	@grep -h "^line coverage" $(RELIABILITY)/coverage.log 2>/dev/null || echo "line coverage: not run (make coverage)"
	@reports=$$(grep -c "WARNING: ThreadSanitizer" $(RELIABILITY)/tsan.log 2>/dev/null); \
	  checks=$$(cat $(RELIABILITY)/tsan/*.txt 2>/dev/null | awk -F': ' '$$1 == "soak invariant checks" { s += $$2 } END { print s + 0 }'); \
	  echo "sanitizer reports (ThreadSanitizer): $${reports:-0}"; \
	  echo "soak invariant checks under ThreadSanitizer: $$checks"
	@if ls $(RELIABILITY)/fuzz-*.txt >/dev/null 2>&1; then cat $(RELIABILITY)/fuzz-*.txt; \
	  else echo "fuzz executions: not run (no fuzz step yet)"; echo "fuzz corpus size: not run (no fuzz step yet)"; fi
	@passed=$$(grep -cE "✔.* Test .* passed" $(RELIABILITY)/tests.log); failed=$$(grep -cE "✘.* Test .* failed" $(RELIABILITY)/tests.log); \
	  echo "harness tests: $$passed passed, $$failed failed"
	@status=$$(cat $(RELIABILITY)/tests.status); tsan=$$(cat $(RELIABILITY)/tsan.status); fuzz=$$(cat $(RELIABILITY)/fuzz.status 2>/dev/null || echo 0); \
	  bad=$$(cat $(RELIABILITY)/*.txt 2>/dev/null | awk -F': ' '$$1 ~ /^(lost acknowledged commits|partial commits visible|verify failures|failed recoveries|untyped or unexpected errors|soak invariant violations)$$/ { s += $$2 } END { print s + 0 }'); \
	  reports=$$(grep -c "WARNING: ThreadSanitizer" $(RELIABILITY)/tsan.log 2>/dev/null); \
	  if [ "$$status" = 0 ] && [ "$$tsan" = 0 ] && [ "$$fuzz" = 0 ] && [ "$$bad" = 0 ] && [ "$${reports:-0}" = 0 ]; then echo "verdict: PASS"; \
	  else echo "verdict: FAIL (tests exit $$status, sanitizer run exit $$tsan, fuzz step exit $$fuzz, nonzero must-be-zero figures $$bad, sanitizer reports $${reports:-0})"; exit 1; fi

# Builds the libFuzzer targets of Fuzz/ (a separate package) and runs each FUZZ_SECONDS seconds,
# one at a time; one line per target: executions, corpus size, crashes. `make reliability`
# calls it. See Fuzz/README.md.
FUZZ_SECONDS ?= 60
fuzz: deps
	@Fuzz/fuzz.sh build
	@Fuzz/fuzz.sh run $(FUZZ_SECONDS)

# YapDB against SQLite, GRDB and LMDB (Benchmarks/, its own package; never part of `make test` or
# CI). Installs liblmdb-dev and libsqlite3-dev (the system SQLite, which both the SQLite peer and
# GRDB build against) when missing (apt-get when root, otherwise prints the command), runs every
# workload at $(SIZE) (quick: 100k rows, a few minutes; full: 1M rows; huge: full plus W8's open
# and memory figures at 10M rows, which takes a long while), and rewrites docs/benchmarks.md,
# docs/benchmarks.json and the chart docs/benchmarks.png.
BENCH_SIZE = $(if $(filter huge,$(SIZE)),--size full --huge,--size $(SIZE))
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
	@Benchmarks/.build/release/yapdb-bench $(BENCH_SIZE) --work Benchmarks/.build/bench-data \
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
