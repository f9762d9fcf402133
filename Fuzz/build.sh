#!/usr/bin/env bash
# Builds Courier's libFuzzer targets: Fuzz/.build/<target> for every Fuzz/Targets/<target>.swift.
#
# The Courier module (with the targets it depends on, CourierSupport among them) is compiled once
# with coverage instrumentation and AddressSanitizer (`-sanitize=fuzzer,address`, testable so the
# targets reach internal parsers; CourierSupport's are `package`), then each target
# is one small Swift file linked against its object files, with libFuzzer's main.
#
# Usage: Fuzz/build.sh [target...]     (default: every target)
# Environment: FUZZ_OPT=-O builds the targets optimised (default -Onone -g, for readable reports).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scratch="$root/.build-fuzz"
out="$root/Fuzz/.build"
mkdir -p "$out"

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for file in Fuzz/Targets/*.swift; do targets+=("$(basename "$file" .swift)"); done
fi

echo "Building Courier with -sanitize=fuzzer,address into $scratch"
swift build --target Courier --scratch-path "$scratch" \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing -Xswiftc -g

bin="$(swift build --target Courier --scratch-path "$scratch" --show-bin-path)"
objects=()
for module in Courier CourierSupport CourierLocking CourierWebSocketWire CCurl CCodecs CCourierSystem; do
  for object in "$bin/$module.build"/*.o; do objects+=("$object"); done
done

# SwiftPM compiles the package's modules with its identity as the package name; the targets pass
# the same so that they reach CourierSupport's `package` declarations.
package_name=$(basename "$root" | tr '[:upper:]' '[:lower:]' | sed -e 's/[^a-z0-9_]/_/g' -e 's/^[0-9]/_&/')

for target in "${targets[@]}"; do
  source="Fuzz/Targets/$target.swift"
  [ -f "$source" ] || { echo "no such target: $target ($source)" >&2; exit 2; }
  echo "Linking fuzz target $target"
  swiftc -swift-version 6 -parse-as-library ${FUZZ_OPT:--Onone} -g \
    -sanitize=fuzzer,address \
    -module-name "Fuzz_$target" -package-name "$package_name" \
    -I "$bin/Modules" \
    -Xcc -fmodule-map-file="$bin/CCurl.build/module.modulemap" -Xcc -I -Xcc "$root/Sources/CCurl/include" \
    -Xcc -fmodule-map-file="$bin/CCodecs.build/module.modulemap" -Xcc -I -Xcc "$root/Sources/CCodecs/include" \
    -Xcc -fmodule-map-file="$bin/CCourierSystem.build/module.modulemap" -Xcc -I -Xcc "$root/Sources/CCourierSystem/include" \
    -use-ld=lld "$source" "${objects[@]}" -ldl \
    -o "$out/$target"
done
echo "Built: ${targets[*]} (in $out)"
