import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Untyped request parameters, as Alamofire's `Parameters`: strings, numbers, Booleans, `NSNull`,
/// arrays and `[String: …]` dictionaries of them, nested as deep as you like, plus `Date`, `Data`
/// and any `Encodable`. Prefer an `Encodable` type with `parameters:encoder:` where you can.
///
/// Values must be `Sendable`, so a nested literal that mixes types says so:
/// `["tags": ["a", 1] as [any Sendable], "address": ["city": "Oslo", "zip": 123] as Parameters]`.
public typealias Parameters = [String: any Sendable]

/// Puts untyped ``Parameters`` into a request: ``URLEncoding`` (query or form body) or
/// ``JSONEncoding`` (JSON body). Alamofire's `ParameterEncoding`.
///
/// A value that is neither a JSON value nor `Encodable` fails the request with
/// ``CourierError/Kind-swift.struct/encodingFailed`` (naming the parameter), through its response
/// handlers; it never crashes.
public protocol ParameterEncoding: Sendable {
    /// Returns `request` with `parameters` encoded into it; throws `.encodingFailed`.
    func encode(_ request: URLRequest, with parameters: Parameters?) throws -> URLRequest
}

/// Encodes ``Parameters`` URL-encoded: into the query for GET, HEAD and DELETE, into an
/// `application/x-www-form-urlencoded` body otherwise (or always one of them, see ``Destination``),
/// with every option of ``URLEncodedFormEncoder``.
///
/// ```swift
/// let parameters: Parameters = ["q": "swift", "page": 2, "tags": ["a", "b"], "exact": true]
/// api.request("search", parameters: parameters, encoding: URLEncoding.default)
/// // GET /search?exact=true&page=2&q=swift&tags%5B%5D=a&tags%5B%5D=b
/// ```
public struct URLEncoding: ParameterEncoding {
    /// Where the encoded parameters go.
    public typealias Destination = URLEncodedFormParameterEncoder.Destination

    /// Where the parameters go.
    public let destination: Destination
    /// The form encoder and its options (keys sorted, `nil` dropped, Booleans `true`/`false` by default).
    public let encoder: URLEncodedFormEncoder

    /// Creates an encoding.
    public init(destination: Destination = .methodDependent, encoder: URLEncodedFormEncoder = URLEncodedFormEncoder()) {
        self.destination = destination
        self.encoder = encoder
    }

    /// Creates an encoding with Alamofire's option names.
    ///
    /// ```swift
    /// URLEncoding(destination: .queryString, arrayEncoding: .noBrackets, boolEncoding: .numeric)
    /// ```
    public init(
        destination: Destination = .methodDependent, arrayEncoding: URLEncodedFormEncoder.ArrayEncoding,
        boolEncoding: URLEncodedFormEncoder.BoolEncoding = .literal
    ) {
        self.init(destination: destination, encoder: URLEncodedFormEncoder(arrayEncoding: arrayEncoding, boolEncoding: boolEncoding))
    }

    /// Query for GET, HEAD and DELETE; form body otherwise.
    public static var `default`: URLEncoding { URLEncoding() }
    /// Always the query.
    public static var queryString: URLEncoding { URLEncoding(destination: .queryString) }
    /// Always the body.
    public static var httpBody: URLEncoding { URLEncoding(destination: .httpBody) }

    /// Encodes into the query or the body.
    public func encode(_ request: URLRequest, with parameters: Parameters?) throws -> URLRequest {
        guard let parameters else { return request }
        let value: ParameterValue
        do {
            value = try ParameterValue.object(from: parameters)
        } catch {
            throw CourierError(error.kind, error.message, url: request.url)
        }
        return try URLEncodedFormParameterEncoder(encoder: encoder, destination: destination).encodeValue(value, into: request)
    }
}

/// Encodes ``Parameters`` as a JSON body with `Content-Type: application/json` (unless one is set).
/// Integers stay exact (64-bit), `NSNull` is `null`; dates and data follow the `JSONEncoder`'s
/// strategies (ISO 8601 and Base64 by default).
///
/// ```swift
/// let body: Parameters = ["name": "bob", "age": 42, "tags": ["a"], "manager": NSNull()]
/// api.request("users", method: .post, parameters: body, encoding: JSONEncoding.default)
/// // {"age":42,"manager":null,"name":"bob","tags":["a"]}
/// ```
public struct JSONEncoding: ParameterEncoding {
    /// The encoder used.
    public let encoder: JSONEncoder

    /// Creates an encoding around `encoder` (sorted keys, ISO 8601 dates by default).
    public init(encoder: JSONEncoder = JSONEncoding.makeDefaultEncoder()) {
        self.encoder = encoder
    }

    /// Creates an encoding that pretty-prints or not (keys sorted either way).
    public init(prettyPrinted: Bool) {
        let encoder = Self.makeDefaultEncoder()
        if prettyPrinted { encoder.outputFormatting.insert(.prettyPrinted) }
        self.init(encoder: encoder)
    }

    /// A `JSONEncoder` with sorted keys and ISO 8601 dates.
    public static func makeDefaultEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// Compact JSON.
    public static var `default`: JSONEncoding { JSONEncoding() }
    /// Pretty-printed JSON.
    public static var prettyPrinted: JSONEncoding { JSONEncoding(prettyPrinted: true) }

    /// Sets the JSON body.
    public func encode(_ request: URLRequest, with parameters: Parameters?) throws -> URLRequest {
        guard let parameters else { return request }
        var request = request
        let value: ParameterValue
        do {
            value = try ParameterValue.object(from: parameters)
        } catch {
            throw CourierError(error.kind, error.message, url: request.url)
        }
        do {
            request.httpBody = try encoder.encode(value)
        } catch {
            throw CourierError(.encodingFailed, "The parameters could not be encoded as JSON: \(error)", underlyingError: error, url: request.url)
        }
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return request
    }
}

extension ParameterEncoding where Self == URLEncoding {
    /// ``URLEncoding/default``: query for GET, HEAD and DELETE, form body otherwise.
    public static var url: URLEncoding { URLEncoding() }
}

extension ParameterEncoding where Self == JSONEncoding {
    /// ``JSONEncoding/default``: a compact JSON body.
    public static var json: JSONEncoding { JSONEncoding() }
}

extension Session {
    /// Makes a request with untyped `parameters` (Alamofire's `Parameters`) put in by `encoding`:
    /// `URLEncoding.default` for the query or a form body, `JSONEncoding.default` for a JSON body.
    /// For parameters whose type you know, the `Encodable` form (`parameters:encoder:`) is checked
    /// at compile time instead.
    ///
    /// ```swift
    /// let parameters: Parameters = ["q": "swift", "page": 2, "filters": ["lang": "en", "stars": [1, 2]]]
    /// let results = try await api.request("search", parameters: parameters, encoding: .url).serializingJSON().value
    /// api.request("users", method: .post, parameters: ["name": "bob", "admin": false], encoding: .json)
    /// ```
    /// `encoding:` has no default, so that a dictionary literal with an `Encodable` value type
    /// keeps going to `parameters:encoder:`.
    public func request(
        _ url: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters?,
        encoding: any ParameterEncoding, headers: HTTPHeaders? = nil, timeout: TimeInterval? = nil,
        interceptor: (any RequestInterceptor)? = nil, requestModifier: RequestModifier? = nil
    ) -> DataRequest {
        // Through the `Encodable` path, so both kinds of parameters are built the same way.
        request(
            url, method: method, parameters: parameters.map(UntypedParameters.init), encoder: EncodingAdapter(encoding: encoding),
            headers: headers, timeout: timeout, interceptor: interceptor, requestModifier: requestModifier)
    }
}

/// Untyped parameters carried through the `Encodable` request path; only ``EncodingAdapter`` reads them.
private struct UntypedParameters: Encodable, Sendable {
    let parameters: Parameters

    func encode(to encoder: any Encoder) throws {
        try ParameterValue.object(from: parameters).encode(to: encoder)
    }
}

/// A ``ParameterEncoding`` as a ``ParameterEncoder`` of ``UntypedParameters``.
private struct EncodingAdapter: ParameterEncoder {
    let encoding: any ParameterEncoding

    func encode<Value: Encodable & Sendable>(_ parameters: Value?, into request: URLRequest) throws -> URLRequest {
        guard let untyped = parameters as? UntypedParameters else { return try encoding.encode(request, with: nil) }
        return try encoding.encode(request, with: untyped.parameters)
    }
}
