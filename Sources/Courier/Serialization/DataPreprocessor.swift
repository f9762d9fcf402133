import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Rewrites a response body before a serializer reads it (Alamofire's `DataPreprocessor`): strip a
/// JSON security prefix, unwrap a JSONP callback, decrypt. It runs on non-empty bodies only; what
/// it throws fails the serialization with ``CourierError/Kind-swift.struct/serializationFailed``.
///
/// ```swift
/// let config = try await api.request("config")
///     .serializing(using: .decodable(of: Config.self, dataPreprocessor: .jsonSecurityPrefix)).value
/// ```
public protocol DataPreprocessor: Sendable {
    /// Returns the bytes the serializer reads instead of `data`.
    func preprocess(_ data: Data) throws -> Data
}

/// Leaves the body as it is; the default of every serializer.
public struct PassthroughPreprocessor: DataPreprocessor {
    /// Creates the preprocessor.
    public init() {}

    /// Returns `data`.
    public func preprocess(_ data: Data) throws -> Data { data }
}

/// Removes the prefix some APIs put before JSON so that a `<script>` tag cannot run it
/// (`)]}',` and a newline, as Angular and Google send; Alamofire's `GoogleXSSIPreprocessor`).
/// A body without the prefix is left as it is.
///
/// ```swift
/// // body: )]}',\n{"nick":"bob"}
/// let user = try await api.request("me").serializing(using: .decodable(of: User.self, dataPreprocessor: .jsonSecurityPrefix)).value
/// ```
public struct JSONSecurityPrefixPreprocessor: DataPreprocessor {
    /// The prefix removed; `)]}',\n` by default.
    public let prefix: Data

    /// Creates the preprocessor for `prefix`.
    public init(prefix: String = ")]}',\n") {
        self.prefix = Data(prefix.utf8)
    }

    /// `data` without the prefix.
    public func preprocess(_ data: Data) throws -> Data {
        data.starts(with: prefix) ? data.dropFirst(prefix.count) : data
    }
}

extension DataPreprocessor where Self == PassthroughPreprocessor {
    /// Leaves the body as it is.
    public static var passthrough: PassthroughPreprocessor { PassthroughPreprocessor() }
}

extension DataPreprocessor where Self == JSONSecurityPrefixPreprocessor {
    /// Removes a leading `)]}',` and newline.
    public static var jsonSecurityPrefix: JSONSecurityPrefixPreprocessor { JSONSecurityPrefixPreprocessor() }
}

extension ResponseSerializer {
    /// Runs `preprocessor` on a non-empty body; what it throws becomes `.serializationFailed`.
    func preprocessed(_ data: Data, with preprocessor: (any DataPreprocessor)?, request: URLRequest?, statusCode: Int?) throws -> Data {
        guard let preprocessor else { return data }
        do {
            return try preprocessor.preprocess(data)
        } catch let error as CourierError {
            throw error
        } catch {
            throw CourierError(
                .serializationFailed, "Preprocessing the body (\(data.count) bytes) failed: \(error)",
                responseCode: statusCode, underlyingError: error, url: request?.url)
        }
    }
}
