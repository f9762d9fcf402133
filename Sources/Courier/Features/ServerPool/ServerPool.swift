import Foundation
import CourierLocking

/// Named base URLs for a session: environments to switch between, backups to fail over to when
/// transport failures pile up, and extra servers (a CDN) for single requests.
///
/// ```swift
/// let servers = ServerPool([.init(name: "production", baseURL: production),
///                           .init(name: "backup", baseURL: backup)],
///                          auxiliary: [.init(name: "cdn", baseURL: cdn)],
///                          failover: .errorRate(0.1, minimumRequests: 40))
/// let api = Session(servers: servers, eventMonitors: [LoggingMonitor()])
/// api.request("users/42")                            // production, or backup after a failover
/// api.request(servers.url("img/1.png", on: "cdn"))   // always the CDN
/// servers.switchTo("backup")                         // by hand (also the server returned to)
/// ```
///
/// Relative paths resolve against ``current`` at each attempt, so a retry after a failover goes
/// to the new server. Every switch, automatic or manual, reaches the event monitors of each
/// session using the pool as a `SessionNotice` of kind `.serverSwitched`, synchronously on the
/// thread whose request outcome, URL lookup or ``switchTo(_:)`` call caused it. See
/// ``FailoverPolicy`` for when the pool switches and how it comes back.
///
/// Failover moves through ``servers`` in order, so list only servers that can stand in for each
/// other there; servers that are only ever addressed explicitly belong in ``auxiliary``.
/// Outcomes are matched to servers by URL prefix: requests to other hosts do not count.
public final class ServerPool: Sendable {
    /// A base URL with a name to switch to and to mention in notices.
    public struct Server: Sendable, Hashable, CustomStringConvertible {
        /// The name, e.g. `"production"`, `"backup"`, `"cdn"`.
        public let name: String
        /// Relative paths resolve against it (its path counts as a directory, as for `Session.baseURL`).
        public let baseURL: URL

        /// Creates a server.
        public init(name: String, baseURL: URL) {
            self.name = name
            self.baseURL = baseURL
        }

        /// A server named after its URL.
        public init(_ baseURL: URL) {
            self.init(name: baseURL.absoluteString, baseURL: baseURL)
        }

        /// `name (baseURL)`.
        public var description: String {
            name == baseURL.absoluteString ? name : "\(name) (\(baseURL.absoluteString))"
        }

        /// The base URL as a prefix for matching request URLs, ending in `/`.
        var prefix: String {
            let normalised = ResponseCacheKey.normalisedURL(baseURL)
            return normalised.hasSuffix("/") ? normalised : normalised + "/"
        }
    }

    /// The servers relative paths can resolve against, in failover order; the first is preferred at the start.
    public let servers: [Server]
    /// Servers reached only explicitly, with ``url(_:on:)``; never current, never failed over to.
    public let auxiliary: [Server]
    /// When the pool switches by itself.
    public let failover: FailoverPolicy

    private let state: Locked<FailoverState>
    private let observers = Locked(SwitchObservers())
    private let prefixes: [String]
    /// The current time; tests move it to end cool-downs without sleeping.
    private let now: @Sendable () -> ContinuousClock.Instant

    /// Creates a pool of named servers; the first is current and preferred.
    ///
    /// - Parameters:
    ///   - servers: Base URLs relative paths resolve against, in failover order.
    ///   - auxiliary: Base URLs used only through ``url(_:on:)``, such as a CDN.
    ///   - failover: `.manual` (the default) or `.errorRate(...)`.
    public convenience init(_ servers: [Server], auxiliary: [Server] = [], failover: FailoverPolicy = .manual) {
        self.init(servers, auxiliary: auxiliary, failover: failover, now: { .now })
    }

    /// Creates a pool from base URLs, each server named after its URL's absolute string.
    public convenience init(_ baseURLs: [URL], failover: FailoverPolicy = .manual) {
        self.init(baseURLs.map(Server.init), failover: failover)
    }

    init(
        _ servers: [Server], auxiliary: [Server] = [], failover: FailoverPolicy,
        now: @escaping @Sendable () -> ContinuousClock.Instant
    ) {
        self.servers = servers
        self.auxiliary = auxiliary
        self.failover = failover
        self.prefixes = servers.map(\.prefix)
        self.now = now
        self.state = Locked(FailoverState(serverCount: servers.count, policy: failover))
    }

    /// The server relative paths resolve against now; `nil` only for an empty pool. Reading it
    /// applies a return to the preferred server whose cool-down has elapsed, as a request would.
    public var current: Server? {
        currentIndex.map { servers[$0] }
    }

    /// The server the pool returns to after a failover: the first, or the last one switched to by hand.
    public var preferred: Server? {
        state.withLock { $0.preferred }.map { servers[$0] }
    }

    /// The server (in ``servers`` or ``auxiliary``) named `name`; the first if several share it.
    public func server(named name: String) -> Server? {
        servers.first { $0.name == name } ?? auxiliary.first { $0.name == name }
    }

    /// Makes the server named `name` current and preferred (a failover later returns to it) and
    /// forgets its failures. Returns `false`, changing nothing, when ``servers`` has no such server.
    @discardableResult
    public func switchTo(_ name: String) -> Bool {
        guard let index = servers.firstIndex(where: { $0.name == name }) else { return false }
        let change = state.withLock { $0.switchManually(to: index) }
        report(change)
        return true
    }

    /// `path` on the server named `name` (in ``servers`` or ``auxiliary``), for one request:
    /// `api.request(servers.url("img/1.png", on: "cdn"))`. An unknown name or an invalid path
    /// fails that request with `.invalidURL`, like any invalid URL.
    public func url(_ path: String, on name: String) -> ServerURL {
        ServerURL(server: server(named: name), name: name, path: path)
    }

    /// The base URL relative paths resolve against right now.
    var currentBaseURL: URL? {
        currentIndex.map { servers[$0].baseURL }
    }

    private var currentIndex: Int? {
        let now = now()
        let (index, change) = state.withLock { state in
            let change = state.recoverIfDue(at: now)
            return (state.current, change)
        }
        report(change)
        return index
    }

    /// Records the outcome of an exchange with `url`: `error` is `nil` on success. Only
    /// transport errors count as failures; cancelled exchanges are ignored.
    func record(_ url: URL?, error: CourierError?) {
        guard failover.isAutomatic, let url, error?.isCancelled != true, let server = serverIndex(for: url) else { return }
        let failed = error?.isTransportError ?? false
        let now = now()
        let change = state.withLock { state in
            // An outcome arriving as the preferred server comes back was sent before: it does not
            // count towards the trial.
            state.recoverIfDue(at: now) ?? state.record(server: server, failed: failed, at: now)
        }
        report(change)
    }

    /// Sends every later switch to `observer` until it returns `false` (its session is gone).
    func addSwitchObserver(_ observer: @escaping @Sendable (SessionNotice) -> Bool) {
        observers.withLock { observers in
            observers.nextID += 1
            observers.byID[observers.nextID] = observer
        }
    }

    /// The failover server whose base URL is the longest prefix of `url`.
    private func serverIndex(for url: URL) -> Int? {
        let target = ResponseCacheKey.normalisedURL(url)
        return prefixes.indices
            .filter { target.hasPrefix(prefixes[$0]) || target + "/" == prefixes[$0] }
            .max { prefixes[$0].count < prefixes[$1].count }
    }

    private func report(_ change: ServerSwitch?) {
        guard let change else { return }
        let notice = SessionNotice(kind: .serverSwitched, message: message(for: change))
        let snapshot = observers.withLock { $0.byID.sorted { $0.key < $1.key } }
        let gone = snapshot.filter { !$0.value(notice) }.map(\.key)
        guard !gone.isEmpty else { return }
        observers.withLock { observers in gone.forEach { observers.byID[$0] = nil } }
    }

    private func message(for change: ServerSwitch) -> String {
        let target = servers[change.to]
        let origin = change.from.map { servers[$0].description } ?? "no server"
        switch change.reason {
        case .errorRate(let failures, let count):
            return "Switched from \(origin) to \(target): \(failures) of the last \(count) exchanges failed at the transport level "
                + "(threshold \(FailoverPolicy.percent(failover.threshold)))."
        case .coolDownElapsed(let coolDown):
            return "Switched back from \(origin) to \(target) after a cool-down of \(coolDown); it is on trial."
        case .trialFailed(let failures, let count, let next):
            return "Switched from \(origin) to \(target): \(failures) of \(count) exchanges failed during its trial; "
                + "next try after \(next)."
        case .manual:
            return "Switched from \(origin) to \(target) by hand."
        }
    }
}

/// The observers of a pool's switches, in the order they were added.
private struct SwitchObservers: Sendable {
    var nextID = 0
    var byID: [Int: @Sendable (SessionNotice) -> Bool] = [:]
}

/// A path on a named server of a ``ServerPool``, usable wherever Courier takes a URL.
public struct ServerURL: URLConvertible, CustomStringConvertible {
    let server: ServerPool.Server?
    let name: String
    let path: String

    /// The path resolved against the server's base URL; `.invalidURL` for an unknown server or a bad path.
    public func asURL() throws -> URL {
        guard let server else {
            throw CourierError(.invalidURL, "The server pool has no server named \"\(name)\".")
        }
        guard let relative = URL(string: path), let url = server.baseURL.resolving(relative), url.isHTTP else {
            throw CourierError(.invalidURL, "\"\(path)\" does not form a valid URL on \(server).")
        }
        return url
    }

    /// The URL, or a note that it cannot be formed.
    public var description: String {
        (try? asURL().absoluteString) ?? "\(path) on unknown server \"\(name)\""
    }
}

extension ServerPool: SessionBaseURLSource {}

extension ServerPool: RequestFeature {
    /// Counts an exchange's outcome towards its server's health; a locally answered one says nothing about it.
    func exchangeDidComplete(_ exchange: ExchangeContext, origin: ExchangeOrigin, error: CourierError?) {
        guard origin.reachedServer else { return }
        record(exchange.request.url, error: error)
    }
}
