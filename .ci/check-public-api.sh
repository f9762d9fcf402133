#!/usr/bin/env bash
# Courier's public API is what a user should call: no `_`-prefixed public symbol and none of the
# engine's internals (RequestEngine, RequestShell, Locked, ...) in the public API of Courier or
# CourierTestServer. Reads the debug build in .build (run after `swift build`).
#
# Two views of the same modules: the symbol graph (`swift-symbolgraph-extract`, what DocC and the
# Swift Package Index show) and the API dump (`swift-api-digester -dump-sdk`, which also lists the
# underscored names the symbol graph leaves out but code completion still offers).
set -euo pipefail
cd "$(dirname "$0")/.."
modules=.build/debug/Modules
# The C modules Courier imports.
modulemaps=(-Xcc -fmodule-map-file=.build/debug/CCurl.build/module.modulemap -Xcc -fmodule-map-file=.build/debug/CCodecs.build/module.modulemap
  -Xcc -fmodule-map-file=.build/debug/CCourierSystem.build/module.modulemap)
target=$(swift -print-target-info | python3 -c 'import json,sys; print(json.load(sys.stdin)["target"]["triple"])')
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for module in Courier CourierTestServer; do
  swift-symbolgraph-extract -module-name "$module" -target "$target" -I "$modules" "${modulemaps[@]}" \
    -minimum-access-level public -output-dir "$out" >/dev/null
  swift-api-digester -dump-sdk -module "$module" -target "$target" -I "$modules" "${modulemaps[@]}" \
    -o "$out/$module.api.json" >/dev/null 2>&1
done
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
internal = {"RequestEngine", "RequestShell", "RequestInternals", "RequestEngineAccess", "Locked", "engineAccess",
            "internals", "shell", "engine", "runOnExecutor", "withIsolatedEngine"}
problems = []
for module in ("Courier", "CourierTestServer"):
    graph = json.load(open(os.path.join(out, f"{module}.symbols.json")))
    for symbol in graph["symbols"]:
        path = symbol["pathComponents"]
        if any(p.startswith("_") for p in path) or any(p.split("(")[0] in internal for p in path):
            problems.append(f"{module} symbol graph: {'.'.join(path)}")
    def walk(node, path):
        name = node.get("name", "")
        kind = node.get("kind")
        here = path + [name]
        synthesized = kind == "Import" or name.startswith("__derived_") or name.startswith("__") and kind == "TypeAlias"
        declared = kind not in ("Conformance", "TypeNominal", "TypeNameAlias", "TypeFunc", "Root", "Import")
        if node.get("isInternal"):
            return  # package or internal: not part of the public API
        if declared and not synthesized and node.get("moduleName") == module and (name.startswith("_") or name in internal):
            problems.append(f"{module} API: {'.'.join(p for p in here if p)} ({kind})")
        for child in node.get("children", []):
            walk(child, here)
    walk(json.load(open(os.path.join(out, f"{module}.api.json")))["ABIRoot"], [])
for problem in problems:
    print("public-api:", problem)
if problems:
    sys.exit(1)
print("public-api: no underscored or internal symbol in Courier's or CourierTestServer's public API")
PY
