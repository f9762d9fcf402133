#if HTTPTypes
import Courier
import Foundation
import HTTPTypes
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPFields {
    /// Courier's headers as swift-http-types fields: line for line, in order, names as written,
    /// repeated names (lines made by `HTTPHeaders.append(name:value:)`, each `Set-Cookie` of
    /// `headerFields`) kept apart. Lossless: `HTTPHeaders(HTTPFields(headers)) == headers`.
    ///
    /// - Throws: `CourierError` of kind `.invalidRequest` naming the first header whose name is
    ///   not a valid field name or whose value is not a valid field value (swift-http-types would
    ///   otherwise rewrite the value; nothing is rewritten or dropped here).
    public init(_ headers: HTTPHeaders) throws(CourierError) {
        self.init()
        for header in headers {
            guard let name = HTTPField.Name(header.name) else {
                throw CourierError(.invalidRequest, "The header name \"\(header.name)\" is not a valid HTTP field name.")
            }
            guard HTTPField.isValidValue(header.value) else {
                throw CourierError(.invalidRequest, "The value of header \(header.name) is not a valid HTTP field value.")
            }
            append(HTTPField(name: name, value: header.value))
        }
    }
}

extension HTTPHeaders {
    /// swift-http-types fields as Courier's headers: line for line, in order, each name as it was
    /// written (its `rawName`), repeated names kept as lines of their own (`HTTPHeaders.append`).
    /// Lossless: `HTTPFields(HTTPHeaders(fields)) == fields`; Courier's curl transport sends each
    /// line as its own, URLSession joins a repeated name's lines (see `HTTPHeaders.dictionary`).
    public init(_ fields: HTTPFields) {
        self.init()
        for field in fields {
            append(name: field.name.rawName, value: field.value)
        }
    }
}

extension HTTPMethod {
    /// The swift-http-types method as Courier's.
    public init(_ method: HTTPRequest.Method) {
        self.init(rawValue: method.rawValue)
    }
}

extension HTTPRequest.Method {
    /// Courier's method as swift-http-types'.
    ///
    /// - Throws: `CourierError` of kind `.invalidRequest` when the method is not an HTTP token.
    public init(_ method: HTTPMethod) throws(CourierError) {
        guard let converted = HTTPRequest.Method(method.rawValue) else {
            throw CourierError(.invalidRequest, "The method \"\(method.rawValue)\" is not a valid HTTP method token.")
        }
        self = converted
    }
}

extension HTTPRequest {
    /// A `URLRequest` (what Courier's adapters, monitors and `Request.lastRequest` hold) as a
    /// swift-http-types request: method, scheme, authority, path and query, and the headers.
    ///
    /// Foundation keeps a `URLRequest`'s headers in a dictionary: their order is not kept (they
    /// come sorted by name), and repeated names arrive joined with `, ` as Foundation joined them.
    ///
    /// - Throws: `CourierError` of kind `.invalidURL` without an absolute URL, `.invalidRequest`
    ///   for a method or header that is not valid HTTP.
    public init(_ urlRequest: URLRequest) throws(CourierError) {
        guard let url = urlRequest.url, let scheme = url.scheme, let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let host = components.percentEncodedHost
        else {
            throw CourierError(.invalidURL, "\"\(urlRequest.url?.absoluteString ?? "")\" is not an absolute URL.", url: urlRequest.url)
        }
        let authority = components.port.map { "\(host):\($0)" } ?? host
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?\(query)" }
        self.init(
            method: try HTTPRequest.Method(HTTPMethod(rawValue: urlRequest.httpMethod ?? "GET")), scheme: scheme, authority: authority,
            path: path,
            headerFields: try HTTPFields(
                HTTPHeaders((urlRequest.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }.map { HTTPHeader(name: $0.key, value: $0.value) })))
    }
}

extension HTTPResponse {
    /// A response head Courier received, with its field lines as they arrived
    /// (`DataResponse.headerFields`, `Request.headerFields`): line for line, in wire order,
    /// repeated names and each `Set-Cookie` apart. Over URLSession the lines are what
    /// FoundationNetworking kept (one per name, sorted by name).
    ///
    /// ```swift
    /// let response = await session.request("items").serializingData().response
    /// if let head = response.response, let fields = response.headerFields {
    ///     let converted = try HTTPResponse(head, headerFields: fields)
    /// }
    /// ```
    ///
    /// - Throws: `CourierError` of kind `.invalidResponse` for a field that is not valid HTTP.
    public init(_ response: HTTPURLResponse, headerFields: HTTPHeaders) throws(CourierError) {
        let fields: HTTPFields
        do {
            fields = try HTTPFields(headerFields)
        } catch {
            throw CourierError(.invalidResponse, error.message, url: response.url)
        }
        self.init(status: HTTPResponse.Status(code: response.statusCode), headerFields: fields)
    }

    /// A response head Courier received (`Response.response`, `Request.response`) as a
    /// swift-http-types response: the status code and the headers.
    ///
    /// `HTTPURLResponse` keeps headers in a dictionary: their order is not kept (they come
    /// sorted by name), and repeated names (two `Set-Cookie`) arrive joined with `, `: use
    /// ``init(_:headerFields:)`` with Courier's `headerFields` to keep them. The reason phrase is
    /// not kept by `HTTPURLResponse` either (the status's standard phrase is used).
    ///
    /// - Throws: `CourierError` of kind `.invalidResponse` for a header that is not valid HTTP.
    public init(_ response: HTTPURLResponse) throws(CourierError) {
        var headers = HTTPHeaders()
        for case (let name as String, let value as String) in response.allHeaderFields {
            headers.add(name: name, value: value)
        }
        headers = HTTPHeaders(headers.sorted { $0.name < $1.name })
        let fields: HTTPFields
        do {
            fields = try HTTPFields(headers)
        } catch {
            throw CourierError(.invalidResponse, error.message, url: response.url)
        }
        self.init(status: HTTPResponse.Status(code: response.statusCode), headerFields: fields)
    }
}
#endif
