// swift-tools-version: 6.1
import PackageDescription

// Courier has no package dependencies: Foundation, Dispatch, Synchronization, the standard
// library and C targets of its own. Benchmarks/ is a separate package.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Courier",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        .library(name: "CourierTestServer", targets: ["CourierTestServer"]),
        .executable(name: "courier", targets: ["courier"]),
    ],
    targets: [
        .target(name: "CCurl"),
        // The one lock type shared by the targets below; package-only, not a product.
        .target(name: "CourierLocking", swiftSettings: swiftSettings),
        // What the WebSocket client (Courier) and server (CourierTestServer) share: SHA-1, the
        // accept value, masking. Package-only, not a product.
        .target(name: "CourierWebSocketWire", swiftSettings: swiftSettings),
        .target(name: "Courier", dependencies: ["CCurl", "CourierLocking", "CourierWebSocketWire"], swiftSettings: swiftSettings),
        .target(name: "CourierTestServer", dependencies: ["CourierLocking", "CourierWebSocketWire"], swiftSettings: swiftSettings),
        .executableTarget(name: "courier", dependencies: ["Courier", "CourierTestServer", "CourierLocking"], swiftSettings: swiftSettings),
        .testTarget(name: "CourierTestServerTests", dependencies: ["CourierTestServer", "CourierTestSupport", "CourierLocking"], swiftSettings: swiftSettings),
        // Helpers shared by the test targets (child processes, shutdown-report checks); not a product.
        .target(name: "CourierTestSupport", dependencies: ["CourierTestServer", "CourierLocking", "CourierTestOutput"], path: "Tests/CourierTestSupport",
                swiftSettings: swiftSettings),
        // Test-only: `swift test` prints the failures and a summary, not every test (COURIER_TEST_VERBOSE=1 for all).
        .target(name: "CourierTestOutput", path: "Tests/CourierTestOutput"),
        .testTarget(name: "CourierTests", dependencies: ["Courier", "CourierTestServer", "CourierTestSupport", "CourierLocking"], swiftSettings: swiftSettings),
        .testTarget(name: "CourierCLITests", dependencies: ["courier", "Courier", "CourierTestServer", "CourierTestSupport", "CourierLocking"],
                    swiftSettings: swiftSettings),
    ]
)
