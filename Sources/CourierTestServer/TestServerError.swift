/// Errors thrown by ``TestServer`` and its helpers.
public enum TestServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing arrived before the timeout passed.
    case timeout
    /// The server was shut down while (or before) the caller was waiting.
    case shutdown
    /// A socket call failed while starting the server; `errno` is the POSIX error code.
    case socketFailure(String, errno: Int32)
    /// The system refused to start the server's accept thread.
    case threadStartFailed
    /// The server's own bookkeeping went wrong; please report it as a bug.
    case internalInconsistency(String)

    /// A one-line description of the error.
    public var description: String {
        switch self {
        case .timeout:
            return "TestServer: timed out"
        case .shutdown:
            return "TestServer: the server was shut down"
        case .socketFailure(let call, let code):
            return "TestServer: \(call) failed with errno \(code)"
        case .threadStartFailed:
            return "TestServer: could not start the accept thread"
        case .internalInconsistency(let detail):
            return "TestServer internal error: \(detail)"
        }
    }
}
