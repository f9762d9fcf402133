#!/usr/bin/env bash
# Builds a throwaway package that depends on Courier exactly as README's Install section says,
# with the repository URL replaced by a clone of this checkout: the documented dependency line
# must resolve and build on a fresh checkout (no tags needed).
#
# The clone is made at a path ending in /courier, so that the package identity is `courier`, as
# it is for the repository's own URL, and its `main` branch is set to this checkout's HEAD (the
# committed state; uncommitted changes are not part of the check).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/courier-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The dependency and product lines of README's Install block (```swift ... ``` after "## Install").
install=$(awk '/^## Install/{found=1} found && /^```swift/{inblock=1; next} inblock && /^```/{exit} inblock{print}' README.md)
dependency=$(printf '%s\n' "$install" | grep -E '^\s*\.package\(url:' | head -n 1 | sed -E 's/^\s+//; s/,\s*$//')
if [ -z "$dependency" ]; then
  echo "check-consumer-package: no .package(url: ...) line in README's Install section" >&2
  exit 1
fi
products=$(printf '%s\n' "$install" | grep -E '^\s*\.product\(' | sed -E 's/^\s+//; s/,?\s*(\/\/.*)?$//')
library=$(printf '%s\n' "$products" | grep 'name: "Courier"' | head -n 1)
testing=$(printf '%s\n' "$products" | grep 'name: "CourierTestServer"' | head -n 1)
if [ -z "$library" ] || [ -z "$testing" ]; then
  echo "check-consumer-package: README's Install section must name the Courier and CourierTestServer products" >&2
  exit 1
fi

git clone --quiet --no-hardlinks "$root" "$work/courier"
git -C "$work/courier" checkout --quiet -B main "$(git -C "$root" rev-parse HEAD)"
local_dependency=$(printf '%s\n' "$dependency" | sed -E "s#url: *\"[^\"]*\"#url: \"file://$work/courier\"#")
echo "README:   $dependency"
echo "checked:  $local_dependency"

mkdir -p "$work/consumer/Sources/App" "$work/consumer/Tests/AppTests"
cat > "$work/consumer/Package.swift" <<SWIFT
// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Consumer",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [
        $local_dependency,
    ],
    targets: [
        .executableTarget(name: "App", dependencies: [$library]),
        .testTarget(name: "AppTests", dependencies: [$library, $testing]),
    ]
)
SWIFT
cat > "$work/consumer/Sources/App/main.swift" <<'SWIFT'
import Courier

struct User: Decodable, Sendable { let nick: String; let level: Int }

let api = Session(baseURL: URL(string: "https://api.example.com/v2/"), headers: ["User-Agent": "Consumer/1.0"])
let request = api.request("users/42").validate()
print("Courier \(Courier.version): \(type(of: request)) built")
SWIFT
cat > "$work/consumer/Tests/AppTests/AppTests.swift" <<'SWIFT'
import Courier
import CourierTestServer
import Testing

@Test func theTestServerAnswers() async throws {
    let server = try TestServer()
    server.route("/hello") { _ in .text("hi") }
    let text = try await Session(baseURL: server.baseURL).request("hello").serializingString().value
    #expect(text == "hi")
    #expect(server.shutdown().isClean)
}
SWIFT
sed -i 's/^import Courier$/import Courier\nimport Foundation/' "$work/consumer/Sources/App/main.swift"

# What a package may build: its own targets and Courier's (the integration targets included,
# though a consumer that does not name them does not build them).
courier_targets=$(cd "$work/courier" && swift package dump-package | python3 -c 'import json,sys; print(" ".join(t["name"] for t in json.load(sys.stdin)["targets"]))')

# Fails unless the consumer at $1 fetched exactly the packages named after it (sorted, by
# identity) and built no module outside its own targets and Courier's.
expect_packages() {
  local consumer=$1; shift
  local fetched resolved built module
  fetched=$(ls "$consumer/.build/checkouts" 2>/dev/null | sort | tr '\n' ' ' | sed 's/ $//')
  resolved=$(python3 -c 'import json,sys; print(" ".join(sorted(p["identity"] for p in json.load(open(sys.argv[1]))["pins"])))' "$consumer/Package.resolved")
  echo "  fetched (.build/checkouts): ${fetched:-nothing}"
  echo "  resolved (Package.resolved): ${resolved:-nothing}"
  if [ "$fetched" != "$*" ] || [ "$resolved" != "$*" ]; then
    echo "check-consumer-package: $consumer should fetch and resolve exactly: $*" >&2
    exit 1
  fi
  built=$(find "$consumer/.build" -maxdepth 4 -path '*/debug/*.build' -type d -printf '%f\n' | sed 's/\.build$//' | sort -u | tr '\n' ' ')
  echo "  built modules: $built"
  BUILT_MODULES=$built
}

cd "$work/consumer"
started=$SECONDS
swift package resolve
swift build --build-tests
swift run App
swift test --skip-build

# The default consumer (no trait enabled) resolves, fetches and builds nothing beyond Courier.
echo "A consumer that enables no trait:"
expect_packages "$work/consumer" courier
for module in $BUILT_MODULES; do
  case " App AppTests ConsumerPackageTests ConsumerPackageDiscoveredTests $courier_targets " in
    *" $module "*) ;;
    *) echo "check-consumer-package: the default consumer built $module, which is not Courier's nor its own" >&2; exit 1 ;;
  esac
done
# (`swift build` compiles a dependency's other library and executable targets too, as the
# `courier` tool shows: the integration modules are compiled, empty without their traits. What
# matters is that no module of another package is.)
for module in Logging Metrics CoreMetrics Tracing Instrumentation HTTPTypes OpenAPIRuntime ServiceLifecycle AsyncAlgorithms; do
  case " $BUILT_MODULES " in
    *" $module "*) echo "check-consumer-package: the default consumer built $module" >&2; exit 1 ;;
  esac
done
echo "check-consumer-package: README's dependency line resolves and builds, and fetches and builds nothing but Courier ($((SECONDS - started)) s)"

# A consumer that opts in to every integration: the traits fetch their packages, and the
# integration products build and work.
mkdir -p "$work/integrations/Sources/App"
traced_dependency=$(printf '%s\n' "$local_dependency" | sed -E 's/\)$/, traits: ["Logging", "Metrics", "Tracing", "HTTPTypes", "OpenAPI", "ServiceLifecycle"])/')
echo "opting in: $traced_dependency"
cat > "$work/integrations/Package.swift" <<SWIFT
// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "IntegrationsConsumer",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [
        $traced_dependency,
        // The app logs with swift-log itself (it names Logger).
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        .executableTarget(name: "App", dependencies: [
            .product(name: "Courier", package: "courier"),
            .product(name: "CourierLogging", package: "courier"),
            .product(name: "CourierMetrics", package: "courier"),
            .product(name: "CourierTracing", package: "courier"),
            .product(name: "CourierHTTPTypes", package: "courier"),
            .product(name: "CourierOpenAPI", package: "courier"),
            .product(name: "CourierServiceLifecycle", package: "courier"),
            .product(name: "Logging", package: "swift-log"),
        ]),
    ]
)
SWIFT
cat > "$work/integrations/Sources/App/main.swift" <<'SWIFT'
import Courier
import CourierLogging
import CourierMetrics
import CourierHTTPTypes
import CourierOpenAPI
import CourierServiceLifecycle
import CourierTracing
import Foundation
import Logging

let api = Session(eventMonitors: [LoggerMonitor(logger: Logger(label: "consumer")), MetricsMonitor(), TracingMonitor()])
let request = api.request("http://127.0.0.1:9/").logger(Logger(label: "request"))
let transport = CourierTransport(session: api)
let service = SessionService(api, gracePeriod: .seconds(10))
print("Courier \(Courier.version) with swift-log, swift-metrics, swift-distributed-tracing, swift-http-types, swift-openapi-runtime and swift-service-lifecycle: \(type(of: request)), \(type(of: transport)) and \(type(of: service)) built")
SWIFT
cd "$work/integrations"
started=$SECONDS
swift package resolve
# The app's product only (`swift build` would compile the courier tool and CourierTestServer too).
swift run App
echo "A consumer that enables the Logging, Metrics, Tracing, HTTPTypes, OpenAPI and ServiceLifecycle traits:"
expect_packages "$work/integrations" courier swift-async-algorithms swift-collections swift-distributed-tracing swift-http-types swift-log swift-metrics swift-openapi-runtime swift-service-lifecycle
echo "check-consumer-package: a consumer that enables the traits fetches swift-log, swift-metrics, swift-distributed-tracing, swift-http-types, swift-openapi-runtime and swift-service-lifecycle (with swift-async-algorithms and swift-collections), and builds the integrations ($((SECONDS - started)) s)"
