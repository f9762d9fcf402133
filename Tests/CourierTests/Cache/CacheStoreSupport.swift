import Testing
import Foundation
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking

/// The namespace for the response store's own tests (disk format, eviction, writers, replay,
/// sharing a directory), so `swift test --filter ResponseCacheStore` runs exactly these.
@Suite("ResponseCacheStore") enum ResponseCacheStore {}

/// Builders and probes shared by the store tests.
enum StoreFixtures {
    static func head(
        status: Int = 200, headers: HTTPHeaders = ["Content-Type": "application/octet-stream"],
        at date: Date = Date(timeIntervalSince1970: 1_750_000_000)
    ) -> CacheEntryHead {
        CacheEntryHead(
            statusCode: status, headers: headers, requestTime: date.addingTimeInterval(-0.5), responseTime: date,
            varyingRequestHeaders: nil, requestHadAuthorization: false)
    }

    static func key(_ path: String) -> ResponseCacheKey {
        ResponseCache.httpKey(for: URL(string: "https://example.com/\(path)") ?? URL(fileURLWithPath: "/"))
    }

    /// Stores `body` for `key` through a writer, in pieces of `piece` bytes.
    @discardableResult
    static func write(
        _ cache: ResponseCache, _ key: ResponseCacheKey, _ body: Data, head: CacheEntryHead = head(),
        piece: Int = 16 << 10
    ) -> StoredEntry? {
        let writer = cache.makeWriter(for: key, head: head, url: nil, version: nil)
        var offset = 0
        while offset < body.count {
            let end = min(body.count, offset + piece)
            guard writer.append(body.subdata(in: offset..<end)) else { return nil }
            offset = end
        }
        return writer.commit()
    }

    /// Runs blocking store work (file writes, hashing, many entries) on a thread of its own, not on
    /// the concurrency pool: on two cores the pool has two threads, and a test blocking them for
    /// seconds stalls every other test of the process (whose time bounds then fail).
    static func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    /// `count` pattern bytes for `seed`.
    static func body(_ count: Int, seed: UInt64) -> Data {
        PatternBody.data(offset: 0, count: count, seed: seed)
    }

    /// The names in `directory`, sorted.
    static func names(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    static func temporaryFiles(in directory: URL) -> [String] {
        names(in: directory).filter { $0.hasSuffix(".tmp") }
    }

    /// Temporary files no live writer holds (a killed writer's leftovers): a cache keeps a few
    /// locked ones to reuse (``CacheSpareFiles``), which are not leftovers.
    static func leftoverTemporaryFiles(in directory: URL) -> [String] {
        temporaryFiles(in: directory).filter { !CacheFileIO.isLocked(directory.appendingPathComponent($0)) }
    }

    static func bodyFiles(in directory: URL) -> [String] {
        names(in: directory).filter { $0.hasSuffix(".body") }
    }

    static func headFile(_ key: ResponseCacheKey, in directory: URL) -> URL {
        directory.appendingPathComponent("\(key.fileName).response")
    }

    /// The process's peak resident set size (VmHWM) in bytes, where the platform reports it.
    static func peakResidentBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.filter(\.isNumber)).map { $0 * 1024 }
        }
        return nil
    }

    static var underThreadSanitizer: Bool { dlsym(nil, "__tsan_init") != nil }
}

/// A sink that records a replay and acknowledges body bytes only when told to.
final class ReplayRecorder: TransportEventSink {
    struct Snapshot: Sendable {
        var head: ResponseHead?
        var received: Int64 = 0
        var kept = Data()
        var bodyEvents = 0
        var completions = 0
        var error: CourierError?
        var metrics: TransferMetrics?
        var eventsAfterCompletion = 0
    }

    private let state = Locked(Snapshot())
    private let keepsBody: Bool
    private let waiters = Locked([(predicate: @Sendable (Snapshot) -> Bool, continuation: CheckedContinuation<Void, Never>)]())

    init(keepsBody: Bool = true) {
        self.keepsBody = keepsBody
    }

    var snapshot: Snapshot { state.withLock { $0 } }

    func receive(_ event: TransportEvent) {
        let keepsBody = keepsBody
        state.withLock { state in
            if state.completions > 0 { state.eventsAfterCompletion += 1 }
            switch event {
            case .response(let head): state.head = head
            case .body(let data):
                state.received += Int64(data.count)
                state.bodyEvents += 1
                if keepsBody { state.kept.append(data) }
            case .completed(let error, let metrics):
                state.completions += 1
                state.error = error
                state.metrics = metrics
            case .uploadProgress: break
            }
        }
        wake()
    }

    /// Waits until `predicate` holds (or 30 s pass); returns whether it held.
    func wait(until predicate: @escaping @Sendable (Snapshot) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while !predicate(snapshot) {
            guard ContinuousClock.now < deadline else { return false }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = predicate(snapshot)
                if ready {
                    continuation.resume()
                } else {
                    waiters.withLock { $0.append((predicate, continuation)) }
                    // A timer wakes the waiter so the deadline is checked even with no events.
                    DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { [weak self] in self?.wakeAll() }
                }
            }
        }
        return true
    }

    private func wake() {
        let snapshot = snapshot
        let ready = waiters.withLock { waiters -> [CheckedContinuation<Void, Never>] in
            let ready = waiters.filter { $0.predicate(snapshot) }.map(\.continuation)
            waiters.removeAll { $0.predicate(snapshot) }
            return ready
        }
        ready.forEach { $0.resume() }
    }

    private func wakeAll() {
        let all = waiters.withLock { waiters -> [CheckedContinuation<Void, Never>] in
            defer { waiters.removeAll() }
            return waiters.map(\.continuation)
        }
        all.forEach { $0.resume() }
    }
}
