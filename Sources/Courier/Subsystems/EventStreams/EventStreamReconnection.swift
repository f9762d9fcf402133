import Foundation

/// When and how an event stream reconnects after its connection ends (EventSource semantics).
///
/// After a dropped connection or a clean end of the stream, the stream reconnects after the
/// server's `retry:` time (``defaultDelay`` until the server sets one), sending `Last-Event-ID`.
/// No delay is ever shorter than ``minimumDelay`` (500 ms), whatever the server asks: a server
/// that sends `retry: 0` cannot make its clients reconnect in a loop.
///
/// Attempts in a row that fail back off exponentially (the delay doubles with each one), up to
/// ``maximumDelay``. An attempt fails when it cannot connect or gets a 5xx, 408 or 429, and also
/// when the server accepts the stream but the connection ends within
/// ``stableConnectionDuration`` (10 s): a server that answers and hangs up at once, again and
/// again, is backed off like one that is down. Only a connection that stayed open that long
/// resets the count. Each delay gets up to ``jitter`` (a fraction) added at random, so that many
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
    /// The shortest delay before any reconnection, whatever the server's `retry:` or
    /// ``defaultDelay`` say (500 ms, as Firefox's EventSource); it wins over ``maximumDelay``.
    public var minimumDelay: Duration
    /// The longest delay, whatever the backoff or the server's `retry:` say (30 s).
    public var maximumDelay: Duration
    /// Up to this fraction of each delay is added at random (0.2: up to 20%).
    public var jitter: Double
    /// How many attempts in a row may fail (see the type's description: a connection that ends
    /// within ``stableConnectionDuration`` counts) before the stream gives up with the last
    /// error, or ends cleanly when that last connection ended cleanly; `nil` (the default) never
    /// gives up, as EventSource does.
    public var maximumConsecutiveFailures: Int?
    /// Whether a stream whose request is not idempotent (a POST, say, as LLM APIs use) is sent
    /// again after its connection ends; `false` by default: such a stream ends with its connection.
    public var resendsNonIdempotentRequests: Bool
    /// How long a connection must stay open, once the server accepted the stream, to count as
    /// healthy (10 s): one that ends sooner is a failed attempt, so the next delay backs off
    /// instead of resetting to the server's `retry:`. `.zero` resets the backoff after every
    /// accepted connection (``minimumDelay`` still applies).
    public var stableConnectionDuration: Duration

    /// Reconnects after 3 s (or the server's `retry:`, at least 500 ms), backing off to 30 s, forever.
    public static let automatic = EventStreamReconnection()

    /// Never reconnects: the stream ends with its first connection.
    public static let never = EventStreamReconnection(isEnabled: false)

    /// A policy; the defaults are those of ``automatic``.
    public init(
        isEnabled: Bool = true, defaultDelay: Duration = .seconds(3), minimumDelay: Duration = .milliseconds(500),
        maximumDelay: Duration = .seconds(30), jitter: Double = 0.2, maximumConsecutiveFailures: Int? = nil,
        resendsNonIdempotentRequests: Bool = false, stableConnectionDuration: Duration = .seconds(10)
    ) {
        self.isEnabled = isEnabled
        self.defaultDelay = defaultDelay
        self.minimumDelay = minimumDelay
        self.maximumDelay = maximumDelay
        self.jitter = jitter
        self.maximumConsecutiveFailures = maximumConsecutiveFailures
        self.resendsNonIdempotentRequests = resendsNonIdempotentRequests
        self.stableConnectionDuration = stableConnectionDuration
    }
}

/// One reconnection an event stream is about to make, for ``EventStreamUpdate/reconnecting(_:)``.
public struct EventStreamReconnectionAttempt: Sendable {
    /// 1 for the first attempt after a connection that stayed open for the policy's
    /// ``EventStreamReconnection/stableConnectionDuration``, counting up while attempts fail or
    /// their connections end sooner.
    public let attempt: Int
    /// How long the stream waits before it connects again (jitter included).
    public let delay: Duration
    /// Why the last connection ended: `nil` for a clean end of the stream.
    public let reason: CourierError?
    /// The `Last-Event-ID` the reconnection sends, if any.
    public let lastEventID: String?
}
