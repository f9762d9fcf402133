@_spi(Transport) @testable import Courier
import CCurl
import CourierTestServer
import Foundation
import Synchronization
import Testing
import CourierLocking

/// Records a transfer's events, checks the transport contract on every event, and lets a test
/// await states ("head received", "N body bytes", "completed") without sleeping.
final class CurlRecordingSink: TransportEventSink {
    /// Everything recorded so far.
    struct Snapshot: Sendable {
        var head: ResponseHead?
        var body = Data()
        /// Body bytes received when the sink does not keep them.
        var bodyCount = 0
        var bodyEvents = 0
        var uploadProgress: [(sent: Int64, total: Int64)] = []
        var completions = 0
        var error: CourierError?
        var metrics: TransferMetrics?
        var violations: [String] = []
        /// When the last body chunk (or else the head) arrived, and when `completed` did.
        var lastDataAt: ContinuousClock.Instant?
        var completedAt: ContinuousClock.Instant?
        var isCompleted: Bool { completions > 0 }
        /// Body bytes received, kept or not.
        var received: Int { body.count + bodyCount }
    }

    private struct Waiter: Sendable {
        let predicate: @Sendable (Snapshot) -> Bool
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State: Sendable {
        var snapshot = Snapshot()
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiter: UInt64 = 0
        var transfer: (any TransportTransfer)?
        var pendingAcknowledgement = 0
    }

    // Protects the recorded events, the waiters and the transfer used for acknowledgements.
    private let state = Locked(State())
    private let inside = Atomic<Bool>(false)
    private let keepsBody: Bool
    /// Acknowledge every body chunk as soon as it arrives.
    let autoAcknowledge: Bool
    /// Called after each event is recorded, on the transport's thread.
    private let onEvent: (@Sendable (TransportEvent) -> Void)?

    init(autoAcknowledge: Bool = true, keepsBody: Bool = true, onEvent: (@Sendable (TransportEvent) -> Void)? = nil) {
        self.autoAcknowledge = autoAcknowledge
        self.keepsBody = keepsBody
        self.onEvent = onEvent
    }

    /// Gives the sink its transfer so it can acknowledge; flushes acknowledgements owed so far.
    func attach(_ transfer: any TransportTransfer) {
        let owed = state.withLock { state in
            state.transfer = transfer
            defer { state.pendingAcknowledgement = 0 }
            return state.pendingAcknowledgement
        }
        if owed > 0 { transfer.acknowledge(owed) }
    }

    func receive(_ event: TransportEvent) {
        if inside.exchange(true, ordering: .sequentiallyConsistent) {
            state.withLock { $0.snapshot.violations.append("concurrent receive") }
        }
        defer { inside.store(false, ordering: .sequentiallyConsistent) }
        var acknowledgeNow: (any TransportTransfer, Int)?
        let ready: [CheckedContinuation<Void, any Error>] = state.withLock { state in
            // Mutated in place: a copy would make every append copy the whole body.
            if state.snapshot.isCompleted { state.snapshot.violations.append("event after completed: \(event)") }
            switch event {
            case .uploadProgress(let sent, let total):
                if let last = state.snapshot.uploadProgress.last, sent < last.sent {
                    state.snapshot.violations.append("upload progress went back")
                }
                state.snapshot.uploadProgress.append((sent, total))
            case .response(let head):
                if state.snapshot.head != nil { state.snapshot.violations.append("second response head") }
                state.snapshot.head = head
                state.snapshot.lastDataAt = .now
            case .body(let data):
                if state.snapshot.head == nil { state.snapshot.violations.append("body before head") }
                state.snapshot.bodyEvents += 1
                state.snapshot.lastDataAt = .now
                if keepsBody { state.snapshot.body.append(data) } else { state.snapshot.bodyCount += data.count }
                if autoAcknowledge {
                    if let transfer = state.transfer { acknowledgeNow = (transfer, data.count) } else { state.pendingAcknowledgement += data.count }
                }
            case .completed(let error, let metrics):
                state.snapshot.completions += 1
                state.snapshot.completedAt = .now
                state.snapshot.error = error
                state.snapshot.metrics = metrics
            }
            guard !state.waiters.isEmpty else { return [] }
            let snapshot = state.snapshot
            let due = state.waiters.filter { $0.value.predicate(snapshot) }
            for key in due.keys { state.waiters[key] = nil }
            return due.values.map(\.continuation)
        }
        if let (transfer, count) = acknowledgeNow { transfer.acknowledge(count) }
        onEvent?(event)
        for continuation in ready { continuation.resume() }
    }

    /// The events so far. (Holding a snapshot while more body arrives makes the next append copy the body.)
    var snapshot: Snapshot { state.withLock { $0.snapshot } }

    /// Body bytes received so far and whether the transfer completed, without copying anything.
    var progress: (received: Int, completed: Bool) {
        state.withLock { ($0.snapshot.received, $0.snapshot.isCompleted) }
    }

    /// Waits until `predicate` holds; throws after `timeout` (a safety net for a hang, never a
    /// synchronisation: long enough for any loaded machine).
    func wait(timeout: Duration = .seconds(60), until predicate: @escaping @Sendable (Snapshot) -> Bool) async throws {
        let id: UInt64 = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let satisfied = state.withLock { state in
                    if predicate(state.snapshot) { return true }
                    state.waiters[id] = Waiter(predicate: predicate, continuation: continuation)
                    return false
                }
                if satisfied { continuation.resume() }
                Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    guard let self else { return }
                    let (received, completed) = progress
                    fail(
                        id,
                        CurlTestTimeout(description: "condition not met within \(timeout): \(received) body bytes received, completed \(completed)"))
                }
            }
        } onCancel: {
            fail(id, CancellationError())
        }
    }

    private func fail(_ id: UInt64, _ error: any Error) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(throwing: error)
    }

    /// Waits for `completed` while bytes keep arriving: throws only when none has arrived for
    /// `stall` (a hang), however long the whole transfer takes on a loaded machine.
    @discardableResult
    func completionWhileItProgresses(stall: Duration = .seconds(60)) async throws -> Snapshot {
        while true {
            let (seen, completed) = progress
            if completed { return snapshot }
            try await wait(timeout: stall) { $0.received > seen || $0.isCompleted }
        }
    }

    /// Waits for `completed` and returns the final snapshot.
    @discardableResult
    func completion(timeout: Duration = .seconds(60)) async throws -> Snapshot {
        try await wait(timeout: timeout) { $0.isCompleted }
        return snapshot
    }
}

/// A wait that ran out of time.
struct CurlTestTimeout: Error, CustomStringConvertible {
    let description: String
}

/// Small helpers shared by the curl transport tests.
enum CurlTestSupport {
    /// Loads libcurl, or throws when it cannot be loaded here (for tests that drive its C handles).
    static func requireLibcurl() throws {
        guard ccurl_load(nil, 0) == 0 else { throw CourierError(.transportFailed, "libcurl cannot be loaded here") }
    }

    /// A new transport (throws when libcurl cannot be loaded here), its timeouts on a clock that
    /// stands still unless the test moves it (see ``SessionConfiguration/testing``) or passes `.system`.
    static func transport(
        maximumConnectionsPerHost: Int = 8, trusting certificates: [URL] = [],
        responseWaitLimit: Duration = CurlResponseWait.defaultLimit,
        proxies: CurlProxyEnvironment = CurlProxyEnvironment(environment: [:]),
        clock: TransportClock = .manual(ManualTransportClock())
    ) throws -> CurlTransport {
        var configuration = TransportConfiguration(
            maximumConnectionsPerHost: maximumConnectionsPerHost, additionalTrustedCertificates: certificates)
        configuration.clock = clock
        return try CurlTransport(
            configuration: configuration, receiveBufferSize: 64 * 1024, responseWaitLimit: responseWaitLimit, proxies: proxies)
    }

    /// Starts `request` on `transport` with a new sink and returns both.
    static func start(
        _ request: TransportRequest, on transport: CurlTransport,
        sink: CurlRecordingSink = CurlRecordingSink()
    ) -> (CurlRecordingSink, any TransportTransfer) {
        let transfer = transport.startTransfer(request, sink: sink)
        sink.attach(transfer)
        return (sink, transfer)
    }

    /// Starts `request` with a sink that calls `suspend()` itself, on the transport's thread, as soon
    /// as `threshold` body bytes have arrived; returns the sink, the transfer and the byte count at
    /// the moment of suspension (known once the returned waiter finishes).
    static func startSuspending(
        _ request: TransportRequest, on transport: CurlTransport,
        after threshold: Int
    ) -> (CurlRecordingSink, any TransportTransfer, Locked<Int?>) {
        let slot = Locked<(any TransportTransfer)?>(nil)
        let suspendedAt = Locked<Int?>(nil)
        let received = Locked(0)
        let sink = CurlRecordingSink { event in
            guard case .body(let data) = event else { return }
            let total = received.withLock {
                $0 += data.count; return $0
            }
            guard total >= threshold, suspendedAt.withLock({ $0 == nil }) else { return }
            slot.withLock { $0 }?.suspend()
            suspendedAt.withLock { $0 = total }
        }
        let transfer = transport.startTransfer(request, sink: sink)
        sink.attach(transfer)
        slot.withLock { $0 = transfer }
        return (sink, transfer, suspendedAt)
    }

    /// Runs `request` to completion and returns what the sink saw.
    static func run(_ request: TransportRequest, on transport: CurlTransport) async throws -> CurlRecordingSink.Snapshot {
        let (sink, _) = start(request, on: transport)
        return try await sink.completion()
    }

    /// Expects the contract to have held: one completion, no ordering violations.
    static func expectContract(_ snapshot: CurlRecordingSink.Snapshot, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(snapshot.completions == 1, sourceLocation: sourceLocation)
        #expect(snapshot.violations.isEmpty, "\(snapshot.violations)", sourceLocation: sourceLocation)
    }

    /// A fresh file in the temporary directory holding `data`; the caller removes it.
    static func temporaryFile(_ data: Data) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-curl-test-\(UUID().uuidString)")
        try data.write(to: url)
        return url
    }

    /// A port on 127.0.0.1 that nothing listens on, reserved for the rest of the test process.
    static func closedPort() throws -> Int {
        try CourierTests.closedPort()
    }
}
