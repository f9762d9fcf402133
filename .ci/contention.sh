#!/usr/bin/env bash
# Usage: .ci/contention.sh [-n BUSY_PER_CORE] COMMAND...
# Runs COMMAND while BUSY_PER_CORE (default 2) busy processes per core compete with it for the CPU,
# as a loaded CI machine or a laptop compiling something else does. The busy processes are this
# script's own children: they are stopped when COMMAND ends, fails, or this script is interrupted
# or killed with TERM, and COMMAND's exit status is this script's.
set -uo pipefail
per_core=2
if [ "${1:-}" = "-n" ]; then
  per_core=$2
  shift 2
fi
[ "$#" -gt 0 ] || { echo "usage: $0 [-n BUSY_PER_CORE] COMMAND..." >&2; exit 2; }

cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc)
count=$((cores * per_core))
busy=()
stop_busy() {
  [ "${#busy[@]}" -gt 0 ] && kill "${busy[@]}" 2>/dev/null
  [ "${#busy[@]}" -gt 0 ] && wait "${busy[@]}" 2>/dev/null
  busy=()
}
trap 'stop_busy' EXIT
trap 'stop_busy; exit 130' INT
trap 'stop_busy; exit 143' TERM

for _ in $(seq 1 "$count"); do
  # Pure CPU at the command's priority; every few hundred thousand turns it checks that this
  # script still runs, so even a SIGKILL of the script leaves no busy process behind for long.
  bash -c 'i=0; while :; do i=$((i + 1)); if [ "$i" -ge 300000 ]; then kill -0 "$1" 2>/dev/null || exit 0; i=0; fi; done' busy "$$" &
  busy+=("$!")
done
echo "contention: $count busy processes on $cores cores (pids ${busy[*]})"

"$@"
status=$?
stop_busy
exit "$status"
