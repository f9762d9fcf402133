#!/usr/bin/env bash
# Fails when a test uses Swift Testing's `.timeLimit` trait. It counts the time a test waits for a
# test-server place (ServerTestAdmission), so under a loaded whole-suite run a test can fail its limit
# before it has started; the project's `.hangLimit` (Tests/CourierTestSupport/HangLimit.swift) does
# not count that wait and reports where a real hang stands. Seen in CI-like runs: five
# DuplexStreamTests failed this way at load 25.
set -euo pipefail
cd "$(dirname "$0")/.."
if hits=$(grep -rn --include='*.swift' -E '\.timeLimit\(' Tests | grep -v '^Tests/CourierTestSupport/HangLimit.swift:'); then
  echo "lint-tests: use .hangLimit(.seconds(120)) instead of Swift Testing's .timeLimit:" >&2
  echo "$hits" >&2
  exit 1
fi
echo "lint-tests: no test uses .timeLimit (the project's .hangLimit does not count a wait for a server place)"
