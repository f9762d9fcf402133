// swift-tools-version: 6.1
import PackageDescription

// Courier's default products have no package dependencies: Foundation, Dispatch, Synchronization,
// the standard library and C targets of its own. The integrations (swift-log, swift-metrics,
// swift-distributed-tracing, swift-http-types, swift-openapi-runtime, swift-service-lifecycle) are opt-in package
// traits: a consumer that enables none resolves, fetches and builds none of their packages
// (.ci/check-consumer-package.sh checks it). Their tests live in Benchmarks/, a separate package
// that enables every trait.
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
        // Each needs its trait enabled (without it the module is empty).
        .library(name: "CourierLogging", targets: ["CourierLogging"]),
        .library(name: "CourierMetrics", targets: ["CourierMetrics"]),
        .library(name: "CourierTracing", targets: ["CourierTracing"]),
        .library(name: "CourierHTTPTypes", targets: ["CourierHTTPTypes"]),
        .library(name: "CourierOpenAPI", targets: ["CourierOpenAPI"]),
        .library(name: "CourierServiceLifecycle", targets: ["CourierServiceLifecycle"]),
    ],
    traits: [
        .trait(name: "Logging", description: "CourierLogging: a swift-log Logger per session and per request."),
        .trait(name: "Metrics", description: "CourierMetrics: OpenTelemetry's http.client.request.duration and active requests through swift-metrics."),
        .trait(name: "Tracing", description: "CourierTracing: a client span per request and W3C trace context through swift-distributed-tracing."),
        .trait(name: "HTTPTypes", description: "CourierHTTPTypes: conversions between swift-http-types' HTTPFields, HTTPRequest, HTTPResponse and Courier's types."),
        .trait(
            name: "OpenAPI", description: "CourierOpenAPI: a swift-openapi-runtime ClientTransport over a Courier Session, both bodies streamed.",
            enabledTraits: ["HTTPTypes"]),
        .trait(name: "ServiceLifecycle", description: "CourierServiceLifecycle: a swift-service-lifecycle Service that shuts a session down gracefully."),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
    ],
    targets: [
        // libcurl (loaded at run time), its event loop's reactor, its TLS trust store and the
        // guard that cancels a connect-only transfer.
        .target(name: "CCurl"),
        // The system calls Courier makes apart from libcurl: the raw-socket poller (WebSocket), a
        // readable wait, secure random bytes, swapping two files (the disk cache), thread names.
        // Package-only, not a product.
        .target(name: "CCourierSystem"),
        // The zlib, brotli and zstd decoders and the zlib encoder (loaded at run time): content
        // decoding, WebSocket's permessage-deflate and request compression. Package-only, not a product.
        .target(name: "CCodecs"),
        // The one lock type shared by the targets below; package-only, not a product.
        .target(name: "CourierLocking", swiftSettings: swiftSettings),
        // What the WebSocket client (Courier) and server (CourierTestServer) share: SHA-1, the
        // accept value, masking. Package-only, not a product.
        .target(name: "CourierWebSocketWire", swiftSettings: swiftSettings),
        // What zero dependencies costs, walled off from the API: hashes, HTTP dates, kept and
        // temporary files, descriptor I/O, percent encoding, MIME types, string encodings, shell
        // quoting and the FastPaths switch. Every declaration is `package`; it never names Courier
        // (its failures are its own, mapped to CourierError by Courier). Package-only, not a product.
        .target(name: "CourierSupport", dependencies: ["CourierWebSocketWire"], swiftSettings: swiftSettings),
        .target(
            name: "Courier", dependencies: ["CCurl", "CCodecs", "CCourierSystem", "CourierLocking", "CourierSupport", "CourierWebSocketWire"],
            swiftSettings: swiftSettings),
        .target(
            name: "CourierLogging",
            dependencies: ["Courier", .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Logging"]))],
            swiftSettings: swiftSettings),
        .target(
            name: "CourierMetrics",
            dependencies: ["Courier", "CourierLocking", .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Metrics"]))],
            swiftSettings: swiftSettings),
        .target(
            name: "CourierTracing",
            dependencies: [
                "Courier", "CourierLocking",
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
            ],
            swiftSettings: swiftSettings),
        .target(
            name: "CourierHTTPTypes",
            dependencies: ["Courier", .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["HTTPTypes"]))],
            swiftSettings: swiftSettings),
        .target(
            name: "CourierOpenAPI",
            dependencies: [
                "Courier", "CourierHTTPTypes",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: .when(traits: ["OpenAPI"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["OpenAPI"])),
            ],
            swiftSettings: swiftSettings),
        .target(
            name: "CourierServiceLifecycle",
            dependencies: [
                "Courier", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
            ],
            swiftSettings: swiftSettings),
        .target(name: "CourierTestServer", dependencies: ["CourierLocking", "CourierWebSocketWire"], swiftSettings: swiftSettings),
        // `courier demo` (README, TheCourierCommand.md) runs Courier offline against an embedded
        // CourierTestServer, so the tool links the server (about a tenth of its code in a debug
        // build). Kept on purpose: the server only starts when `demo` runs, listens on 127.0.0.1 on
        // an ephemeral port, and stops with it; the demo shares the tool's console, progress bars,
        // interrupts and options, which a separate executable could only reach through a library
        // target of their own (issue 38's API budget weighed it).
        .executableTarget(name: "courier", dependencies: ["Courier", "CourierTestServer", "CourierLocking", "CourierSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "CourierTestServerTests", dependencies: ["CourierTestServer", "CourierTestSupport", "CourierLocking"], swiftSettings: swiftSettings),
        // Helpers shared by the test targets (child processes, shutdown-report checks); not a product.
        .target(name: "CourierTestSupport", dependencies: ["CourierTestServer", "CourierLocking", "CourierTestOutput"], path: "Tests/CourierTestSupport",
                swiftSettings: swiftSettings),
        // Test-only: `swift test` prints the failures and a summary, not every test (COURIER_TEST_VERBOSE=1 for all).
        .target(name: "CourierTestOutput", path: "Tests/CourierTestOutput"),
        // Test-only: the cancellation storm, run by CourierTests and, built in release, by `cancellation-storm` (.ci/run).
        .target(name: "CourierStorm", dependencies: ["Courier", "CourierLocking"], path: "Tests/CourierStorm", swiftSettings: swiftSettings),
        .executableTarget(
            name: "cancellation-storm", dependencies: ["Courier", "CourierStorm", "CourierTestServer"], path: "Tests/CancellationStorm",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CourierTests",
            dependencies: ["Courier", "CourierTestServer", "CourierTestSupport", "CourierLocking", "CourierStorm", "CourierSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CourierCLITests", dependencies: ["courier", "Courier", "CourierTestServer", "CourierTestSupport", "CourierLocking", "CourierSupport"],
                    swiftSettings: swiftSettings),
    ]
)
