import CourierLocking
import Foundation

/// What one origin's `Alt-Svc` advertisements say now: the lifecycle of one entry of
/// ``CurlAlternativeServices``, transitions in ``handle(_:)``.
enum AltSvcState: Equatable, Sendable {
    /// Nothing is known: requests go over TCP.
    case unknown
    /// The origin serves HTTP/3 at `alternative` until `expires`.
    case advertised(AltSvcAlternative, expires: ContinuousClock.Instant)
    /// A QUIC connection to the advertised alternative failed: TCP until `until`, advertisements ignored.
    case broken(until: ContinuousClock.Instant)

    /// What happens to an entry.
    enum Event: Equatable, Sendable {
        /// A response carried an `Alt-Svc` field (``AltSvcHeader/none`` changes nothing).
        case header(AltSvcHeader, at: ContinuousClock.Instant)
        /// A request sent to the alternative could not connect there.
        case alternativeFailed(at: ContinuousClock.Instant)
        /// Time passed (an entry is looked up at `at`).
        case lookedUp(at: ContinuousClock.Instant)
    }

    /// How long the longest advertisement is kept, whatever its `ma` says.
    static let maximumAge = Duration.seconds(86_400)
    /// How long an alternative that failed is left alone.
    static let brokenPeriod = Duration.seconds(300)

    /// The state after `event`.
    func handle(_ event: Event) -> AltSvcState {
        switch (self, event) {
        case (.broken(let until), .header(_, let now)), (.broken(let until), .lookedUp(let now)):
            return now >= until ? AltSvcState.unknown.handle(event) : self
        case (_, .header(.clear, _)):
            return .unknown
        case (_, .header(.http3(let alternative), let now)):
            let age = min(alternative.maxAge, Self.maximumAge)
            return age > .zero ? .advertised(alternative, expires: now + age) : .unknown
        case (_, .header(.none, _)):
            return self
        case (_, .alternativeFailed(let now)):
            return .broken(until: now + Self.brokenPeriod)
        case (.advertised(_, let expires), .lookedUp(let now)):
            return now >= expires ? .unknown : self
        case (.unknown, .lookedUp):
            return self
        }
    }

    /// The alternative to use now, if any.
    var alternative: AltSvcAlternative? {
        if case .advertised(let alternative, _) = self { alternative } else { nil }
    }
}

/// The HTTP/3 alternatives one curl transport learnt from `Alt-Svc` response headers (RFC 7838),
/// for ``SessionConfiguration/usesHTTP3WhenAdvertised``: kept in memory, per transport (a
/// ``Session``), shared by every event loop and easy handle, and never written to disk.
///
/// libcurl keeps its own `Alt-Svc` cache per easy handle (CURLOPT_ALTSVC_CTRL), which Courier's
/// pooled handles would scatter, and fails a transfer whose alternative cannot be reached; here
/// the transport sends such a request over TCP again and leaves the alternative alone for a while.
final class CurlAlternativeServices: Sendable {
    /// An origin: `https`, a host (lower case) and a port.
    struct Origin: Hashable, Sendable {
        let host: String
        let port: Int

        /// The origin of an `https` URL; `nil` for any other URL.
        init?(_ url: URL) {
            guard url.scheme?.lowercased() == "https", let host = url.host(percentEncoded: true), !host.isEmpty else { return nil }
            self.host = host.lowercased()
            port = url.port ?? 443
        }
    }

    /// At most this many origins are remembered; a new one then replaces the one that expires first.
    static let maximumOrigins = 256

    // Protects the entries; held for a lookup or an update, never across a call out.
    private let entries = Locked<[Origin: AltSvcState]>([:])

    /// Records what a response from `origin` said in its `Alt-Svc` field.
    func learn(_ header: AltSvcHeader, for origin: Origin, at now: ContinuousClock.Instant = .now) {
        guard header != .none else { return }
        entries.withLock { entries in
            let next = (entries[origin] ?? .unknown).handle(.header(header, at: now))
            if next == .unknown {
                entries[origin] = nil
                return
            }
            if entries[origin] == nil, entries.count >= Self.maximumOrigins { Self.evictOne(from: &entries, at: now) }
            entries[origin] = next
        }
    }

    /// Where `origin` serves HTTP/3 now, if it advertised that and it has not failed lately.
    func alternative(for origin: Origin, at now: ContinuousClock.Instant = .now) -> AltSvcAlternative? {
        entries.withLock { entries in
            guard let state = entries[origin] else { return nil }
            let next = state.handle(.lookedUp(at: now))
            if next != state { entries[origin] = next == .unknown ? nil : next }
            return next.alternative
        }
    }

    /// Records that a request to `origin`'s alternative could not connect there.
    func alternativeFailed(for origin: Origin, at now: ContinuousClock.Instant = .now) {
        entries.withLock { entries in
            if entries[origin] == nil, entries.count >= Self.maximumOrigins { Self.evictOne(from: &entries, at: now) }
            entries[origin] = (entries[origin] ?? .unknown).handle(.alternativeFailed(at: now))
        }
    }

    /// How many origins are remembered (for tests).
    var count: Int { entries.withLock { $0.count } }

    /// Drops an expired entry, or else the one that ends first.
    private static func evictOne(from entries: inout [Origin: AltSvcState], at now: ContinuousClock.Instant) {
        func end(_ state: AltSvcState) -> ContinuousClock.Instant {
            switch state {
            case .unknown: now
            case .advertised(_, let expires): expires
            case .broken(let until): until
            }
        }
        if let first = entries.min(by: { end($0.value) < end($1.value) }) { entries[first.key] = nil }
    }
}
