import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Anything that decodes a `Decodable` from bytes: `JSONDecoder`, `PropertyListDecoder`, or your own.
public protocol DataDecoder: Sendable {
    /// Decodes a value of `type` from `data`.
    func decode<D: Decodable>(_ type: D.Type, from data: Data) throws -> D
}

extension JSONDecoder: DataDecoder {}
extension PropertyListDecoder: DataDecoder {}

/// A type with a value that stands for "no body", for responses that may be empty (201, 204, HEAD).
/// ``Empty`` and every `Optional` have one (an `Optional`'s is `nil`).
public protocol EmptyResponse {
    /// The value used when the body is empty.
    static func emptyValue() -> Self
}

/// The value of an empty body: decode into `Empty` when an endpoint returns nothing.
public struct Empty: Codable, Sendable, Hashable, EmptyResponse {
    /// The one `Empty` value.
    public static let value = Empty()
    /// Returns ``value``.
    public static func emptyValue() -> Empty { value }
}

extension Optional: EmptyResponse {
    /// `nil`: an allowed empty body decodes as no value.
    public static func emptyValue() -> Wrapped? { nil }
}

/// Decodes the body into a `Decodable` type.
public struct DecodableResponseSerializer<T: Decodable & Sendable>: ResponseSerializer, HeadReadingSerializer {
    /// The decoder used.
    public let decoder: any DataDecoder
    /// Status codes whose empty body is valid.
    public let emptyResponseCodes: Set<Int>
    /// Methods whose empty body is valid.
    public let emptyRequestMethods: Set<HTTPMethod>
    private let preprocessor: (any DataPreprocessor)?
    /// What rewrites a non-empty body before it is decoded.
    public var dataPreprocessor: any DataPreprocessor { preprocessor ?? PassthroughPreprocessor() }

    /// Creates the serializer; `JSONDecoder()` by default.
    public init(
        decoder: any DataDecoder = JSONDecoder(), emptyResponseCodes: Set<Int> = Self.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = Self.defaultEmptyRequestMethods
    ) {
        self.init(dataPreprocessor: nil, decoder: decoder, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods)
    }

    /// Creates the serializer with a preprocessor.
    public init(
        dataPreprocessor: (any DataPreprocessor)?, decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = Self.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = Self.defaultEmptyRequestMethods
    ) {
        self.decoder = decoder
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.preprocessor = dataPreprocessor is PassthroughPreprocessor ? nil : dataPreprocessor
    }

    /// The decoded value. An allowed empty body gives `T.emptyValue()` when `T` is an
    /// ``EmptyResponse`` and fails with `.emptyResponse` otherwise.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: CourierError?) throws -> T {
        try serialize(request: request, head: LazyHTTPResponse(response), data: data, error: error)
    }

    func serialize(request: URLRequest?, head: LazyHTTPResponse?, data: Data?, error: CourierError?) throws -> T {
        let response = head
        if let error { throw error }
        if try checkEmpty(request: request, statusCode: head?.statusCode, data: data) {
            guard let empty = T.self as? any EmptyResponse.Type, let value = empty.emptyValue() as? T else {
                throw CourierError(
                    .emptyResponse, "The body was empty and \(T.self) has no empty value (conform it to EmptyResponse or decode Empty).",
                    responseCode: response?.statusCode, url: request?.url)
            }
            return value
        }
        let body = try preprocessed(data ?? Data(), with: preprocessor, request: request, statusCode: response?.statusCode)
        do {
            return try decoder.decode(T.self, from: body)
        } catch let error as DecodingError {
            throw CourierError(
                .serializationFailed, "Decoding \(T.self) failed: \(error.readableDescription)",
                responseCode: response?.statusCode, underlyingError: error, url: request?.url)
        } catch {
            throw CourierError(
                .serializationFailed, "Decoding \(T.self) failed: \(error)",
                responseCode: response?.statusCode, underlyingError: error, url: request?.url)
        }
    }
}

extension DecodingError {
    /// `what went wrong at $.path`, without Foundation's debug noise.
    var readableDescription: String {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.reduce("$") { path, key in
                key.intValue.map { "\(path)[\($0)]" } ?? "\(path).\(key.stringValue)"
            }
        }
        switch self {
        case .keyNotFound(let key, let context):
            return "missing key \"\(key.stringValue)\" at \(path(context.codingPath))"
        case .valueNotFound(let type, let context):
            return "expected \(type) but found null at \(path(context.codingPath))"
        case .typeMismatch(let type, let context):
            return "expected \(type) at \(path(context.codingPath)): \(context.debugDescription)"
        case .dataCorrupted(let context):
            return "invalid data at \(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(self)"
        }
    }
}
