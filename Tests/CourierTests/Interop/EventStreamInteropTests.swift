import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier

/// Event streams from servers no one here wrote: sse-starlette under uvicorn (reconnection with
/// `Last-Event-ID`, a dropped connection, a POST chat stream) and nginx serving a static
/// `text/event-stream` file, over HTTP/1.1 and over HTTPS with HTTP/2.
@Suite struct EventStreamInteropTests {
    static let exact = EventStreamReconnection(jitter: 0)

    private func session(
        _ transport: TransportUnderTest, baseURL: URL, clock: FrozenClock = FrozenClock(),
        configure: (inout SessionConfiguration) -> Void = { _ in }
    ) -> Session {
        var configuration = SessionConfiguration.testing
        configuration.transport = transport.choice
        configuration.cookies = .none
        configuration.retryClock = clock
        configure(&configuration)
        return Session(configuration: configuration, baseURL: baseURL, callbackQueue: testCallbackQueue)
    }

    @Test(arguments: TransportUnderTest.available)
    func sseStarletteReconnectsWithTheLastEventIDUntilItsStop(transport: TransportUnderTest) async throws {
        guard let server = InteropServer.sse else { return }
        let clock = FrozenClock()
        let stream = session(transport, baseURL: server, clock: clock).eventStream("events?n=5&retry=750", reconnection: Self.exact)
        var updates: [EventStreamUpdate] = []
        for try await update in stream.updates() { updates.append(update) }
        let events = updates.compactMap { if case .event(let event) = $0 { event } else { nil } }
        #expect(events.map(\.data) == (1...5).map { "tick \($0)" })
        #expect(events.map(\.id) == (1...5).map { "\($0)" })
        #expect(events.first?.retry == 750)
        // The clean end is reconnected after the server's retry with Last-Event-ID 5, which sse-server answers with 204.
        #expect(clock.recorded == [.milliseconds(750)])
    }

    @Test(arguments: TransportUnderTest.available)
    func aDroppedSSEConnectionResumesWithoutLosingOrRepeatingEvents(transport: TransportUnderTest) async throws {
        guard let server = InteropServer.sse else { return }
        let clock = FrozenClock()
        var updates: [EventStreamUpdate] = []
        for try await update in session(transport, baseURL: server, clock: clock).eventStream("drop?n=7&after=3", reconnection: Self.exact).updates()
        {
            updates.append(update)
        }
        let events = updates.compactMap { if case .event(let event) = $0 { event.data } else { nil } }
        #expect(events == (1...7).map { "tick \($0)" })
        let reasons = updates.compactMap { if case .reconnecting(let attempt) = $0 { attempt.reason?.kind } else { nil } }
        #expect(reasons.count == 2, "two drops (after 3 and 6) were failures: \(reasons)")
    }

    @Test(arguments: TransportUnderTest.available)
    func aPOSTChatStreamDecodesTokensUntilDone(transport: TransportUnderTest) async throws {
        struct Prompt: Encodable, Sendable { let prompt: String }
        struct Token: Decodable, Sendable { let token: String }
        guard let server = InteropServer.sse else { return }
        let stream = session(transport, baseURL: server)
            .eventStream("chat", method: .post, parameters: Prompt(prompt: "streams are the future"), encoder: .json)
        var tokens: [String] = []
        for try await token in stream.decodingEvents(of: Token.self, until: "[DONE]") { tokens.append(token.token) }
        #expect(tokens == ["streams", "are", "the", "future"])
    }

    @Test(arguments: TransportUnderTest.available)
    func nginxServesAStaticEventStream(transport: TransportUnderTest) async throws {
        guard let nginx = InteropServer.nginx else { return }
        let events = try await collect(session(transport, baseURL: nginx).eventStream("ticks.sse", reconnection: .never).events())
        #expect(events.count == 1000)
        #expect(events.first == ServerSentEvent(id: "1", event: "tick", data: #"{"i":1}"#))
        #expect(events.last?.id == "1000")
    }

    /// Over HTTPS on nginx's HTTP/2 server. (With libcurl before 8.1 a stream read at its consumer's
    /// pace gets an HTTP/1.1 connection of its own, so that pausing it cannot stall HTTP/2 siblings.)
    @Test func nginxServesAStaticEventStreamOverHTTPS() async throws {
        guard TransportUnderTest.available.contains(.curl), let nginx = InteropServer.nginxHTTPS, let ca = InteropServer.testCA else { return }
        let session = session(.curl, baseURL: nginx) { $0.tls.trustRoots = .system(adding: [ca]) }
        let stream = session.eventStream("ticks.sse", reconnection: .never)
        var updates: [EventStreamUpdate] = []
        for try await update in stream.updates() { updates.append(update) }
        #expect(updates.filter { if case .event = $0 { true } else { false } }.count == 1000)
        guard case .connected(let response) = updates.first else {
            Issue.record("the first update is the accepted connection")
            return
        }
        #expect(response.value(forHTTPHeaderField: "X-TLS-Protocol")?.hasPrefix("TLSv1.") == true)
        let library = try CurlLibrary.load()
        if library.versionNumber >= 0x080100 {
            #expect(response.value(forHTTPHeaderField: "X-Protocol") == "HTTP/2.0")
        }
    }
}
