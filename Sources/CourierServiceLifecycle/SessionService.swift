#if ServiceLifecycle
import Courier
import ServiceLifecycle

/// Runs a Courier `Session` as a service of a swift-service-lifecycle `ServiceGroup`: when the
/// group shuts down gracefully (a signal, or `triggerGracefulShutdown()`), the session does too,
/// with `Session.shutdown(gracePeriod:clock:)`.
///
/// New requests then fail at once with `.sessionInvalidated`; requests in flight get
/// ``gracePeriod`` to finish and are cancelled after it; ``run()`` returns once every request has
/// ended and the transport is released. Cancelling the group cancels them at once.
///
/// ```swift
/// let api = Session(baseURL: apiURL)
/// let group = ServiceGroup(
///     services: [server, SessionService(api, gracePeriod: .seconds(10))],
///     gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
///
/// Put it after the services that make requests with the session: a group shuts its services down
/// in reverse order, so theirs stop before the session's.
public struct SessionService: Service {
    /// The session this service shuts down.
    public let session: Session
    /// How long requests in flight may take to finish once shutdown begins.
    public let gracePeriod: Duration
    private let clock: any Clock<Duration>

    /// Creates a service for `session`.
    ///
    /// - Parameters:
    ///   - session: The session to shut down when the group does.
    ///   - gracePeriod: How long requests in flight may take to finish before they are cancelled.
    ///   - clock: The clock the grace period runs on.
    public init(_ session: Session, gracePeriod: Duration = .seconds(30), clock: any Clock<Duration> = ContinuousClock()) {
        self.session = session
        self.gracePeriod = gracePeriod
        self.clock = clock
    }

    /// Waits for the group's graceful shutdown, then shuts the session down within ``gracePeriod``.
    public func run() async throws {
        // Throws when the group cancels the service: the shutdown below then cancels what still runs.
        try? await gracefulShutdown()
        await session.shutdown(gracePeriod: gracePeriod, clock: clock)
    }
}
#endif
