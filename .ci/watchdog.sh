#!/usr/bin/env bash
# Usage: .ci/watchdog.sh SECONDS COMMAND...
# Runs COMMAND with a time limit. If it is still running when the limit passes, prints the tests
# that started and never finished, every thread's stack of each process COMMAND started, and then
# kills them all: a hang fails CI in minutes, with what is needed to find it, instead of at the
# runner's own time limit with nothing to go on.
set -uo pipefail
limit=$1
shift
log=$(mktemp)

descendants() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    echo "$child"
    descendants "$child"
  done
}

report_and_kill() {
  local pids
  pids="$1 $(descendants "$1")"
  echo
  echo "=== watchdog: '$label' still running after ${limit} s; stopping it"
  echo "--- tests that started and did not finish:"
  # Swift Testing prints "◇ Test NAME started." and later "✔ Test NAME passed…" or "✘ Test NAME …".
  grep -a '◇ Test .* started\.$' "$log" | grep -a -v '◇ Test case passing' | sed -E 's/^.*◇ Test (.*) started\.$/\1/' | sort -u > "$log.started"
  grep -a -E '[✔✘] Test .* (passed|failed) after ' "$log" \
    | sed -E -e 's/^.*[✔✘] Test (.*) (passed|failed) after .*$/\1/' -e 's/ with [0-9]+ test cases?$//' | sort -u > "$log.ended"
  comm -23 "$log.started" "$log.ended" > "$log.unfinished"
  cat "$log.unfinished"
  # Deepest processes first (the command's own children, such as the courier processes a test
  # started), the command itself last, then the unfinished tests again: a reader who sees only the
  # end of the output sees the test process's threads and what hung.
  for pid in $(echo "$pids" | tr ' ' '\n' | tac); do
    case "$(ps -o comm= -p "$pid" 2>/dev/null)" in tee|sleep|"") continue ;; esac
    if command -v gdb >/dev/null 2>&1; then
      echo "--- stacks of $pid: $(ps -o args= -p "$pid" 2>/dev/null | cut -c1-160)"
      timeout 120 gdb -p "$pid" -batch -ex 'set pagination off' -ex 'thread apply all bt 40' 2>/dev/null \
        | grep -E '^(Thread|#)' | head -n 4000
    fi
  done
  echo "=== watchdog: the tests that started and did not finish (again, after the stacks):"
  cat "$log.unfinished"
  kill -KILL $pids 2>/dev/null
}

label="$*"
"$@" > >(tee "$log") 2>&1 &
command_pid=$!
(
  # Sleep in short steps so the watchdog ends soon after the command does.
  waited=0
  while [ "$waited" -lt "$limit" ]; do
    sleep 5
    waited=$((waited + 5))
    kill -0 "$command_pid" 2>/dev/null || exit 0
  done
  report_and_kill "$command_pid"
) &
watchdog_pid=$!
wait "$command_pid"
status=$?
kill "$watchdog_pid" 2>/dev/null
wait "$watchdog_pid" 2>/dev/null
rm -f "$log" "$log.started" "$log.ended" "$log.unfinished"
exit "$status"
