#!/usr/bin/env bash
# Builds and runs every fuzz target for a bounded time; exits non-zero if any target finds a
# crash, a failed property (precondition), a leak, a timeout (hang) or runs out of memory.
#
# Usage: Fuzz/run.sh [seconds-per-target] [target...]   (default: 20 s, every target)
# Each target starts from its committed seed corpus (Fuzz/corpus/<target>/, never modified) and
# keeps what it learns in Fuzz/.work/<target>/; reproducers go to Fuzz/artifacts/<target>-*.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
if [ "$#" -gt 0 ]; then shift; fi
if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for file in Fuzz/Targets/*.swift; do targets+=("$(basename "$file" .swift)"); done
fi

Fuzz/build.sh "${targets[@]}"

mkdir -p Fuzz/artifacts
# Swift's own crash handler would race ASan's report; libFuzzer prints the reproducer either way.
export SWIFT_BACKTRACE=enable=no
export LSAN_OPTIONS="suppressions=$PWD/Fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
failed=()
for target in "${targets[@]}"; do
  work="Fuzz/.work/$target"
  mkdir -p "$work" "Fuzz/corpus/$target"
  log="Fuzz/.work/$target.log"
  echo "=== fuzzing $target for $seconds s"
  status=0
  # -timeout: an input running longer than 10 s counts as a hang; -rss_limit_mb: memory blow-ups fail.
  "Fuzz/.build/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
    -print_final_stats=1 -artifact_prefix="Fuzz/artifacts/$target-" \
    "$work" "Fuzz/corpus/$target" >"$log" 2>&1 || status=$?
  grep -E '^(stat::number_of_executed_units|stat::new_units_added|Done )' "$log" || true
  if [ "$status" -ne 0 ]; then
    echo "!!! $target failed (exit $status); the end of its log ($log):"
    tail -n 60 "$log"
    # The failed property or sanitizer error, which a long stack trace may push out of the tail.
    grep -E 'Precondition failed|Fatal error|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)' "$log" | head -n 5 | sed 's/^/!!! /' || true
    grep -o "Test unit written to .*" "$log" | sed 's/^Test unit written to /!!! reproducer: /' || true
    failed+=("$target")
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "Fuzzing failed: ${failed[*]}. Reproduce with Fuzz/.build/<target> <reproducer> (see Fuzz/README.md)."
  exit 1
fi
echo "Fuzzing passed: ${targets[*]} (${seconds} s each)"
