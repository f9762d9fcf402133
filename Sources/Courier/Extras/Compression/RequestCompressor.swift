import CCodecs
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Compresses request bodies (Alamofire's `DeflateRequestCompressor`): an adapter that replaces a
/// request's `httpBody` (parameters, JSON, a body set by a request modifier) with its `deflate`
/// (zlib, RFC 1950) or `gzip` encoding and sets `Content-Encoding`. Bodies smaller than
/// ``minimumSize`` go out as they are. Only send compressed bodies to servers that accept them.
///
/// ```swift
/// let api = Session(baseURL: apiURL, interceptor: RequestCompressor(encoding: .gzip, minimumSize: 1024))
/// api.request("events", method: .post, parameters: bigBatch, encoder: .json)      // gzip body
/// api.request("log", method: .post, parameters: entries, encoder: .json, interceptor: .deflateCompressor)
/// ```
/// Upload bodies (`upload(_:to:)`, files, multipart, streams) are sent as given. The compressor
/// uses the system's zlib, loaded at run time; where it is missing, a body that would be
/// compressed fails with ``CourierError/Kind-swift.struct/encodingFailed``.
public struct RequestCompressor: RequestInterceptor {
    /// The content coding.
    public enum Encoding: String, Sendable, Hashable {
        /// `Content-Encoding: deflate`: a zlib stream (RFC 1950), as HTTP defines the coding.
        case deflate
        /// `Content-Encoding: gzip` (RFC 1952).
        case gzip
    }

    /// What to do with a request that already has a `Content-Encoding`.
    public enum DuplicateHeaderBehavior: Sendable, Hashable {
        /// Fail the request with ``CourierError/Kind-swift.struct/encodingFailed``: its body is
        /// already encoded, and encoding it again is rarely what was meant.
        case error
        /// Send it as it is, uncompressed by this adapter.
        case skip
        /// Compress the body and replace the header.
        case replace
    }

    /// The coding used.
    public let encoding: Encoding
    /// Bodies smaller than this many bytes are not compressed.
    public let minimumSize: Int
    /// What happens to a request that already has `Content-Encoding`.
    public let duplicateHeaderBehavior: DuplicateHeaderBehavior
    private let shouldCompress: @Sendable (Data) -> Bool

    /// Creates a compressor.
    ///
    /// - Parameters:
    ///   - encoding: `deflate` (the default, as Alamofire) or `gzip`.
    ///   - minimumSize: The smallest body compressed, in bytes (0: every non-empty body).
    ///   - duplicateHeaderBehavior: For a request that already has `Content-Encoding` (`.error` by default).
    ///   - shouldCompress: A last say per body, after the size check.
    public init(
        encoding: Encoding = .deflate, minimumSize: Int = 0, duplicateHeaderBehavior: DuplicateHeaderBehavior = .error,
        shouldCompress: @escaping @Sendable (Data) -> Bool = { _ in true }
    ) {
        self.encoding = encoding
        self.minimumSize = max(0, minimumSize)
        self.duplicateHeaderBehavior = duplicateHeaderBehavior
        self.shouldCompress = shouldCompress
    }

    /// Compresses the body when it is large enough.
    public func adapt(_ request: URLRequest, for session: Session) async throws -> URLRequest {
        guard let body = request.httpBody, !body.isEmpty, body.count >= minimumSize else { return request }
        if let existing = request.value(forHTTPHeaderField: "Content-Encoding") {
            switch duplicateHeaderBehavior {
            case .error:
                throw CourierError(
                    .encodingFailed,
                    "The request already has Content-Encoding: \(existing); it is not compressed "
                        + "again (use duplicateHeaderBehavior .skip or .replace to choose otherwise).", url: request.url)
            case .skip:
                return request
            case .replace:
                break
            }
        }
        guard shouldCompress(body) else { return request }
        var compressed = request
        compressed.httpBody = try Self.compress(body, as: encoding, url: request.url)
        compressed.setValue(encoding.rawValue, forHTTPHeaderField: "Content-Encoding")
        return compressed
    }

    /// `data` in `encoding`; throws `.encodingFailed` when zlib is missing or fails.
    static func compress(_ data: Data, as encoding: Encoding, url: URL? = nil) throws(CourierError) -> Data {
        guard ccodecs_compressor_available() != 0 else {
            throw CourierError(.encodingFailed, "The request body cannot be compressed: zlib (libz.so.1) is not available.", url: url)
        }
        var output = Data(count: ccodecs_compress_bound(data.count))
        let capacity = output.count
        let produced = data.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { buffer in
                ccodecs_compress(encoding == .gzip ? 1 : 0, input.baseAddress, input.count, buffer.baseAddress, capacity)
            }
        }
        guard produced >= 0 else {
            throw CourierError(.encodingFailed, "zlib could not \(encoding.rawValue)-compress the request body (\(data.count) bytes).", url: url)
        }
        output.count = produced
        return output
    }
}

extension RequestInterceptor where Self == RequestCompressor {
    /// A ``RequestCompressor`` with `deflate` and its defaults (Alamofire's `.deflateCompressor`).
    public static var deflateCompressor: RequestCompressor { RequestCompressor() }

    /// A ``RequestCompressor`` with these options.
    ///
    /// ```swift
    /// api.request("log", method: .post, parameters: entries, encoder: .json,
    ///             interceptor: .requestCompressor(encoding: .gzip, minimumSize: 1024))
    /// ```
    public static func requestCompressor(
        encoding: RequestCompressor.Encoding = .deflate, minimumSize: Int = 0,
        duplicateHeaderBehavior: RequestCompressor.DuplicateHeaderBehavior = .error
    )
        -> RequestCompressor
    {
        RequestCompressor(encoding: encoding, minimumSize: minimumSize, duplicateHeaderBehavior: duplicateHeaderBehavior)
    }
}
