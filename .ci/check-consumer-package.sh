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

cd "$work/consumer"
swift package resolve
swift build --build-tests
swift run App
swift test --skip-build
echo "check-consumer-package: README's dependency line resolves and builds"
