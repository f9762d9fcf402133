import Foundation

/// When and how an event stream reconnects after its connection ends (EventSource semantics).
///
/// After a dropped connection or a clean end of the stream, the stream reconnects after the
/// server's `retry:` time (``defaultDelay`` until the server sets one), sending `Last-Event-ID`.
/// Attempts that fail before the server accepts the stream back off exponentially, up to
/// ``maximumDelay``; each delay gets up to ``jitter`` (a fraction) added at random, so that many
/// clients dropped at once do not come back at once. A 204 response ends the stream cleanly; a
/// 4xx or a response that is not `text/event-stream` ends it for good with an error.
///
/// ```swift
/// var reconnection = EventStreamReconnection.automatic
/// reconnection.maximumDelay = .seconds(10)
/// let stream = session.eventStream("v1/events", reconnection: reconnection)
/// let once = session.eventStream("v1/events", reconnection: .never)
/// ```
public struct EventStreamReconnection: Sendable, Hashable {
    /// Whether the stream reconnects at all.
    public var isEnabled: Bool
    /// The delay before a reconnection until the server sets one with `retry:` (3 s).
    public var defaultDelay: Duration
    /// The longest delay, whatever the backoff or the server's `retry:` say (30 s).
    public var maximumDelay: Duration
    /// Up to this fraction of each delay is added at random (0.2: up to 20%).
    public var jitter: Double
    /// How many attempts in a row may fail before the stream gives up with the last error;
    /// `nil` (the default) never gives up, as EventSource does.
    public var maximumConsecutiveFailures: Int?
    /// Whether a stream whose request is not idempotent (a POST, say, as LLM APIs use) is sent
    /// again after its connection ends; `false` by default: such a stream ends with its connection.
    public var resendsNonIdempotentRequests: Bool

    /// Reconnects after 3 s (or the server's `retry:`), backing off to 30 s, forever.
    public static let automatic = EventStreamReconnection()

    /// Never reconnects: the stream ends with its first connection.
    public static let never = EventStreamReconnection(isEnabled: false)

    /// A policy; the defaults are those of ``automatic``.
    public init(
        isEnabled: Bool = true, defaultDelay: Duration = .seconds(3), maximumDelay: Duration = .seconds(30),
        jitter: Double = 0.2, maximumConsecutiveFailures: Int? = nil, resendsNonIdempotentRequests: Bool = false
    ) {
        self.isEnabled = isEnabled
        self.defaultDelay = defaultDelay
        self.maximumDelay = maximumDelay
        self.jitter = jitter
        self.maximumConsecutiveFailures = maximumConsecutiveFailures
        self.resendsNonIdempotentRequests = resendsNonIdempotentRequests
    }
}

/// One reconnection an event stream is about to make, for ``EventStreamUpdate/reconnecting(_:)``.
public struct EventStreamReconnectionAttempt: Sendable {
    /// 1 for the first attempt after a connection that delivered the stream, counting up while
    /// attempts fail.
    public let attempt: Int
    /// How long the stream waits before it connects again (jitter included).
    public let delay: Duration
    /// Why the last connection ended: `nil` for a clean end of the stream.
    public let reason: CourierError?
    /// The `Last-Event-ID` the reconnection sends, if any.
    public let lastEventID: String?
}
