// swift-tools-version: 6.1
import PackageDescription

// Courier's benchmarks: a package of its own so the library keeps zero dependencies.
// One executable per client so that each client's peak RSS is its own:
//   bench-courier     Courier's public API (curl and URLSession transports) and its transport driven directly
//   bench-urlsession  raw FoundationNetworking URLSession (async data(for:) / download(for:))
//   bench-ahc         AsyncHTTPClient 1.37 (execute + collect, or streaming into a file descriptor; HTTPS
//                     with the benchmark's CA as its only trust root through NIOSSL)
//   bench-ahc-sse     AsyncHTTPClient's streamed body fed to mattt/EventSource's parser (workload K); an
//                     executable of its own because EventSource links FoundationNetworking, which
//                     bench-ahc does not load (its RSS in the other workloads stays as it was)
//   bench-ws-server   workload L's WebSocket echo server (hummingbird-websocket 2.8, SwiftNIO), started by run.py
//   bench-wskit       workload L's peer client: Vapor's websocket-kit 2.16 (SwiftNIO)
//   bench-integrations  what CourierMetrics, CourierTracing and CourierLogging cost per request
//   bench-openapi     one generated OpenAPI client over CourierTransport, AsyncHTTPClientTransport and
//                     URLSessionTransport, against the Hummingbird server generated from the same document
// The orchestrator is run.py (see README.md).
let package = Package(
    name: "CourierBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Every integration trait on: the integrations' tests (Tests/CourierIntegrationTests) live here,
        // beside the benchmarks' heavy dependencies, so CI builds those once.
        .package(name: "Courier", path: "..", traits: ["Logging", "Metrics", "Tracing", "HTTPTypes", "OpenAPI", "ServiceLifecycle"]),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.36.0"),
        // mattt/EventSource 1.1.1 (workload K), vendored with one Linux build fix: Vendor/EventSource/VENDORED.md
        .package(path: "Vendor/EventSource"),
        // Workload L (WebSocket): the echo server and the peer client.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/vapor/websocket-kit", from: "2.16.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        // CourierOpenAPI's tests and bench-openapi: a generated client over CourierTransport against a
        // Hummingbird server generated from the same document (Sources/OpenAPIGenerated and OpenAPIFixture); bench-openapi
        // also drives that client over the two other ClientTransports.
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // CourierTracing's spans exported for real (OTelExportTests): swift-otel's OTLP/HTTP exporter only;
        // its OTLP/gRPC trait (grpc-swift and its transport) stays off.
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        // Allocations per request (allocations.py): the malloc counter package-benchmark itself uses, driven
        // directly; why not package-benchmark's plugin: README.md, "Allocations per request".
        .package(url: "https://github.com/ordo-one/malloc-interposer", exact: "1.6.1"),
    ],
    targets: [
        .target(name: "BenchSupport", path: "Sources/BenchSupport"),
        .executableTarget(
            name: "bench-courier",
            dependencies: ["BenchSupport", .product(name: "Courier", package: "Courier")],
            path: "Sources/bench-courier"
        ),
        // Allocations per request (BENCHMARKS.md, "Allocations per request"; run by allocations.py under
        // LD_PRELOAD of the interposer). Courier's executable has no other dependency, so that CI's gate
        // builds only Courier and the counter in release.
        .target(
            name: "AllocationCounting",
            dependencies: [.product(name: "MallocInterposerSwift", package: "malloc-interposer")],
            path: "Sources/AllocationCounting"
        ),
        .executableTarget(
            name: "bench-alloc-courier",
            dependencies: ["AllocationCounting", .product(name: "Courier", package: "Courier")],
            path: "Sources/bench-alloc-courier"
        ),
        .executableTarget(
            name: "bench-alloc-ahc",
            dependencies: [
                "AllocationCounting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Sources/bench-alloc-ahc"
        ),
        .executableTarget(
            name: "bench-urlsession",
            dependencies: ["BenchSupport"],
            path: "Sources/bench-urlsession"
        ),
        .executableTarget(
            name: "bench-ahc",
            dependencies: [
                "BenchSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Sources/bench-ahc"
        ),
        .executableTarget(
            name: "bench-ahc-sse",
            dependencies: [
                "BenchSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "EventSource", package: "EventSource"),
            ],
            path: "Sources/bench-ahc-sse"
        ),
        .executableTarget(
            name: "bench-ws-server",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            path: "Sources/bench-ws-server"
        ),
        .executableTarget(
            name: "bench-wskit",
            dependencies: [
                "BenchSupport",
                .product(name: "WebSocketKit", package: "websocket-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Sources/bench-wskit"
        ),
        // What the integrations cost per request (BENCHMARKS.md, "Integrations").
        .executableTarget(
            name: "bench-integrations",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTestServer", package: "Courier"),
                .product(name: "CourierLogging", package: "Courier"),
                .product(name: "CourierMetrics", package: "Courier"),
                .product(name: "CourierTracing", package: "Courier"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            path: "Sources/bench-integrations"
        ),
        // The OpenAPI document and the types, client and server stubs swift-openapi-generator 1.14.3
        // generated from it, with package access (Sources/OpenAPIGenerated/README.md). On Swift 6.3 the
        // generated `package import` lines each warn "not used in package declarations" (the generator
        // silences that only for compilers from 6.4 on), hence -suppress-warnings, for this target alone:
        // it holds nothing but generated code.
        .target(
            name: "OpenAPIGenerated",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Sources/OpenAPIGenerated",
            exclude: ["README.md", "openapi.yaml", "openapi-generator-config.yaml"],
            swiftSettings: [.unsafeFlags(["-suppress-warnings"])]
        ),
        // The server side of that API on Hummingbird (swift-openapi-hummingbird), served in-process by
        // CourierIntegrationTests and in a child process by bench-openapi.
        .target(
            name: "OpenAPIFixture",
            dependencies: [
                "OpenAPIGenerated",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/OpenAPIFixture"
        ),
        // A generated OpenAPI client over Courier's, AsyncHTTPClient's and URLSession's transports
        // (BENCHMARKS.md, "OpenAPI transports").
        .executableTarget(
            name: "bench-openapi",
            dependencies: [
                "OpenAPIFixture",
                "OpenAPIGenerated",
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierOpenAPI", package: "Courier"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ],
            path: "Sources/bench-openapi"
        ),
        // The integrations (CourierLogging, CourierMetrics, CourierTracing, CourierHTTPTypes, CourierOpenAPI,
        // CourierServiceLifecycle) against the real swift-log, swift-metrics, swift-distributed-tracing,
        // swift-http-types, swift-openapi-runtime (a Hummingbird server generated from the same document)
        // and swift-service-lifecycle, both transports, CourierTestServer; CourierTracing's spans also
        // exported by swift-otel over OTLP/HTTP to a collector the test runs.
        .testTarget(
            name: "CourierIntegrationTests",
            dependencies: [
                "OpenAPIFixture",
                "OpenAPIGenerated",
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTestServer", package: "Courier"),
                .product(name: "CourierLogging", package: "Courier"),
                .product(name: "CourierMetrics", package: "Courier"),
                .product(name: "CourierTracing", package: "Courier"),
                .product(name: "CourierHTTPTypes", package: "Courier"),
                .product(name: "CourierServiceLifecycle", package: "Courier"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "CourierOpenAPI", package: "Courier"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "OTel", package: "swift-otel"),
            ],
            path: "Tests/CourierIntegrationTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
