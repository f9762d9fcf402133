import Testing
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

extension Pipeline {
    /// Monitor events in order on the success, failure, cancel and retry paths, and `LoggingMonitor`.
    @Suite("Pipeline: Monitors") struct MonitorTests {
        @Test(arguments: TransportUnderTest.available)
        func eventOrderOnSuccess(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue(.ok("hi"))
                let recorder = EventRecorder()
                let session = makeSession(transport, server: server, monitors: [recorder])
                _ = try await session.request("ok").validate().serializingString().value
                #expect(
                    recorder.recorded == [
                        "created", "resumed", "adapted(1)", "exchange(/ok)", "response(200)", "exchangeEnded(ok)",
                        "finished(ok)", "serialized",
                    ])
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func eventOrderOnValidationFailure(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue(.status(404))
                let recorder = EventRecorder()
                let session = makeSession(transport, server: server, interceptor: RetryPolicy(), monitors: [recorder])
                _ = await session.request("missing").validate().serializingString().response
                #expect(
                    recorder.recorded == [
                        "created", "resumed", "adapted(1)", "exchange(/missing)", "response(404)", "exchangeEnded(ok)",
                        "validationFailed", "finished(validationFailed)", "serialized",
                    ])
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func eventOrderOnAdaptationFailure(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let recorder = EventRecorder()
                let failing = ClosureAdapter { _, _ in throw TestFailure(reason: "no") }
                let session = makeSession(transport, server: server, interceptor: Interceptor(adapters: [failing]), monitors: [recorder])
                _ = await session.request("never").serializingString().response
                #expect(
                    recorder.recorded == [
                        "created", "resumed", "prepareFailed(adaptationFailed)", "finished(adaptationFailed)", "serialized",
                    ])
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func eventOrderOnCancel(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let gate = Gate()
                server.enqueue(MockResponse.status(503).waiting(for: gate))
                let recorder = EventRecorder()
                let session = makeSession(transport, server: server, interceptor: RetryPolicy(), monitors: [recorder])
                let request = session.request("held").validate()
                let task = request.serializingString()
                task.resume()
                #expect(await gate.waitUntilWaiting(count: 1))
                request.cancel()
                _ = await task.response
                gate.open()
                #expect(
                    recorder.recorded == [
                        // The cancelled exchange ends with its completion event (#26), before the request finishes.
                        "created", "resumed", "adapted(1)", "exchange(/held)", "cancelled", "exchangeEnded(cancelled)",
                        "finished(cancelled)", "serialized",
                    ])
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func eventOrderOnRetry(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue([.status(500), .ok("ok")])
                let recorder = EventRecorder()
                let session = makeSession(transport, server: server, clock: FrozenClock(), interceptor: RetryPolicy(), monitors: [recorder])
                _ = try await session.request("again").validate().serializingString().value
                #expect(
                    recorder.recorded == [
                        "created", "resumed",
                        "adapted(1)", "exchange(/again)", "response(500)", "exchangeEnded(ok)", "validationFailed", "retry",
                        "adapted(2)", "exchange(/again)", "response(200)", "exchangeEnded(ok)",
                        "finished(ok)", "serialized",
                    ])
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func eventOrderOnATransportFailureThatIsRetried(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue([MockResponse.ok("x").effect(.reset, at: .afterRequest), .ok("ok")])
                let recorder = EventRecorder()
                let session = makeSession(transport, server: server, clock: FrozenClock(), interceptor: RetryPolicy(), monitors: [recorder])
                _ = try await session.request("reset").serializingString().value
                let events = recorder.recorded
                #expect(events.first == "created")
                #expect(Array(events.prefix(4)) == ["created", "resumed", "adapted(1)", "exchange(/reset)"])
                #expect(events[4].hasPrefix("exchangeEnded(") && events[4] != "exchangeEnded(ok)")
                #expect(
                    Array(events.dropFirst(5)) == [
                        "retry", "adapted(2)", "exchange(/reset)", "response(200)", "exchangeEnded(ok)", "finished(ok)", "serialized",
                    ])
            }
        }
    }

    /// `LoggingMonitor`'s lines.
    @Suite("Pipeline: LoggingMonitor") struct LoggingMonitorTests {
        @Test(arguments: TransportUnderTest.available)
        func oneLinePerFinishedRequest(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue([.ok("12345"), .status(404)])
                let lines = Collected<String>()
                let session = makeSession(transport, server: server, monitors: [LoggingMonitor { lines.append($0) }])
                _ = try await session.request("users", parameters: ["page": "2"]).serializingString().value
                _ = await session.request("missing", method: .delete).validate().serializingString().response
                let base = server.baseURL.absoluteString
                #expect(lines.all.count == 2)
                #expect(
                    lines.all.first?.matches(#"^\[Courier\] GET \#(base)/users\?page=2 → 200, 5 bytes, \d+ ms$"#) == true,
                    "\(lines.all)")
                #expect(
                    lines.all.last?.matches(#"^\[Courier\] DELETE \#(base)/missing → 404 validationFailed, 0 bytes, \d+ ms$"#) == true,
                    "\(lines.all)")
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func transportFailuresAndRetriesAreReported(transport: TransportUnderTest) async throws {
            let port = try closedPort()
            let lines = Collected<String>()
            var configuration = SessionConfiguration.testing
            configuration.transport = transport.choice
            configuration.retryClock = FrozenClock()
            let session = Session(
                configuration: configuration, interceptor: RetryPolicy(jitter: false),
                eventMonitors: [LoggingMonitor(verbose: true) { lines.append($0) }], callbackQueue: testCallbackQueue)
            _ = await session.request("http://127.0.0.1:\(port)/down").serializingData().response
            let url = "http://127.0.0.1:\(port)/down"
            #expect(lines.all.count == 3, "\(lines.all)")
            #expect(lines.all.first == "[Courier] GET \(url) retry 1 in 500 ms after cannotConnect")
            #expect(lines.all.dropFirst().first == "[Courier] GET \(url) retry 2 in 1000 ms after cannotConnect")
            #expect(
                lines.all.last?.matches(#"^\[Courier\] GET \#(url) → cannotConnect, 0 bytes, \d+ ms, 2 retries$"#) == true,
                "\(lines.all)")
        }

        @Test(arguments: TransportUnderTest.available)
        func verboseModeLogsRedirects(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue([.redirect(to: "/there", status: 302), .ok("here")])
                let lines = Collected<String>()
                let session = makeSession(transport, server: server, monitors: [LoggingMonitor(verbose: true) { lines.append($0) }])
                _ = try await session.request("start").serializingString().value
                let base = server.baseURL.absoluteString
                #expect(lines.all.first == "[Courier] GET \(base)/start redirect 302 → \(base)/there")
                #expect(lines.all.last?.matches(#"^\[Courier\] GET \#(base)/there → 200, 4 bytes, \d+ ms$"#) == true, "\(lines.all)")
            }
        }

        @Test func invalidRequestsAndQuietModeStillLogOneLine() async throws {
            let lines = Collected<String>()
            let session = Session(eventMonitors: [LoggingMonitor { lines.append($0) }], callbackQueue: testCallbackQueue)
            _ = await session.request("relative/without/base").serializingData().response
            #expect(lines.all.count == 1)
            #expect(lines.all.first?.matches(#"^\[Courier\] \? \S+ → invalidURL, 0 bytes, \d+ ms$"#) == true, "\(lines.all)")
        }

        @Test func millisecondsAreTruncated() {
            #expect(LoggingMonitor.milliseconds(.milliseconds(1500)) == 1500)
            #expect(LoggingMonitor.milliseconds(.microseconds(2999)) == 2)
            #expect(LoggingMonitor.milliseconds(.seconds(3)) == 3000)
        }
    }
}

extension String {
    /// Whether the whole string matches the regular expression `pattern`.
    fileprivate func matches(_ pattern: String) -> Bool {
        range(of: pattern, options: .regularExpression) != nil
    }
}
