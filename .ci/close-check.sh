#!/usr/bin/env bash
# Runs a command with .ci/close-checker.c preloaded and fails when any process of it closed a
# descriptor number that was not open (a double close: see the C file for why that matters), printing
# each such close's backtrace with file and line where the binary has them.
#   .ci/close-check.sh COMMAND...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/courier-close-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
cc=$(command -v clang || command -v gcc || command -v cc) || { echo "close-check: no C compiler" >&2; exit 2; }
"$cc" -shared -fPIC -O1 -o "$work/close-checker.so" "$here/close-checker.c" -ldl -lpthread || exit 2
log="$work/closes.log"
COURIER_CLOSE_LOG=$log LD_PRELOAD="$work/close-checker.so${LD_PRELOAD:+:$LD_PRELOAD}" "$@"
status=$?
if [ -s "$log" ]; then
  echo "close-check: $(grep -c '^===' "$log") close(2) call(s) on a descriptor that was not open (closed twice?):" >&2
  while IFS= read -r line; do
    if [[ $line =~ ^(/[^\(]+)\((\+0x[0-9a-f]+)\) ]] && [ -f "${BASH_REMATCH[1]}" ]; then
      where=$(addr2line -f -C -e "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]#+}" 2>/dev/null | paste -sd' ' -)
      echo "  ${where:-$line}" >&2
    else
      echo "  $line" >&2
    fi
  done < "$log" 2>&1 | { if command -v swift >/dev/null; then swift demangle --simplified; else cat; fi; } >&2
  [ "$status" -eq 0 ] && status=1
fi
exit "$status"
