/// Where a request is in its life, as `await request.state` reports it.
///
/// `initialized → resumed ⇄ suspended → cancelled | finished`. `cancelled` and `finished` are final.
public enum RequestState: String, Sendable, Hashable, CustomStringConvertible {
    /// Created; nothing sent yet.
    case initialized
    /// Running: preparing, transferring, validating or waiting to retry (or, for a stream, handing
    /// the rest of the body to its consumer).
    case resumed
    /// Paused by `suspend()`; `resume()` continues.
    case suspended
    /// Cancelled; response handlers get a `.cancelled` error.
    case cancelled
    /// Completed with a response or an error.
    case finished

    /// The state's name.
    public var description: String { rawValue }

    /// Whether the request can no longer change state.
    public var isTerminal: Bool { self == .cancelled || self == .finished }
}
