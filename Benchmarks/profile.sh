#!/usr/bin/env bash
# Profiles where YapDB spends its time in one workload: perf records only YapDB's timed
# sections (the harness switches perf on and off around them through --perf-control), then
# prints the hottest functions by self time and the heaviest YapDB functions including callees.
#
#   Benchmarks/profile.sh W4 [quick|full]      (needs perf: apt-get install linux-perf)
set -euo pipefail
cd "$(dirname "$0")"
workload=${1:?usage: profile.sh WORKLOAD [quick|full]}
size=${2:-full}
swift build -c release --product yapdb-bench 2>&1 | { grep -E "error" || true; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/ctl" "$dir/ack"
perf record -F 1999 -g -D -1 --control "fifo:$dir/ctl,$dir/ack" -o "$dir/perf.data" -- \
  .build/release/yapdb-bench --size "$size" --only "$workload" --engines yapdb --work .build/profile-data \
  --perf-control "$dir/ctl,$dir/ack" \
  >/dev/null 2>"$dir/log" || { cat "$dir/log"; exit 1; }
grep -E "^  $workload " "$dir/log" || true
echo
echo "Self time (top functions):"
perf report -i "$dir/perf.data" --no-children --percent-limit 1.5 --stdio -g none 2>/dev/null \
  | grep -E '^ +[0-9]' | swift demangle --simplified | sed -E 's/ +/ /g' | cut -c1-200 | head -25
echo
echo "Including callees (YapDB's own functions):"
perf report -i "$dir/perf.data" --children --percent-limit 3 --stdio -g none 2>/dev/null \
  | grep -E '^ +[0-9]' | swift demangle --simplified | sed -E 's/ +/ /g' \
  | grep -vE 'YapDBBench|Runner\.|partial apply|thunk for|__libc|_start|main$|Result<|DispatchQueue|timed\(|closure #[0-9]+ in (Runner|YapStore|YapReader)' \
  | cut -c1-200 | head -30
