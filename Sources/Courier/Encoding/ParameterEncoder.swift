import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Puts `Encodable` parameters into a request: `.urlEncodedForm` (query or form body) or `.json`.
public protocol ParameterEncoder: Sendable {
    /// Returns `request` with `parameters` encoded into it; throws `.encodingFailed`.
    func encode<Parameters: Encodable & Sendable>(_ parameters: Parameters?, into request: URLRequest) throws -> URLRequest
}

/// Encodes parameters as a JSON body with `Content-Type: application/json` (unless one is set).
public struct JSONParameterEncoder: ParameterEncoder {
    /// The encoder used; the default sorts keys so equal values give equal bodies.
    public let encoder: JSONEncoder

    /// Creates an encoder around `encoder`.
    public init(encoder: JSONEncoder = JSONParameterEncoder.makeDefaultEncoder()) {
        self.encoder = encoder
    }

    /// A `JSONEncoder` with sorted keys.
    public static func makeDefaultEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    /// Sets the JSON body.
    public func encode<Parameters: Encodable & Sendable>(_ parameters: Parameters?, into request: URLRequest) throws -> URLRequest {
        guard let parameters else { return request }
        var request = request
        do {
            request.httpBody = try encoder.encode(parameters)
        } catch {
            throw CourierError(.encodingFailed, "\(Parameters.self) could not be encoded as JSON: \(error)", underlyingError: error, url: request.url)
        }
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return request
    }
}

/// Encodes parameters URL-encoded: into the query for GET, HEAD and DELETE, else into a
/// `application/x-www-form-urlencoded` body (unless a `Content-Type` is already set, the body's type is kept).
public struct URLEncodedFormParameterEncoder: ParameterEncoder {
    /// Where the encoded parameters go.
    public enum Destination: Sendable {
        /// The query for GET, HEAD and DELETE, the body otherwise.
        case methodDependent
        /// Always the query (appended to any existing query).
        case queryString
        /// Always the body.
        case httpBody
    }

    /// The form encoder (keys sorted by default, nil values dropped).
    public let encoder: URLEncodedFormEncoder
    /// Where the parameters go.
    public let destination: Destination

    /// Creates an encoder.
    public init(encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(), destination: Destination = .methodDependent) {
        self.encoder = encoder
        self.destination = destination
    }

    /// Encodes into the query or the body.
    public func encode<Parameters: Encodable & Sendable>(_ parameters: Parameters?, into request: URLRequest) throws -> URLRequest {
        guard let parameters else { return request }
        return try encodeValue(parameters, into: request)
    }

    /// Encodes any `Encodable` (``URLEncoding``'s untyped parameters are not `Sendable`).
    func encodeValue<Parameters: Encodable>(_ parameters: Parameters, into request: URLRequest) throws -> URLRequest {
        var request = request
        let inQuery: Bool
        switch destination {
        case .methodDependent: inQuery = request.method.encodesParametersInURL
        case .queryString: inQuery = true
        case .httpBody: inQuery = false
        }
        if inQuery {
            let query = try encoder.encodeQuery(parameters)
            guard !query.isEmpty, let url = request.url,
                var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
            else { return request }
            let existing = components.percentEncodedQuery.map { $0.isEmpty ? "" : $0 + "&" } ?? ""
            components.percentEncodedQuery = existing + query
            request.url = components.url ?? url
        } else {
            request.httpBody = try encoder.encodeFormBody(parameters)
            if request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue("application/x-www-form-urlencoded; charset=utf-8", forHTTPHeaderField: "Content-Type")
            }
        }
        return request
    }
}

extension ParameterEncoder where Self == JSONParameterEncoder {
    /// JSON body, sorted keys.
    public static var json: JSONParameterEncoder { JSONParameterEncoder() }
    /// JSON body with your own `JSONEncoder`.
    public static func json(encoder: JSONEncoder) -> JSONParameterEncoder { JSONParameterEncoder(encoder: encoder) }
}

extension ParameterEncoder where Self == URLEncodedFormParameterEncoder {
    /// URL-encoded: query for GET/HEAD/DELETE, form body otherwise.
    public static var urlEncodedForm: URLEncodedFormParameterEncoder { URLEncodedFormParameterEncoder() }
    /// URL-encoded with your own options and destination.
    public static func urlEncodedForm(
        encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(),
        destination: URLEncodedFormParameterEncoder.Destination = .methodDependent
    ) -> URLEncodedFormParameterEncoder {
        URLEncodedFormParameterEncoder(encoder: encoder, destination: destination)
    }
}
