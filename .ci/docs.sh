#!/usr/bin/env bash
# Builds Courier's two DocC catalogs with the toolchain's own tools (no package plugin, no
# dependency) and fails on anything a reader would trip over:
#
#   - a DocC warning: a broken ``symbol link``, a doc comment that documents some parameters but
#     not all, an ambiguous link (`docc convert --warnings-as-errors`);
#   - a public symbol of Courier or CourierTestServer without a `///` doc comment (read from the
#     symbol graph, extracted without inherited docs; compiler-synthesised members excepted);
#   - a top-level public symbol, or an article, that no Topics group curates: the module's landing
#     page must have no group DocC made up by itself ("Classes", "Structures", "Articles"...).
#     Members are fine on their type's automatic page; extensions of other modules' types are
#     fine under DocC's "Extended Modules".
#
# Usage: .ci/docs.sh                  build, check, print a summary (what .ci/run does)
#        .ci/docs.sh --graphs-only    build and extract the symbol graphs, nothing else
#                                     (.ci/docs-preview.sh uses it)
#        .ci/docs.sh --integrations   the same checks for the integration modules (CourierLogging,
#                                     CourierMetrics, CourierTracing, CourierHTTPTypes, CourierOpenAPI,
#                                     CourierServiceLifecycle), read from Benchmarks/'s build,
#                                     the one build that enables their traits (without a trait its
#                                     module is empty); .ci/run runs it after building Benchmarks/
# Output: .build/docs/symbol-graphs/<Module>/ and .build/docs/<Module>.doccarchive (a static site:
# serve the directory, or use .ci/docs-preview.sh for a live preview).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
graphs_only=0
[ "${1:-}" = "--graphs-only" ] && graphs_only=1

modules=(Courier CourierTestServer)
build=(swift build)
bin=.build/debug
if [ "${1:-}" = "--integrations" ]; then
  modules=(CourierLogging CourierMetrics CourierTracing CourierHTTPTypes CourierOpenAPI CourierServiceLifecycle)
  build=(swift build --package-path Benchmarks)
  bin=Benchmarks/.build/debug
fi
out=.build/docs
mkdir -p "$out"

# The debug build's module files are what the symbol graphs are extracted from (an up-to-date
# build makes this a no-op: .ci/run has built everything in the step before).
for module in "${modules[@]}"; do
  if ! log=$("${build[@]}" --target "$module" 2>&1); then
    printf '%s\n' "$log" >&2
    echo "docs: ${build[*]} --target $module failed" >&2
    exit 1
  fi
  printf '%s\n' "$log" | tail -n 1 >&2
done

target=$(swift -print-target-info | python3 -c 'import json,sys; print(json.load(sys.stdin)["target"]["triple"])')
for module in "${modules[@]}"; do
  rm -rf "$out/symbol-graphs/$module"
  mkdir -p "$out/symbol-graphs/$module"
  # -skip-inherited-docs: a symbol that has no comment of its own must not borrow its protocol's
  # (the check below would not see it). Extension block symbols: extensions of Foundation's and
  # the standard library's types (URLRequest.method, URL: URLConvertible) get pages of their own.
  swift-symbolgraph-extract -module-name "$module" -target "$target" -I "$bin/Modules" \
    -Xcc -fmodule-map-file="$bin/CCurl.build/module.modulemap" -Xcc -fmodule-map-file="$bin/CCodecs.build/module.modulemap" \
    -Xcc -fmodule-map-file="$bin/CCourierSystem.build/module.modulemap" \
    -minimum-access-level public -skip-inherited-docs -emit-extension-block-symbols \
    -output-dir "$out/symbol-graphs/$module" >/dev/null
done
[ "$graphs_only" = 1 ] && exit 0

# Warnings are errors, but checked from the diagnostics file rather than with
# --warnings-as-errors, so that the archive is still written and its curation checked too.
failed=()
for module in "${modules[@]}"; do
  catalog=Sources/$module/$module.docc
  archive=$out/$module.doccarchive
  diagnostics=$out/$module.diagnostics.json
  rm -rf "$archive" "$diagnostics"
  echo "docs: docc convert $catalog" >&2
  if ! docc convert "$catalog" --additional-symbol-graph-dir "$out/symbol-graphs/$module" \
      --output-dir "$archive" --fallback-display-name "$module" --fallback-bundle-identifier "org.courier.$module" \
      --diagnostics-file "$diagnostics" >"$out/$module.docc.log" 2>&1; then
    failed+=("$module")
  fi
done

python3 - "$out" "${failed[*]:-}" "${modules[@]}" <<'PY'
import json, os, sys
out, docc_failed, modules = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
problems = []
summary = []
for module in modules:
    # DocC's own diagnostics (warnings are errors here).
    path = os.path.join(out, f"{module}.diagnostics.json")
    diagnostics = json.load(open(path))["diagnostics"] if os.path.exists(path) else []
    for d in diagnostics:
        source = d.get("source", "").replace("file://" + os.getcwd() + "/", "")
        line = d.get("range", {}).get("start", {}).get("line", "?")
        problems.append(f"{source}:{line}: docc {d['severity']}: {d['summary']}")
    if module in docc_failed:
        problems.append(f"{module}: docc convert failed; see {out}/{module}.docc.log")

    # Doc comments, from the symbol graphs (the module's own and its extensions of other modules).
    graphs = os.path.join(out, "symbol-graphs", module)
    total = undocumented = 0
    for name in sorted(os.listdir(graphs)):
        if not name.endswith(".symbols.json"):
            continue
        for symbol in json.load(open(os.path.join(graphs, name)))["symbols"]:
            if symbol["kind"]["identifier"] == "swift.extension":
                continue  # an extension block: its members carry the comments
            if "::SYNTHESIZED::" in symbol["identifier"]["precise"] or "location" not in symbol:
                continue  # made by the compiler (Hashable, RawRepresentable, Codable, protocol defaults)
            total += 1
            if "docComment" not in symbol:
                undocumented += 1
                location = symbol["location"]
                source = location["uri"].replace("file://" + os.getcwd() + "/", "")
                problems.append(f"{source}:{location['position']['line'] + 1}: public symbol without a doc comment: "
                                f"{'.'.join(symbol['pathComponents'])}")

    # Curation: every group on the landing page is one the catalog wrote, except "Extended Modules".
    page = os.path.join(out, f"{module}.doccarchive", "data", "documentation", f"{module.lower()}.json")
    uncurated = []
    curated_groups = 0
    if os.path.exists(page):
        for section in json.load(open(page)).get("topicSections", []):
            if not section.get("generated"):
                curated_groups += 1
            elif section.get("title") != "Extended Modules":
                for identifier in section["identifiers"]:
                    uncurated.append((section.get("title", "?"), identifier.rsplit("/", 1)[-1]))
    for title, name in uncurated:
        problems.append(f"Sources/{module}/{module}.docc: ``{name}`` is in no Topics group (DocC put it under \"{title}\")")
    summary.append(f"docs: {module}: {total} public symbols, {undocumented} without a doc comment; "
                   f"{curated_groups} curated topic groups on the landing page, {len(uncurated)} top-level symbols or articles uncurated; "
                   f"{len(diagnostics)} DocC diagnostics")

for problem in problems:
    print(problem)
for line in summary:
    print(line)
if problems:
    print(f"docs: FAILED ({len(problems)} problems)")
    sys.exit(1)
print("docs: the catalogs build clean: " + ", ".join(f"{out}/{module}.doccarchive" for module in modules))
PY
echo "docs: $(( $(date +%s) - started )) s"
