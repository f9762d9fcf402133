import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OpenAPIHummingbird
import OpenAPIGenerated
import OpenAPIRuntime
import ServiceLifecycle

/// The test API's server side: Generated/Server.swift's handlers registered on a Hummingbird
/// router, on an ephemeral port of 127.0.0.1. CourierIntegrationTests' OpenAPI tests and
/// bench-openapi both serve it.
package struct OpenAPITestServer: APIProtocol {
    /// The bearer token `getSecret` wants (checked by ``BearerTokenCheck``).
    package static let token = "opensesame"

    package init() {}

    package func getGreeting(_ input: Operations.GetGreeting.Input) async throws -> Operations.GetGreeting.Output {
        let name = input.path.name
        guard name != "nobody" else { return .notFound(.init(body: .json(.init(reason: "Nobody is called \(name).")))) }
        return .ok(.init(body: .json(.init(message: "Hello, \(name)\(input.query.excited == true ? "!" : ".")"))))
    }

    package func upload(_ input: Operations.Upload.Input) async throws -> Operations.Upload.Output {
        guard case .binary(let body) = input.body else { throw OpenAPITestServerError.unexpectedBody }
        var count: Int64 = 0
        var checksum: UInt32 = 0
        for try await chunk in body {
            count += Int64(chunk.count)
            for byte in chunk { checksum &+= UInt32(byte) }
        }
        let declared: Int64? =
            switch body.length {
            case .known(let length): length
            case .unknown: nil
            }
        return .ok(.init(body: .json(.init(byteCount: count, checksum: Int64(checksum), declaredLength: declared))))
    }

    package func download(_ input: Operations.Download.Input) async throws -> Operations.Download.Output {
        let size = input.path.size
        return .ok(.init(body: .binary(HTTPBody(PatternBody(size: size), length: .known(size), iterationBehavior: .single))))
    }

    package func getSecret(_ input: Operations.GetSecret.Input) async throws -> Operations.GetSecret.Output {
        .ok(.init(body: .json(.init(message: "The secret is kept."))))
    }
}

/// Why ``withOpenAPIServer(_:)`` could not serve.
package enum OpenAPITestServerError: Error {
    /// `upload` received a body that is not `application/octet-stream`.
    case unexpectedBody
    /// The server did not report a port.
    case didNotStart
    /// The server's URL could not be formed.
    case invalidURL
}

/// Refuses `/api/secret` without `Authorization: Bearer <token>` (401), as an authentication
/// middleware in front of the generated handlers would.
package struct BearerTokenCheck<Context: RequestContext>: RouterMiddleware {
    package init() {}

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.uri.path.hasSuffix("/secret") else { return try await next(request, context) }
        guard request.headers[.authorization] == "Bearer \(OpenAPITestServer.token)" else { return Response(status: .unauthorized) }
        return try await next(request, context)
    }
}

/// The bytes the test API's downloads serve: byte `i` is `pattern(i)`, in 64 KiB chunks (the
/// pattern repeats every 64 KiB, so every full chunk is the same).
package struct PatternBody: AsyncSequence, Sendable {
    package typealias Element = ArraySlice<UInt8>
    /// The length of one period of the pattern, and of every chunk but the last.
    package static let chunkSize = 64 << 10
    /// One period of the pattern.
    package static let chunk: [UInt8] = (0..<chunkSize).map { pattern($0) }

    /// Byte `offset` of a body.
    package static func pattern(_ offset: Int) -> UInt8 { UInt8(truncatingIfNeeded: offset &* 31 &+ offset >> 8) }

    /// The body's length in bytes.
    package let size: Int64

    /// A body of `size` bytes.
    package init(size: Int64) { self.size = size }

    package func makeAsyncIterator() -> Iterator { Iterator(remaining: size) }

    /// Hands out the body's chunks.
    package struct Iterator: AsyncIteratorProtocol {
        var remaining: Int64
        package mutating func next() async -> ArraySlice<UInt8>? {
            guard remaining > 0 else { return nil }
            let count = Int(Swift.min(remaining, Int64(PatternBody.chunkSize)))
            remaining -= Int64(count)
            return PatternBody.chunk[0..<count]
        }
    }
}

/// Runs `body` with the test API served by Hummingbird on an ephemeral port, given the server URL
/// (`http://127.0.0.1:<port>/api`); the server stops afterwards.
package func withOpenAPIServer<T: Sendable>(_ body: @Sendable (URL) async throws -> T) async throws -> T {
    let router = Router()
    router.add(middleware: BearerTokenCheck())
    guard let api = URL(string: "/api") else { throw OpenAPITestServerError.invalidURL }
    try OpenAPITestServer().registerHandlers(on: router, serverURL: api)
    let (ports, bound) = AsyncStream.makeStream(of: Int.self)
    var logger = Logger(label: "openapi-test-server")
    logger.logLevel = .error
    let app = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            bound.yield(channel.localAddress?.port ?? 0)
            bound.finish()
        }, logger: logger)
    // Stopped by a graceful shutdown, never by cancelling the server's task: cancelling a NIO server
    // while accepted connections are still queued traps in NIOAsyncWriter's deinit
    // (swift-server/swift-http-server#137), which is what crashed this suite's first runs.
    let services = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await services.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            await services.triggerGracefulShutdown()
            throw OpenAPITestServerError.didNotStart
        }
        let result: Result<T, any Error>
        do {
            guard let url = URL(string: "http://127.0.0.1:\(port)/api") else { throw OpenAPITestServerError.invalidURL }
            result = .success(try await body(url))
        } catch {
            result = .failure(error)
        }
        await services.triggerGracefulShutdown()
        try await group.waitForAll()
        return try result.get()
    }
}
