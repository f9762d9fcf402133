/// An HTTP request method such as GET or POST.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// `CONNECT`
    public static let connect = HTTPMethod(rawValue: "CONNECT")
    /// `DELETE`
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `GET`
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `OPTIONS`
    public static let options = HTTPMethod(rawValue: "OPTIONS")
    /// `PATCH`
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `POST`
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `QUERY`
    public static let query = HTTPMethod(rawValue: "QUERY")
    /// `TRACE`
    public static let trace = HTTPMethod(rawValue: "TRACE")

    /// The method token as sent on the wire, e.g. `"GET"`.
    public let rawValue: String

    /// Creates a method from its token; tokens are case-sensitive, so pass them upper-cased.
    ///
    /// A method must be an RFC 9110 token (letters, digits, `!#$%&'*+-.^_|~` and the backtick); a request
    /// with any other method (empty, with spaces or line breaks) fails with
    /// ``CourierError/Kind/invalidRequest`` before anything is sent.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Creates a method from a string literal such as `"PURGE"`.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The method token.
    public var description: String { rawValue }

    /// Whether the method is idempotent (RFC 9110 §9.2.2): retrying it cannot repeat a side effect.
    public var isIdempotent: Bool {
        switch self {
        case .get, .head, .put, .delete, .options, .trace, .query: true
        default: false
        }
    }

    /// Whether the method is safe (RFC 9110 §9.2.1): it only reads.
    public var isSafe: Bool {
        switch self {
        case .get, .head, .options, .trace, .query: true
        default: false
        }
    }

    /// Whether parameters for this method go in the URL query rather than the body by default.
    var encodesParametersInURL: Bool {
        switch self {
        case .get, .head, .delete: true
        default: false
        }
    }
}
