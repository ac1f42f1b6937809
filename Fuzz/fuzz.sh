#!/usr/bin/env bash
# Builds and runs the libFuzzer targets, one after another (they share the machine's cores).
#   Fuzz/fuzz.sh build                 builds every target (debug, -sanitize=fuzzer,address)
#   Fuzz/fuzz.sh run SECONDS [TARGET…] runs each target SECONDS seconds; prints one line per
#                                       target: executions, corpus size, crashes. Exits 1 when
#                                       a target crashed (the input is in .build/artifacts/).
#                                       FUZZ_JOBS=N runs N targets at a time (default 1).
# The working corpus of a target is .build/corpus/TARGET, seeded from Corpus/TARGET and
# Crashes/TARGET and kept between runs; the repository's Corpus/ is only read (see README.md
# for merging new coverage back).
set -uo pipefail
cd "$(dirname "$0")"
SWIFT=${SWIFT:-swift}
TARGETS=(records recovery operations pages postings query maintenance)
FLAGS=(-malloc_limit_mb=256 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1)

build() {
    # SwiftPM does not notice files added to a path dependency's targets: drop its plan.
    rm -f .build/debug.yaml .build/debug/description.json
    for target in "${TARGETS[@]}"; do
        "$SWIFT" build -c debug --product "fuzz-$target" --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address 2>&1 \
            | grep -E "error:|warning: unre" && return 1
    done
    return 0
}

# Runs one target for SECONDS seconds and prints its line; returns 1 when it crashed.
one() {
    local target=$1 seconds=$2
    local corpus=.build/corpus/$target log=.build/logs/$target.log
    mkdir -p "$corpus"
    cp -n Corpus/"$target"/* "$corpus"/ 2>/dev/null
    cp -n Crashes/"$target"/* "$corpus"/ 2>/dev/null
    ASAN_OPTIONS=detect_leaks=1 SWIFT_BACKTRACE=enable=no ./.build/debug/fuzz-"$target" "$corpus" -max_total_time="$seconds" "${FLAGS[@]}" -detect_leaks=1 \
        -artifact_prefix=.build/artifacts/"$target"- >"$log" 2>&1
    local status=$?
    local executions=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$')
    # libFuzzer's own count of the corpus it keeps ("corp: N/SIZE" on its last status line).
    local kept=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -1 | cut -d' ' -f2)
    local crashes=0
    if [ $status -ne 0 ]; then crashes=1; fi
    local report="fuzz $target: ${executions:-0} executions in ${seconds} s, corpus ${kept%%/*} inputs (${kept#*/}), ${crashes} crashes"
    if [ $status -ne 0 ]; then
        report+=$'\n'"$(grep -E "FUZZ FINDING|Fatal error|ERROR: |SUMMARY" "$log" | head -3 | sed 's/^/    /')"
        report+=$'\n'"    input: $(ls -t .build/artifacts/"$target"-* 2>/dev/null | head -1); log: Fuzz/$log"
    fi
    echo "$report"
    return $crashes
}

run() {
    local seconds=$1; shift
    local selected=("$@")
    [ ${#selected[@]} -eq 0 ] && selected=("${TARGETS[@]}")
    local jobs=${FUZZ_JOBS:-1} failed=0 running=0
    mkdir -p .build/artifacts .build/logs
    for target in "${selected[@]}"; do
        if [ "$running" -ge "$jobs" ]; then
            wait -n || failed=1
            running=$((running - 1))
        fi
        one "$target" "$seconds" &
        running=$((running + 1))
    done
    while [ "$running" -gt 0 ]; do
        wait -n || failed=1
        running=$((running - 1))
    done
    return $failed
}

case "${1:-}" in
build) build ;;
run) shift; [ $# -ge 1 ] || { echo "usage: fuzz.sh run SECONDS [TARGET…]"; exit 2; }; run "$@" ;;
*) echo "usage: fuzz.sh build | run SECONDS [TARGET…]"; exit 2 ;;
esac
