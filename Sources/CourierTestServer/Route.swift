/// Which request methods a route answers.
public struct RouteMethod: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The method name (compared case-sensitively, as HTTP does); nil for any method.
    public let name: String?

    /// Creates a matcher for one method, e.g. `RouteMethod("PROPFIND")`.
    public init(_ name: String) {
        self.name = name
    }

    /// Creates a matcher from a literal, e.g. `method: "GET"`.
    public init(stringLiteral value: String) {
        self.name = value
    }

    private init(any: Void) {
        self.name = nil
    }

    /// Any method.
    public static let any = RouteMethod(any: ())
    /// `GET`.
    public static let get = RouteMethod("GET")
    /// `HEAD`.
    public static let head = RouteMethod("HEAD")
    /// `POST`.
    public static let post = RouteMethod("POST")
    /// `PUT`.
    public static let put = RouteMethod("PUT")
    /// `PATCH`.
    public static let patch = RouteMethod("PATCH")
    /// `DELETE`.
    public static let delete = RouteMethod("DELETE")
    /// `OPTIONS`.
    public static let options = RouteMethod("OPTIONS")

    /// Whether a request with `method` matches.
    public func matches(_ method: String) -> Bool {
        name.map { $0 == method } ?? true
    }

    /// The method name, or `*` for any.
    public var description: String { name ?? "*" }
}

/// A registered route: an exact path, a method matcher, and what answers it.
struct Route: Sendable {
    enum Handler: Sendable {
        case closure(@Sendable (RecordedRequest) -> MockResponse)
        case resource(Resource)
    }

    var id: Int
    var path: String
    var method: RouteMethod
    var handler: Handler
}

/// Where the answer to a request comes from, decided under the server's lock and produced
/// outside it.
enum DispatchDecision: Sendable {
    case closure(@Sendable (RecordedRequest) -> MockResponse)
    case resource(Resource, serveIndex: Int)
    case response(MockResponse)
    case unscripted

    /// Produces the response (running a route or dispatcher closure if there is one).
    func response(for request: RecordedRequest) -> MockResponse {
        switch self {
        case .closure(let handler):
            return handler(request)
        case .resource(let resource, let serveIndex):
            return resource.response(for: request, serveIndex: serveIndex)
        case .response(let response):
            return response
        case .unscripted:
            return MockResponse.text(
                "TestServer: no response scripted for \(request.method) \(request.target) "
                    + "(enqueue a MockResponse, add a route, or set a dispatcher)\n",
                status: 599)
        }
    }
}
