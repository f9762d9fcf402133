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
// The orchestrator is run.py (see README.md).
let package = Package(
    name: "CourierBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Courier", path: ".."),
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
    ],
    targets: [
        .target(name: "BenchSupport", path: "Sources/BenchSupport"),
        .executableTarget(
            name: "bench-courier",
            dependencies: ["BenchSupport", .product(name: "Courier", package: "Courier")],
            path: "Sources/bench-courier"
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
    ],
    swiftLanguageModes: [.v6]
)
