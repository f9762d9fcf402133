@_spi(Transport) @testable import Courier
import CCurl
import CourierTestServer
import CourierTestSupport
import CourierLocking
import Foundation
import Testing

/// The reactor's handling of descriptors it cannot watch (issue 25): a negative one from libcurl
/// used to make the socket callback loop forever on the loop thread.
@Suite("Curl reactor: descriptors it cannot watch")
struct CurlReactorDescriptorTests {
    /// The C handles a test drives; handed to a helper thread whose end the test awaits.
    // @unchecked: raw C handles, used by one thread at a time (the test hands them to the helper
    // thread and waits for its end before touching them again).
    private struct Handles: @unchecked Sendable {
        let multi: OpaquePointer
        let reactor: OpaquePointer
        let easy: OpaquePointer
    }

    /// The result a helper thread publishes; `done` orders the write before the test's read.
    private final class Outcome: Sendable {
        let done = DispatchSemaphore(value: 0)
        let value = Locked<Int32>(0)
    }

    /// A multi handle with an installed reactor and one easy handle; throws when libcurl is not loadable.
    private static func makeHandles() throws -> Handles {
        try CurlTestSupport.requireLibcurl()
        let multi = try #require(ccurl_multi_init())
        let reactor = try #require(ccurl_reactor_create(multi))
        var failedOption: UnsafePointer<CChar>?
        #expect(ccurl_reactor_install(reactor, &failedOption) == 0)
        let easy = try #require(ccurl_easy_init())
        return Handles(multi: multi, reactor: reactor, easy: easy)
    }

    private static func release(_ handles: Handles) {
        ccurl_multi_cleanup(handles.multi)
        ccurl_reactor_destroy(handles.reactor)
        ccurl_easy_cleanup(handles.easy)
    }

    /// Runs `body` on a thread of its own and waits at most `seconds` for it: `nil` when it did not
    /// return in time (a spinning call cannot be interrupted, only left behind).
    private static func result(within seconds: Double, of body: @escaping @Sendable () -> Int32) -> Int32? {
        let outcome = Outcome()
        let thread = Thread {
            let result = body()
            outcome.value.withLock { $0 = result }
            outcome.done.signal()
        }
        thread.start()
        guard outcome.done.wait(timeout: .now() + seconds) == .success else { return nil }
        return outcome.value.withLock { $0 }
    }

    /// Every transfer the reactor refused so far, oldest first.
    private static func refused(by reactor: OpaquePointer) -> [OpaquePointer] {
        var all: [OpaquePointer] = []
        var easy: OpaquePointer?
        while ccurl_reactor_next_refused(reactor, &easy) == 1 {
            if let easy { all.append(easy) }
        }
        return all
    }

    @Test("a negative descriptor is refused at once, its transfer reported, and the next wait ends on time")
    func negativeDescriptor() throws {
        let handles = try Self.makeHandles()
        defer { Self.release(handles) }

        let added = Self.result(within: 60) { ccurl_reactor_socket_event(handles.reactor, handles.easy, -1, CCURL_POLL_IN) }
        #expect(added == 0, "the socket callback must return promptly and keep the multi handle usable")
        guard added != nil else { return }
        #expect(Self.refused(by: handles.reactor) == [handles.easy])
        #expect(Self.refused(by: handles.reactor).isEmpty, "a refusal is reported once")

        // Asking again for the same transfer, or for both directions, is reported once more at most.
        #expect(ccurl_reactor_socket_event(handles.reactor, handles.easy, -1, CCURL_POLL_INOUT) == 0)
        #expect(ccurl_reactor_socket_event(handles.reactor, handles.easy, -1, CCURL_POLL_INOUT) == 0)
        #expect(Self.refused(by: handles.reactor) == [handles.easy])
        #expect(ccurl_reactor_socket_event(handles.reactor, handles.easy, -1, CCURL_POLL_REMOVE) == 0)

        // Nothing entered the wait set: the next sleep lasts its timeout and finds nothing to dispatch.
        let milliseconds = ccurl_reactor_prepare_wait(handles.reactor, 20)
        #expect((0...20).contains(milliseconds))
        let slept = Self.result(within: 60) {
            ccurl_reactor_poll(handles.reactor, milliseconds)
            return ccurl_reactor_dispatch(handles.reactor)
        }
        #expect(slept == 0)
    }

    @Test("a descriptor epoll cannot watch (a regular file) fails its transfer, not the multi handle")
    func unwatchableDescriptor() throws {
        // poll(2) watches any open descriptor; only epoll refuses a regular file.
        guard ccurl_reactor_supports_foreign_passes() == 1 else { return }
        let handles = try Self.makeHandles()
        defer { Self.release(handles) }
        let file = try CurlTestSupport.temporaryFile(Data("not a socket".utf8))
        defer { try? FileManager.default.removeItem(at: file) }
        let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer { close(descriptor) }

        #expect(ccurl_reactor_socket_event(handles.reactor, handles.easy, descriptor, CCURL_POLL_IN) == 0)
        #expect(Self.refused(by: handles.reactor) == [handles.easy])
        #expect(ccurl_reactor_socket_event(handles.reactor, handles.easy, descriptor, CCURL_POLL_REMOVE) == 0)
    }

    @Test("a refusal for an easy handle that is recycled is forgotten")
    func forgetsRecycledHandles() throws {
        let handles = try Self.makeHandles()
        defer { Self.release(handles) }
        let added = Self.result(within: 60) { ccurl_reactor_socket_event(handles.reactor, handles.easy, -1, CCURL_POLL_IN) }
        #expect(added == 0)
        guard added != nil else { return }
        ccurl_reactor_forget_easy(handles.reactor, handles.easy)
        #expect(Self.refused(by: handles.reactor).isEmpty)
    }

    @Test("the event loop fails the transfer whose socket the reactor refused, and goes on with the next one")
    func loopFailsTheRefusedTransfer() async throws {
        let server = try TestServer()
        // The refused transfer never reaches the server: only the next request takes a response.
        // libcurl before 7.81.0 ignores the refusal (curl issue 8083) and may send the request
        // before the loop fails the transfer: there it may take a response of its own.
        let honoursRefusal = CurlLibrary.inUse?.honoursSocketCallbackRefusal ?? true
        defer {
            let report = server.shutdown()
            if honoursRefusal { expectClean(report) }
        }
        server.enqueue(honoursRefusal ? [MockResponse.ok("second")] : [MockResponse.ok("first"), MockResponse.ok("second")])
        let transport = try CurlTestSupport.transport(maximumConnectionsPerHost: 1)
        defer { transport.shutdown() }

        transport.refuseNextSocket()
        let refused = try await CurlTestSupport.run(TransportRequest(url: server.url("/refused")), on: transport)
        CurlTestSupport.expectContract(refused)
        #expect(refused.error?.kind == .transportFailed)
        #expect(refused.error?.message.contains("socket descriptor") == true, "\(String(describing: refused.error))")
        #expect(refused.head == nil)

        let next = try await CurlTestSupport.run(TransportRequest(url: server.url("/next")), on: transport)
        CurlTestSupport.expectContract(next)
        #expect(next.error == nil)
        #expect(next.head?.statusCode == 200)
    }
}
