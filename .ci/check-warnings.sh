#!/usr/bin/env bash
# Fails when compiling Courier's own sources and tests (Sources/, Tests/, Fuzz/) prints a warning.
#
# Warnings are printed only when a file is compiled, and the build step before this one has
# already compiled everything, so this script builds the package again from scratch in a scratch
# directory of its own (COURIER_WARNINGS_SCRATCH, default .build-warnings) and reads that log.
# Warnings from the Benchmarks package and from system or toolchain headers are ignored.
# Usage: .ci/check-warnings.sh [BUILD_LOG]   (with a log, nothing is built: the log is checked)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

if [ $# -ge 1 ]; then
  log=$1
else
  scratch=${COURIER_WARNINGS_SCRATCH:-.build-warnings}
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  rm -rf "$scratch"
  if ! swift build --build-tests --scratch-path "$scratch" >"$log" 2>&1; then
    cat "$log"
    echo "check-warnings: the build failed" >&2
    exit 1
  fi
fi

# `path:line:column: warning: text`, for files of this package only (not Benchmarks/).
warnings=$(grep -E '^[^ ]+:[0-9]+:[0-9]+: warning: ' "$log" \
  | grep -E "^(${root}/)?(Sources|Tests|Fuzz)/" \
  | sort -u || true)

if [ -n "$warnings" ]; then
  echo "$warnings"
  echo
  echo "check-warnings: $(echo "$warnings" | wc -l) warning(s) in Courier's own sources and tests" >&2
  exit 1
fi
echo "check-warnings: no warnings in Courier's own sources and tests"
