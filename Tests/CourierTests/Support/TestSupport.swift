import CourierSupport
import Testing
import CourierTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking

/// The transports every behaviour test runs on.
enum TransportUnderTest: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case curl
    case urlSession

    /// The transports that can run here: URLSession always, curl when libcurl loads; only those
    /// `COURIER_TEST_TRANSPORTS` names (comma-separated) when it is set, as CI's pass on a second
    /// libcurl sets it to `curl`.
    static let available: [TransportUnderTest] = {
        var configuration = SessionConfiguration()
        configuration.transport = .curl
        let curlLoads = Session(configuration: configuration).transportName == "curl"
        let all: [TransportUnderTest] = curlLoads ? [.curl, .urlSession] : [.urlSession]
        guard let names = ProcessInfo.processInfo.environment["COURIER_TEST_TRANSPORTS"], !names.isEmpty else { return all }
        let chosen = Set(names.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        return all.filter { chosen.contains($0.rawValue) }
    }()

    var testDescription: String { rawValue }

    var choice: SessionConfiguration.TransportChoice {
        switch self {
        case .curl: .curl
        case .urlSession: .urlSession(.ephemeral)
        }
    }
}

/// A serial queue for callbacks in tests (the main queue works too, but tests should not depend on it).
let testCallbackQueue = DispatchQueue(label: "courier.tests.callbacks")

extension SessionConfiguration {
    /// What tests start from: the transports' timeouts run on a ``ManualTransportClock`` that stands
    /// still, so no idle or resource timeout fires because the machine is slow (a held response, a
    /// test task that a loaded machine runs a minute late). A test of a timeout moves the clock
    /// (``ManualTransportClock/advance(by:)``), or sets `transportClock = .system` where only the
    /// timeout can end the request and firing late costs nothing but time.
    static var testing: SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.transportClock = .manual(ManualTransportClock())
        return configuration
    }
}

/// A session on `transport` talking to `server`, with a private cookie store and timeouts on a
/// clock that stands still (``SessionConfiguration/testing``).
func makeSession(
    _ transport: TransportUnderTest, server: TestServer? = nil, headers: HTTPHeaders = [:],
    interceptor: (any RequestInterceptor)? = nil, monitors: [any EventMonitor] = [],
    configure: (inout SessionConfiguration) -> Void = { _ in }
) -> Session {
    var configuration = SessionConfiguration.testing
    configuration.transport = transport.choice
    configuration.cookies = .storage(HTTPCookieStorage.makeIsolated())
    configuration.temporaryDirectory = FileManager.default.temporaryDirectory
        .appendingPathComponent("courier-tests-\(UUID().uuidString)", isDirectory: true)
    configure(&configuration)
    return Session(
        configuration: configuration, baseURL: server?.baseURL, headers: headers, interceptor: interceptor,
        eventMonitors: monitors, callbackQueue: testCallbackQueue)
}

/// How many tests may run with a server at once. Swift Testing starts every test of the process
/// at once: on a two-core machine a thousand tests, each with its server and session threads
/// (800 threads), held every test back for 12–18 s, long enough for idle timeouts and time
/// bounds to fire. Admitting a few dozen at a time keeps both cores busy without that herd.
actor ServerTestAdmission {
    static let shared = ServerTestAdmission(limit: 24)
    /// Whether the current task already holds a place (a test with two servers takes one).
    @TaskLocal static var holdsPlace = false

    private var available: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) { available = limit }

    func enter() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty {
            available += 1
        } else {
            waiting.removeFirst().resume()
        }
    }

    /// Runs `body` once a place is free (at once if the task holds one already).
    static func admitted<T>(_ body: () async throws -> T) async throws -> T {
        if holdsPlace { return try await body() }
        // Waiting for a place is not the test's own time: its hang limit does not count it.
        await WorkInProgress.uncounted { await shared.enter() }
        do {
            let result = try await $holdsPlace.withValue(true) { try await body() }
            await shared.leave()
            return result
        } catch {
            await shared.leave()
            throw error
        }
    }
}

/// Runs `body` with a fresh server, shuts it down afterwards and expects its report clean (see
/// `expectClean`), or with exactly the leftovers given; issues point at the caller. At most a few
/// dozen such tests run at once (``ServerTestAdmission``).
func withServer<T>(
    unconsumedResponses: Int = 0, unexpectedRequests: Int = 0,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (TestServer) async throws -> T
) async throws -> T {
    try await ServerTestAdmission.admitted {
        try await withFreshServer(
            unconsumedResponses: unconsumedResponses, unexpectedRequests: unexpectedRequests, sourceLocation: sourceLocation, body)
    }
}

private func withFreshServer<T>(
    unconsumedResponses: Int, unexpectedRequests: Int, sourceLocation: SourceLocation,
    _ body: (TestServer) async throws -> T
) async throws -> T {
    let server = try TestServer()
    defer {
        expectClean(
            server.shutdown(), unconsumedResponses: unconsumedResponses, unexpectedRequests: unexpectedRequests,
            sourceLocation: sourceLocation)
    }
    return try await body(server)
}

extension HTTPCookieStorage {
    /// A cookie storage not shared with other tests.
    static func makeIsolated() -> HTTPCookieStorage {
        HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "courier.tests.\(UUID().uuidString)")
    }
}

/// Records monitor events as short strings, in delivery order.
final class EventRecorder: EventMonitor {
    private let events = Locked([String]())

    var recorded: [String] { events.withLock { $0 } }

    private func record(_ event: String) { events.withLock { $0.append(event) } }

    func requestDidCreate(_ request: any Request) { record("created") }
    func requestDidResume(_ request: any Request) { record("resumed") }
    func requestDidSuspend(_ request: any Request) { record("suspended") }
    func requestDidCancel(_ request: any Request) { record("cancelled") }
    func request(_ request: any Request, didAdapt urlRequest: URLRequest, attempt: Int) { record("adapted(\(attempt))") }
    func request(_ request: any Request, didFailToPrepareWith error: CourierError) { record("prepareFailed(\(error.kind))") }
    func request(_ request: any Request, didStartExchange urlRequest: URLRequest, headers: HTTPHeaders) {
        record("exchange(\(urlRequest.url?.path ?? ""))")
    }
    func request(_ request: any Request, didReceiveResponse response: HTTPURLResponse) { record("response(\(response.statusCode))") }
    func request(_ request: any Request, willRedirectTo urlRequest: URLRequest, from response: HTTPURLResponse) {
        record("redirect(\(response.statusCode) → \(urlRequest.url?.path ?? ""))")
    }
    func request(_ request: any Request, didCompleteExchangeWith metrics: TransferMetrics, error: CourierError?) {
        record("exchangeEnded(\(error.map { "\($0.kind)" } ?? "ok"))")
    }
    func request(_ request: any Request, didFailValidationWith error: CourierError) { record("validationFailed") }
    func request(_ request: any Request, willRetryAfter delay: Duration, dueTo error: CourierError) { record("retry") }
    func request(_ request: any Request, didFinishWith response: HTTPURLResponse?, metrics: TransferMetrics?, error: CourierError?) {
        record("finished(\(error.map { "\($0.kind)" } ?? "ok"))")
    }
    func request(_ request: any Request, didSerialize result: Result<any Sendable, CourierError>, using serializer: String) {
        record("serialized")
    }
}

/// Awaits a callback-style handler.
func awaitCallback<T: Sendable>(_ register: (@escaping @Sendable (T) -> Void) -> Void) async -> T {
    await withCheckedContinuation { continuation in
        register { continuation.resume(returning: $0) }
    }
}

/// A port on 127.0.0.1 where nothing listens: a socket is bound to it but never listens, so
/// connections are refused, and it stays bound for the rest of the test process so that no
/// parallel test's server can be given the same port.
func closedPort() throws -> Int {
    let reserved = try ClosedPort()
    reservedPorts.withLock { $0.append(reserved) }
    return reserved.port
}

private let reservedPorts = Locked([ClosedPort]())

/// Collects values from a `@Sendable` callback in order.
final class Collected<T: Sendable>: Sendable {
    private let values = Locked([T]())
    var all: [T] { values.withLock { $0 } }
    func append(_ value: T) { values.withLock { $0.append(value) } }
}

extension Result {
    /// The failure, if any.
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension Session {
    /// The names of the files in this session's temporary directory.
    var temporaryFiles: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: configuration.temporaryDirectory.path)) ?? []
    }
}

extension Resource {
    /// The first response stalls after `bytes` body bytes (the client can then cancel mid-body
    /// deterministically); later responses are whole.
    func interruptedOnce(after bytes: Int64) -> Resource {
        effect(.stall, at: .responseBody(afterBytes: bytes), forFirst: 1)
    }
}

/// SplitMix64: a small, fast generator that gives the same sequence for the same seed everywhere,
/// so that a randomised test replays from the seed it prints.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

extension FastPaths {
    /// Whether `trick` is on, after naming the tests of the fast paths as skipped when it is off
    /// (`COURIER_FAST_PATHS=0`, one of `.ci/run`'s runs, or `-name` for that trick alone).
    static func isOnOrSaySo(_ trick: Trick) -> Bool {
        SkipNotice.runs(
            isOn(trick), "the tests of Courier's fast paths (caller-thread passes, spare cache files)",
            because: "COURIER_FAST_PATHS turns them off", run: "swift test (without COURIER_FAST_PATHS)")
    }
}
