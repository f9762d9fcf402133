import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A capability that plugs into every request of a session without the request engine knowing
/// its type: it may answer an exchange instead of the network (the response cache, a shared
/// transfer of the deduplicator) and it may watch how exchanges and requests end (the server
/// pool's health, the cache's stores).
///
/// The session asks its features in order, once per exchange; the first that routes the exchange
/// decides where its answer comes from, and that decision (``ExchangeOrigin``) travels with the
/// exchange to the features' observers. Every method has a default that does nothing.
protocol RequestFeature: Sendable {
    /// A transfer answering `exchange`, or `nil` to leave it to the next feature and in the end
    /// to the session's transport. `sink` receives the transfer's events. A feature that wants the
    /// network's answer itself (to keep or change it) starts its own exchange through `onward`, the
    /// features after it and the transport.
    func route(_ exchange: ExchangeContext, sink: any TransportEventSink, onward: ExchangeOnward) -> RoutedTransfer?
    /// An exchange of a request of the session ended, with `error` unless it succeeded.
    func exchangeDidComplete(_ exchange: ExchangeContext, origin: ExchangeOrigin, error: CourierError?)
    /// A request of the session ended (finished or cancelled); `origin` is where the answer of its
    /// last exchange came from, `nil` when no exchange started.
    func requestDidComplete(_ request: CompletedRequest)
}

extension RequestFeature {
    func route(_ exchange: ExchangeContext, sink: any TransportEventSink, onward: ExchangeOnward) -> RoutedTransfer? { nil }
    func exchangeDidComplete(_ exchange: ExchangeContext, origin: ExchangeOrigin, error: CourierError?) {}
    func requestDidComplete(_ request: CompletedRequest) {}
}

/// Where the answer to one exchange comes from, decided once as the exchange starts.
enum ExchangeOrigin: Sendable, Hashable {
    /// A transfer of the request's own on the network.
    case network
    /// A network transfer shared with identical requests in flight.
    case shared
    /// A feature answered from what it keeps (a stored response): no server was asked.
    case local

    /// Whether a server answered (the outcome says something about its health).
    var reachedServer: Bool { self != .local }
}

/// What lies beyond one feature: the features after it, then the session's transport. A feature
/// may keep it past `route` (the HTTP cache sends a request again after a `304` it cannot use), so
/// it holds the session strongly: the session then outlives that exchange.
struct ExchangeOnward {
    let session: Session
    /// The index of the first feature onward.
    let start: Int

    /// The session's transport.
    var transport: any Transport { session.transport }

    /// Starts `exchange` with the features onward, and in the end the transport.
    func route(_ exchange: ExchangeContext, sink: any TransportEventSink) -> RoutedTransfer {
        session.route(exchange, sink: sink, from: start)
    }
}

/// A transfer a feature took on, and where its answer comes from.
struct RoutedTransfer {
    let transfer: any TransportTransfer
    let origin: ExchangeOrigin
}

/// One exchange as features see it when routing it or when it ends.
struct ExchangeContext {
    /// The exchange as it goes on the wire.
    let request: TransportRequest
    /// The request as its source built it, before adapters (what the response cache keys on).
    let initialRequest: URLRequest?
    /// Whether the request sends an upload body (file, data or multipart).
    let hasUploadBody: Bool
    /// Whether the response body may be handed to other requests too: not for a stream (whose
    /// consumer's pace is its backpressure) nor for a resumable download (whose partial file
    /// belongs to one request).
    let bodyMayBeShared: Bool
    /// Whether the body may be answered from, and kept in, a response cache: a stream's may (the
    /// stored copy replays at the consumer's pace), a resumable download's may not (its partial
    /// file belongs to the download store).
    let bodyMayBeStored: Bool
    /// What the request asked of features (`cached(for:)`, `deduplication(_:)`...).
    let settings: RequestFeatureSettings
    /// Tells the request's event monitors something, on the request's executor, after the events
    /// already on their way to it.
    let notifyMonitors: MonitorNotifier
    /// Runs a feature's work for this exchange on the request's executor.
    let requestQueue: RequestWorkQueue

    /// The same exchange with another request on the wire (a feature's conditional request, say).
    func with(request: TransportRequest) -> ExchangeContext {
        ExchangeContext(
            request: request, initialRequest: initialRequest, hasUploadBody: hasUploadBody,
            bodyMayBeShared: bodyMayBeShared, bodyMayBeStored: bodyMayBeStored, settings: settings,
            notifyMonitors: notifyMonitors, requestQueue: requestQueue)
    }
}

/// Runs work on a request's executor, from any thread: after everything already queued there (the
/// transport events on their way to the request among them), never on the calling thread, never
/// at the same time as the request's own work. A feature standing between the transport and the
/// request handles the transport's events here when handling them may block (the HTTP cache
/// writes the disk): off the transport's thread, in the drain that takes those events into the
/// request anyway, so it costs no thread hop of its own.
struct RequestWorkQueue: Sendable {
    /// The request's executor (held, not a closure around it: one allocation fewer per exchange).
    let executor: RequestExecutor

    /// Queues `work`.
    func callAsFunction(_ work: @escaping @Sendable () -> Void) { executor.execute(inline: false, work) }
}

/// Calls a request's event monitors on its executor, from any thread.
struct MonitorNotifier: Sendable {
    let notify: @Sendable (@escaping @Sendable (any EventMonitor, any Request) -> Void) -> Void

    func callAsFunction(_ event: @escaping @Sendable (any EventMonitor, any Request) -> Void) { notify(event) }

    /// A notifier that tells no one.
    static let none = MonitorNotifier { _ in }
}

/// A request that ended, as features see it.
struct CompletedRequest {
    let completion: RequestCompletion
    /// The request as its source built it, before adapters.
    let initialRequest: URLRequest?
    /// Whether the request sent an upload body.
    let hasUploadBody: Bool
    /// Where the answer of the last exchange came from; `nil` when no exchange started.
    let origin: ExchangeOrigin?
    /// What the request asked of features.
    let settings: RequestFeatureSettings
}

/// A value a feature keeps per request: its type is its key, `defaultValue` is what a request
/// that set nothing has.
protocol RequestFeatureSetting: Sendable {
    associatedtype Value: Sendable
    static var defaultValue: Value { get }
}

/// The feature settings of one request, keyed by setting type; the engine carries them without
/// knowing what they are.
struct RequestFeatureSettings: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]

    subscript<Setting: RequestFeatureSetting>(_ setting: Setting.Type) -> Setting.Value {
        get { values[ObjectIdentifier(setting)] as? Setting.Value ?? Setting.defaultValue }
        set { values[ObjectIdentifier(setting)] = newValue }
    }
}

extension Request {
    /// Changes one of the request's feature settings, on its executor, in call order.
    nonisolated func updateFeatureSetting<Setting: RequestFeatureSetting>(
        _ setting: Setting.Type, _ update: @escaping @Sendable (inout Setting.Value) -> Void
    ) {
        engineAccess.perform { engine in update(&engine.featureSettings[Setting.self]) }
    }
}
