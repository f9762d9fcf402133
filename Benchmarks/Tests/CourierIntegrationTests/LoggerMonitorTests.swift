import Courier
import CourierLogging
import CourierTestServer
import Foundation
import InMemoryLogging
import Logging
import Testing

/// CourierLogging: a `Logger` per session and per request, levels as AsyncHTTPClient's (#40).
@Suite struct LoggerMonitorTests {
    private func logger(_ handler: InMemoryLogHandler, level: Logger.Level = .trace, metadata: Logger.Metadata = [:]) -> Logger {
        var logger = Logger(label: "courier-tests") { _ in handler }
        logger.logLevel = level
        for (key, value) in metadata { logger[metadataKey: key] = value }
        return logger
    }

    @Test(arguments: TransportUnderTest.available)
    func theHappyPathLogsBelowInfoAndEveryLineNamesTheRequest(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue([.redirect(to: "/b"), .ok("done")])
            let handler = InMemoryLogHandler()
            let session = transport.session(server, monitors: [LoggerMonitor(logger: logger(handler))])
            let request = session.request("a")
            #expect(try await request.serializingString().value == "done")
            let entries = handler.entries
            #expect(entries.allSatisfy { $0.level <= .debug })
            #expect(entries.allSatisfy { $0.metadata[LoggerMonitor.requestIDKey] == "\(request.id.uuidString)" })
            let debug = entries.filter { $0.level == .debug }.map(\.message.description)
            #expect(debug == ["sending request", "following redirect", "sending request", "request finished"])
            #expect(entries.contains { $0.message == "request headers" && $0.level == .trace })
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aFailureIsLoggedAtDebugWithItsKind(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue([.status(404)])
            let handler = InMemoryLogHandler()
            let session = transport.session(server, monitors: [LoggerMonitor(logger: logger(handler))])
            await #expect(throws: CourierError.self) { try await session.request("missing").validate().serializingString().value }
            let failed = try #require(handler.entries.first { $0.message == "request failed" })
            #expect(failed.level == .debug)
            #expect(failed.metadata["error.type"] == "validationFailed")
            #expect(failed.metadata["http.response.status_code"] == "404")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func atInfoNothingIsLogged(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue([.ok("x")])
            let handler = InMemoryLogHandler()
            let session = transport.session(server, monitors: [LoggerMonitor(logger: logger(handler, level: .info))])
            _ = try await session.request("a").serializingString().value
            #expect(handler.entries.isEmpty)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aRequestsOwnLoggerReplacesTheSessionsAndKeepsItsMetadata(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue([.ok("mine"), .ok("theirs")])
            let background = InMemoryLogHandler()
            let scoped = InMemoryLogHandler()
            let session = transport.session(server, monitors: [LoggerMonitor(logger: logger(background))])
            let request = session.request("mine").logger(logger(scoped, metadata: ["my-request": "84B4"]))
            _ = try await request.serializingString().value
            #expect(background.entries.isEmpty)
            #expect(!scoped.entries.isEmpty)
            #expect(
                scoped.entries.allSatisfy {
                    $0.metadata["my-request"] == "84B4" && $0.metadata[LoggerMonitor.requestIDKey] == "\(request.id.uuidString)"
                })
            // The session's logger still logs the session's other requests.
            _ = try await session.request("theirs").serializingString().value
            #expect(!background.entries.isEmpty)
        }
    }
}
