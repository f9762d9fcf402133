import CourierSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns a finished exchange into a typed value. Implement it to add your own serializer and use
/// it with `response(using:)` or `serializing(using:)`.
///
/// Empty bodies follow one rule, expressed as data: a body may be empty when the request method is
/// in ``emptyRequestMethods`` (`HEAD` by default) or the status is in ``emptyResponseCodes``
/// (201, 204 and 205 by default); otherwise an empty body is a `.emptyResponse` error. Where an
/// empty body is allowed, the value is the type's empty value (`Data()`, `""`, `JSON.null`,
/// ``Empty``, `nil` for an `Optional`); a type without one still fails with `.emptyResponse`.
///
/// Alamofire's defaults are 204 and 205: Courier adds 201 Created, which APIs often send without a body.
public protocol ResponseSerializer<SerializedObject>: Sendable {
    /// The value this serializer produces.
    associatedtype SerializedObject: Sendable

    /// Status codes whose empty body is a valid, empty value.
    var emptyResponseCodes: Set<Int> { get }
    /// Request methods whose empty body is a valid, empty value.
    var emptyRequestMethods: Set<HTTPMethod> { get }
    /// What rewrites a non-empty body before it is serialized (``PassthroughPreprocessor`` by default).
    var dataPreprocessor: any DataPreprocessor { get }

    /// Produces the value from an in-memory body. `error` is the transfer's or validation's
    /// error, if any; the built-in serializers rethrow it.
    func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: CourierError?) throws -> SerializedObject

    /// Produces the value from a downloaded file. The default reads the file and calls
    /// ``serialize(request:response:data:error:)``.
    func serializeDownload(request: URLRequest?, response: HTTPURLResponse?, fileURL: URL?, error: CourierError?) throws -> SerializedObject
}

/// The default empty-body rules, built once: a `Set` literal allocates and hashes every time.
private let sharedDefaultEmptyResponseCodes: Set<Int> = [201, 204, 205]
private let sharedDefaultEmptyRequestMethods: Set<HTTPMethod> = [.head]

extension ResponseSerializer {
    /// `[201, 204, 205]`.
    public static var defaultEmptyResponseCodes: Set<Int> { sharedDefaultEmptyResponseCodes }
    /// `[.head]`.
    public static var defaultEmptyRequestMethods: Set<HTTPMethod> { sharedDefaultEmptyRequestMethods }

    /// `[201, 204, 205]`.
    public var emptyResponseCodes: Set<Int> { Self.defaultEmptyResponseCodes }
    /// `[.head]`.
    public var emptyRequestMethods: Set<HTTPMethod> { Self.defaultEmptyRequestMethods }
    /// ``PassthroughPreprocessor``.
    public var dataPreprocessor: any DataPreprocessor { PassthroughPreprocessor() }

    /// Whether an empty body is acceptable for this request and response.
    public func emptyResponseAllowed(request: URLRequest?, response: HTTPURLResponse?) -> Bool {
        emptyResponseAllowed(request: request, statusCode: response?.statusCode)
    }

    func emptyResponseAllowed(request: URLRequest?, statusCode: Int?) -> Bool {
        if let method = request?.httpMethod, emptyRequestMethods.contains(HTTPMethod(rawValue: method)) { return true }
        if let statusCode, emptyResponseCodes.contains(statusCode) { return true }
        return false
    }

    /// Reads the file and serializes its bytes.
    public func serializeDownload(request: URLRequest?, response: HTTPURLResponse?, fileURL: URL?, error: CourierError?) throws -> SerializedObject {
        if let error { throw error }
        guard let fileURL else {
            throw CourierError(.fileSystem, "The download produced no file to serialize.", responseCode: response?.statusCode)
        }
        let data: Data
        do {
            data = try Data(contentsOf: fileURL, options: .mappedIfSafe)
        } catch {
            throw CourierError(
                .fileSystem, "Could not read the downloaded file at \(fileURL.path).",
                responseCode: response?.statusCode, underlyingError: error, url: request?.url)
        }
        return try serialize(request: request, response: response, data: data, error: nil)
    }

    /// Throws `.emptyResponse` unless the rules above allow an empty body; returns whether the body is empty.
    func checkEmpty(request: URLRequest?, statusCode: Int?, data: Data?) throws -> Bool {
        guard let data, !data.isEmpty else {
            guard emptyResponseAllowed(request: request, statusCode: statusCode) else {
                let status = statusCode.map { " (status \($0))" } ?? ""
                throw CourierError(
                    .emptyResponse, "The response body was empty\(status), but a \(SerializedObject.self) was expected.",
                    responseCode: statusCode, url: request?.url)
            }
            return true
        }
        return false
    }
}

extension ResponseSerializer {
    /// Runs the serializer and wraps what it throws as a `CourierError`.
    func result(for completion: RequestCompletion) -> Result<SerializedObject, CourierError> {
        do {
            switch completion.body {
            case .memory(let data):
                if let headReading = self as? any HeadReading,
                    let value = try headReading.serializeReadingHead(
                        request: completion.request, head: completion.response,
                        data: data, error: completion.error) as? SerializedObject
                {
                    return .success(value)
                }
                return .success(
                    try serialize(
                        request: completion.request, response: completion.response?.httpResponse,
                        data: data, error: completion.error))
            case .file(let fileURL):
                return .success(
                    try serializeDownload(
                        request: completion.request, response: completion.response?.httpResponse,
                        fileURL: fileURL, error: completion.error))
            }
        } catch let error as CourierError {
            return .failure(error)
        } catch {
            return .failure(
                CourierError(
                    .serializationFailed, "Serializing \(SerializedObject.self) failed: \(error)",
                    responseCode: completion.response?.statusCode, underlyingError: error,
                    url: completion.request?.url))
        }
    }
}

/// Courier's own serializers read the status and charset from the parsed head, so they never make
/// Foundation build an `HTTPURLResponse` (see ``LazyHTTPResponse``).
protocol HeadReadingSerializer<SerializedObject>: ResponseSerializer, HeadReading {
    func serialize(request: URLRequest?, head: LazyHTTPResponse?, data: Data?, error: CourierError?) throws -> SerializedObject
}

/// ``HeadReadingSerializer`` without its associated type. Casting to `any HeadReadingSerializer<T>`
/// builds that existential's metadata from its mangled name on every call (4% of a small request's
/// CPU); finding a plain protocol conformance is a cached lookup.
protocol HeadReading {
    /// ``HeadReadingSerializer/serialize(request:head:data:error:)``, its result boxed.
    func serializeReadingHead(request: URLRequest?, head: LazyHTTPResponse?, data: Data?, error: CourierError?) throws -> Any
}

extension HeadReadingSerializer {
    func serializeReadingHead(request: URLRequest?, head: LazyHTTPResponse?, data: Data?, error: CourierError?) throws -> Any {
        try serialize(request: request, head: head, data: data, error: error)
    }
}

/// Returns the body as `Data`.
public struct DataResponseSerializer: ResponseSerializer, HeadReadingSerializer {
    /// Status codes whose empty body is valid.
    public let emptyResponseCodes: Set<Int>
    /// Methods whose empty body is valid.
    public let emptyRequestMethods: Set<HTTPMethod>
    private let preprocessor: (any DataPreprocessor)?
    /// What rewrites a non-empty body first.
    public var dataPreprocessor: any DataPreprocessor { preprocessor ?? PassthroughPreprocessor() }

    /// Creates the serializer with the given empty-body rules.
    public init(
        emptyResponseCodes: Set<Int> = Self.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = Self.defaultEmptyRequestMethods
    ) {
        self.init(dataPreprocessor: nil, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods)
    }

    /// Creates the serializer with a preprocessor and the given empty-body rules.
    public init(
        dataPreprocessor: (any DataPreprocessor)?, emptyResponseCodes: Set<Int> = Self.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = Self.defaultEmptyRequestMethods
    ) {
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.preprocessor = dataPreprocessor is PassthroughPreprocessor ? nil : dataPreprocessor
    }

    /// Serializes from a response someone already has.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: CourierError?) throws -> Data {
        try serialize(request: request, head: LazyHTTPResponse(response), data: data, error: error)
    }

    /// The body, or empty `Data` where an empty body is allowed.
    func serialize(request: URLRequest?, head: LazyHTTPResponse?, data: Data?, error: CourierError?) throws -> Data {
        if let error { throw error }
        if try checkEmpty(request: request, statusCode: head?.statusCode, data: data) { return Data() }
        return try preprocessed(data ?? Data(), with: preprocessor, request: request, statusCode: head?.statusCode)
    }
}

/// Returns the body decoded as text.
///
/// The encoding is the one given, else the response's `charset`, else ISO-8859-1 (RFC 9110's
/// historical default for text), looked up in Courier's own IANA table so Linux and Apple agree.
public struct StringResponseSerializer: ResponseSerializer, HeadReadingSerializer {
    /// The encoding to use whatever the response says, or `nil` to follow the response.
    public let encoding: String.Encoding?
    /// Status codes whose empty body is valid.
    public let emptyResponseCodes: Set<Int>
    /// Methods whose empty body is valid.
    public let emptyRequestMethods: Set<HTTPMethod>
    private let preprocessor: (any DataPreprocessor)?
    /// What rewrites a non-empty body first.
    public var dataPreprocessor: any DataPreprocessor { preprocessor ?? PassthroughPreprocessor() }

    /// Creates the serializer.
    public init(
        encoding: String.Encoding? = nil, emptyResponseCodes: Set<Int> = Self.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = Self.defaultEmptyRequestMethods
    ) {
        self.init(dataPreprocessor: nil, encoding: encoding, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods)
    }

    /// Creates the serializer with a preprocessor.
    public init(
        dataPreprocessor: (any DataPreprocessor)?, encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = Self.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = Self.defaultEmptyRequestMethods
    ) {
        self.encoding = encoding
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.preprocessor = dataPreprocessor is PassthroughPreprocessor ? nil : dataPreprocessor
    }

    /// Serializes from a response someone already has.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: CourierError?) throws -> String {
        try serialize(request: request, head: LazyHTTPResponse(response), data: data, error: error)
    }

    /// The decoded text, or `""` where an empty body is allowed.
    func serialize(request: URLRequest?, head: LazyHTTPResponse?, data: Data?, error: CourierError?) throws -> String {
        if let error { throw error }
        if try checkEmpty(request: request, statusCode: head?.statusCode, data: data) { return "" }
        let data = try preprocessed(data ?? Data(), with: preprocessor, request: request, statusCode: head?.statusCode)
        let chosen =
            encoding
            ?? head?.header("Content-Type").flatMap(MIMEType.charset(inContentType:)).flatMap(String.Encoding.init(ianaCharsetName:))
            ?? .isoLatin1
        guard let string = String(data: data, encoding: chosen) else {
            throw CourierError(
                .serializationFailed, "The body (\(data.count) bytes) is not valid \(chosen.ianaCharsetName ?? "\(chosen)") text.",
                responseCode: head?.statusCode, url: request?.url)
        }
        return string
    }
}

/// Returns the body parsed as ``JSON``.
public struct JSONResponseSerializer: ResponseSerializer, HeadReadingSerializer {
    /// Status codes whose empty body is valid (it gives `.null`).
    public let emptyResponseCodes: Set<Int>
    /// Methods whose empty body is valid (it gives `.null`).
    public let emptyRequestMethods: Set<HTTPMethod>
    private let preprocessor: (any DataPreprocessor)?
    /// What rewrites a non-empty body first.
    public var dataPreprocessor: any DataPreprocessor { preprocessor ?? PassthroughPreprocessor() }

    /// Creates the serializer.
    public init(
        emptyResponseCodes: Set<Int> = Self.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = Self.defaultEmptyRequestMethods
    ) {
        self.init(dataPreprocessor: nil, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods)
    }

    /// Creates the serializer with a preprocessor.
    public init(
        dataPreprocessor: (any DataPreprocessor)?, emptyResponseCodes: Set<Int> = Self.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = Self.defaultEmptyRequestMethods
    ) {
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.preprocessor = dataPreprocessor is PassthroughPreprocessor ? nil : dataPreprocessor
    }

    /// Serializes from a response someone already has.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: CourierError?) throws -> JSON {
        try serialize(request: request, head: LazyHTTPResponse(response), data: data, error: error)
    }

    /// The parsed JSON, or `.null` where an empty body is allowed.
    func serialize(request: URLRequest?, head: LazyHTTPResponse?, data: Data?, error: CourierError?) throws -> JSON {
        if let error { throw error }
        if try checkEmpty(request: request, statusCode: head?.statusCode, data: data) { return .null }
        let body = try preprocessed(data ?? Data(), with: preprocessor, request: request, statusCode: head?.statusCode)
        do {
            return try JSON(parsing: body)
        } catch {
            throw CourierError(
                .serializationFailed, "The body is not valid JSON: \(error.message)",
                responseCode: head?.statusCode, underlyingError: error, url: request?.url)
        }
    }
}
