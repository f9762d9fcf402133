#!/usr/bin/env bash
# swift-format (in the toolchain) lints Sources/ and Tests/ against the committed .swift-format:
# 4-space indentation, 150 columns, existing line breaks respected, and the rules that would
# rewrite the code base's deliberate idioms turned off (one-line `struct S { let a; let b }`,
# `case let (a?, b?)`, unsorted imports, `forEach`, numeric literals as written).
#
#   .ci/format-lint.sh            lint; fails on any finding (--strict: warnings too)
#   .ci/format-lint.sh --fix      format the files in place, then lint
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--fix" ]; then
  swift-format format --in-place --recursive --parallel Sources Tests
fi
started=$(date +%s)
if swift-format lint --strict --recursive --parallel Sources Tests; then
  echo "format-lint: Sources and Tests match .swift-format ($(( $(date +%s) - started )) s)"
else
  echo "format-lint: FAILED: run .ci/format-lint.sh --fix (or swift-format format -i -r Sources Tests) and commit" >&2
  exit 1
fi
