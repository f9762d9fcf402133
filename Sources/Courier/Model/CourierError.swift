import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one error type Courier reports: transport failures, validation, serialization and
/// file-system problems all arrive as a `CourierError` with a readable ``kind``.
public struct CourierError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong, as a comparable value (`error.kind == .timedOut`).
    ///
    /// A struct rather than an enum so that new kinds do not break exhaustive switches.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The kind's name, e.g. `"timedOut"`.
        public let name: String
        private init(_ name: String) { self.name = name }
        /// The kind's name.
        public var description: String { name }

        /// The URL could not be formed or is not an http(s) URL.
        public static let invalidURL = Kind("invalidURL")
        /// The request is not valid HTTP and was not sent: its method is not a token, or a header
        /// name is not a token, or a header value contains CR, LF or NUL.
        public static let invalidRequest = Kind("invalidRequest")
        /// Parameters or a body could not be encoded, or a body cannot be sent as given (a GET or
        /// HEAD with a body; a `URLRequest`'s `httpBodyStream` outside an upload); nothing was sent.
        public static let encodingFailed = Kind("encodingFailed")
        /// A request adapter threw.
        public static let adaptationFailed = Kind("adaptationFailed")
        /// Credentials were missing or could not be refreshed (see `AuthenticationInterceptor`).
        public static let authenticationFailed = Kind("authenticationFailed")
        /// The host name could not be resolved.
        public static let cannotFindHost = Kind("cannotFindHost")
        /// No connection could be made (refused, unreachable).
        public static let cannotConnect = Kind("cannotConnect")
        /// The idle timeout or the resource timeout expired.
        public static let timedOut = Kind("timedOut")
        /// The connection closed or reset before the response was complete (includes truncated bodies).
        public static let connectionLost = Kind("connectionLost")
        /// The TLS handshake failed for a reason none of the kinds below names (see
        /// ``CourierError/isSecureConnectionFailure`` for every TLS kind at once).
        public static let secureConnectionFailed = Kind("secureConnectionFailed")
        /// The server's certificate does not chain to a trusted certificate authority (unknown
        /// issuer, self-signed); the message names the host and the verification result.
        public static let serverCertificateUntrusted = Kind("serverCertificateUntrusted")
        /// The server's certificate has expired or is not valid yet.
        public static let serverCertificateHasBadDate = Kind("serverCertificateHasBadDate")
        /// The server's certificate does not name the host that was asked for.
        public static let serverCertificateHostnameMismatch = Kind("serverCertificateHostnameMismatch")
        /// The server's public key is not one of the host's pins (``TLSConfiguration/pinnedPublicKeys``).
        public static let pinMismatch = Kind("pinMismatch")
        /// The server refused the client certificate, or required one and none was configured.
        public static let clientCertificateRejected = Kind("clientCertificateRejected")
        /// Client and server share no TLS version (see ``TLSConfiguration/minimumVersion``).
        public static let tlsVersionUnsupported = Kind("tlsVersionUnsupported")
        /// The server would not speak the HTTP version the request requires (``HTTPVersion/http2``).
        public static let httpVersionUnavailable = Kind("httpVersionUnavailable")
        /// The session's configuration cannot be honoured: a file it names is unreadable, a value is
        /// malformed, or the transport cannot do what a field asks. Every request of the session
        /// fails with it; ``SessionConfiguration/validate()`` reports it up front.
        public static let invalidConfiguration = Kind("invalidConfiguration")
        /// The server sent something that is not valid HTTP.
        public static let invalidResponse = Kind("invalidResponse")
        /// More redirects than allowed, or a redirect loop.
        public static let tooManyRedirects = Kind("tooManyRedirects")
        /// The request was cancelled, explicitly or by cancelling the awaiting Swift `Task`.
        public static let cancelled = Kind("cancelled")
        /// A validator rejected the response (status code, content type, JSON shape, custom).
        public static let validationFailed = Kind("validationFailed")
        /// A response serializer could not produce its value.
        public static let serializationFailed = Kind("serializationFailed")
        /// The body was empty where a value was required.
        public static let emptyResponse = Kind("emptyResponse")
        /// A file could not be read, written, moved or created.
        public static let fileSystem = Kind("fileSystem")
        /// The request body's `InputStream` failed while it was read, or was to be sent a second
        /// time (a retry, a 307/308 redirect), which a stream cannot be.
        public static let bodyStreamFailed = Kind("bodyStreamFailed")
        /// A resumable download could not be resumed or failed its integrity check.
        public static let resumeFailed = Kind("resumeFailed")
        /// The response was larger than a configured limit allows (`maximumResponseSize`,
        /// `maximumDownloadSize`, or the limit on a response head); the message names the limit
        /// and how many bytes arrived.
        public static let responseTooLarge = Kind("responseTooLarge")
        /// The former name of ``responseTooLarge``.
        @available(*, deprecated, renamed: "responseTooLarge")
        public static var bodyTooLarge: Kind { .responseTooLarge }
        /// The session was invalidated before the request could run.
        public static let sessionInvalidated = Kind("sessionInvalidated")
        /// Any other transport failure.
        public static let transportFailed = Kind("transportFailed")
        /// The server did not accept a WebSocket opening handshake: it answered with another status
        /// than 101 (``CourierError/responseCode``; a redirect too, which a handshake does not
        /// follow), or its 101 answer was wrong (`Sec-WebSocket-Accept`, a subprotocol or an
        /// extension that was not offered). ``CourierError/webSocketHandshakeResponse`` has the answer.
        public static let webSocketHandshakeFailed = Kind("webSocketHandshakeFailed")
        /// The server closed the WebSocket with a code other than 1000 (normal), 1001 (going away)
        /// or none; ``CourierError/webSocketCloseStatus`` has its code and reason.
        public static let webSocketClosed = Kind("webSocketClosed")
        /// The server broke RFC 6455 (a masked or malformed frame, invalid UTF-8 in a text message,
        /// a message over `maximumMessageSize`); Courier closed the connection with the matching
        /// code (1002, 1007 or 1009), named in the message and in ``CourierError/webSocketCloseStatus``.
        public static let webSocketProtocolViolation = Kind("webSocketProtocolViolation")
        /// A server returned an application-level error inside a successful HTTP response
        /// (for example a `{code, message}` envelope).
        public static let serverError = Kind("serverError")
    }

    /// The fields, boxed: an error rides in completion events, records and every response's
    /// `Result`, which are copied many times per request, and one reference copies cheaper than 72 bytes.
    private final class Storage: Sendable {
        let kind: Kind
        let message: String
        let responseCode: Int?
        let underlyingError: (any Error)?
        let url: URL?
        let validationFailure: ValidationFailure?

        init(
            kind: Kind, message: String, responseCode: Int?, underlyingError: (any Error)?, url: URL?,
            validationFailure: ValidationFailure?
        ) {
            self.kind = kind
            self.message = message
            self.responseCode = responseCode
            self.underlyingError = underlyingError
            self.url = url
            self.validationFailure = validationFailure
        }
    }

    private var storage: Storage

    /// What went wrong.
    public var kind: Kind { storage.kind }
    /// A sentence describing the failure, with the values that explain it.
    public var message: String { storage.message }
    /// The HTTP status code, when a response was received.
    public var responseCode: Int? { storage.responseCode }
    /// The error that caused this one, such as a `URLError`, a POSIX error or a decoding error.
    public var underlyingError: (any Error)? { storage.underlyingError }
    /// The URL of the request that failed, when known.
    public var url: URL? { storage.url }
    /// Why a built-in validator rejected the response, as data (``Kind-swift.struct/validationFailed`` only):
    /// the unacceptable status code, or the acceptable and actual content types.
    ///
    /// ```swift
    /// if case .unacceptableStatusCode(let code)? = error.validationFailure, code == 404 { showNotFound() }
    /// ```
    public var validationFailure: ValidationFailure? { storage.validationFailure }

    /// Creates an error.
    public init(_ kind: Kind, _ message: String, responseCode: Int? = nil, underlyingError: (any Error)? = nil, url: URL? = nil) {
        storage = Storage(
            kind: kind, message: message, responseCode: responseCode, underlyingError: underlyingError, url: url,
            validationFailure: nil)
    }

    /// Creates a ``Kind-swift.struct/validationFailed`` error that carries `failure` as data, for
    /// validators of your own that reject a response the way the built-in ones do.
    public init(
        validationFailure failure: ValidationFailure, _ message: String, responseCode: Int? = nil,
        underlyingError: (any Error)? = nil, url: URL? = nil
    ) {
        storage = Storage(
            kind: .validationFailed, message: message, responseCode: responseCode, underlyingError: underlyingError,
            url: url, validationFailure: failure)
    }

    /// Whether the request was cancelled.
    public var isCancelled: Bool { kind == .cancelled }

    /// Whether this error came from the network rather than from validation or serialization.
    public var isTransportError: Bool {
        isSecureConnectionFailure
            || [
                .cannotFindHost, .cannotConnect, .timedOut, .connectionLost,
                .invalidResponse, .transportFailed, .httpVersionUnavailable,
            ].contains(kind)
    }

    /// Whether TLS failed: ``Kind-swift.struct/secureConnectionFailed`` or one of the precise TLS
    /// kinds (untrusted, bad date, host name mismatch, pin mismatch, client certificate rejected,
    /// TLS version unsupported).
    public var isSecureConnectionFailure: Bool {
        [
            .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateHostnameMismatch, .pinMismatch, .clientCertificateRejected, .tlsVersionUnsupported,
        ].contains(kind)
    }

    /// `kind: message`, with the status code, URL and underlying error when present.
    public var description: String {
        var text = "\(kind): \(message)"
        if let url, !message.contains(url.absoluteString) { text += " (\(url.absoluteString))" }
        if let responseCode, !message.contains(String(responseCode)) { text += " [status \(responseCode)]" }
        if let underlyingError { text += " — underlying: \(underlyingError)" }
        return text
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// Returns a copy that names `url` instead of the URL it had (a WebSocket's `ws://` URL for an
    /// error of the `http://` connection under it).
    func replacingURL(with url: URL) -> CourierError {
        var copy = self
        copy.storage = Storage(
            kind: kind, message: message, responseCode: responseCode, underlyingError: underlyingError, url: url,
            validationFailure: validationFailure)
        return copy
    }

    /// Returns a copy with context filled in where it is missing.
    func with(url: URL?, responseCode: Int? = nil) -> CourierError {
        if self.url != nil, self.responseCode != nil || responseCode == nil { return self }
        var copy = self
        copy.storage = Storage(
            kind: kind, message: message, responseCode: self.responseCode ?? responseCode,
            underlyingError: underlyingError, url: self.url ?? url, validationFailure: validationFailure)
        return copy
    }
}

extension CourierError: LocalizedError {
    /// Same as ``description``, so `localizedDescription` is readable too.
    public var errorDescription: String? { description }
}

extension CourierError {
    /// Wraps any error as a `CourierError`, mapping `URLError`, `CocoaError` and cancellation.
    public init(wrapping error: any Error, url: URL? = nil) {
        if let courier = error as? CourierError {
            self = courier.with(url: url)
        } else if error is CancellationError {
            self = CourierError(.cancelled, "The request was cancelled.", underlyingError: error, url: url)
        } else if let urlError = error as? URLError {
            self = CourierError(urlError: urlError, url: url)
        } else if let cocoa = error as? CocoaError, cocoa.isFileError {
            self = CourierError(.fileSystem, cocoa.localizedDescription, underlyingError: error, url: url)
        } else {
            self = CourierError(.transportFailed, "\(error)", underlyingError: error, url: url)
        }
    }

    /// Maps a `URLError` to Courier's kinds.
    ///
    /// On Linux, FoundationNetworking reports a body cut short ("transfer closed with N bytes remaining")
    /// as the unknown code -1, so that code counts as a lost connection.
    init(urlError: URLError, url: URL?) {
        let kind: Kind
        switch urlError.code {
        case .cancelled, .userCancelledAuthentication: kind = .cancelled
        case .timedOut: kind = .timedOut
        case .cannotConnectToHost, .notConnectedToInternet: kind = .cannotConnect
        case .networkConnectionLost, .unknown: kind = .connectionLost
        case .cannotFindHost, .dnsLookupFailed: kind = .cannotFindHost
        case .badURL, .unsupportedURL: kind = .invalidURL
        case .badServerResponse, .cannotParseResponse, .zeroByteResource, .cannotDecodeRawData, .cannotDecodeContentData:
            kind = .invalidResponse
        case .httpTooManyRedirects, .redirectToNonExistentLocation: kind = .tooManyRedirects
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected,
            .clientCertificateRequired:
            kind = .secureConnectionFailed
        case .cannotCreateFile, .cannotOpenFile, .cannotWriteToFile, .cannotRemoveFile, .cannotMoveFile, .fileDoesNotExist,
            .noPermissionsToReadFile, .fileIsDirectory:
            kind = .fileSystem
        case .dataLengthExceedsMaximum: kind = .responseTooLarge
        default: kind = .transportFailed
        }
        let message = urlError.userInfo[NSLocalizedDescriptionKey] as? String ?? urlError.localizedDescription
        // FoundationNetworking runs on libcurl, which calls a reply without a status line HTTP/0.9
        // and refuses it as an unsupported URL: the URL was fine, the server's answer was not HTTP.
        if urlError.code == .unsupportedURL, message.contains("HTTP/0.9") {
            self.init(
                .invalidResponse, "The server's reply is not HTTP (no status line; \(message)).",
                underlyingError: urlError, url: url ?? urlError.failingURL)
            return
        }
        if Self.isTransportHeadLimit(message) {
            self.init(.responseTooLarge, Self.transportHeadLimitMessage(message), underlyingError: urlError, url: url ?? urlError.failingURL)
            return
        }
        if Self.isUndecodableBody(message) {
            self.init(
                .invalidResponse, "The response body cannot be decoded: \(message).", underlyingError: urlError,
                url: url ?? urlError.failingURL)
            return
        }
        if Self.isMalformedFraming(message) {
            self.init(
                .invalidResponse, "The response's framing is malformed: \(message).", underlyingError: urlError,
                url: url ?? urlError.failingURL)
            return
        }
        self.init(
            Self.tlsKind(of: urlError.code, message: message) ?? kind, message, underlyingError: urlError,
            url: url ?? urlError.failingURL)
    }
}

extension CourierError {
    /// The precise TLS kind of a URLSession failure: from its code, and on Linux (where
    /// FoundationNetworking reports most TLS failures as a lost connection) from libcurl's text.
    fileprivate static func tlsKind(of code: URLError.Code, message: String) -> Kind? {
        switch code {
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot: return .serverCertificateUntrusted
        case .serverCertificateHasBadDate, .serverCertificateNotYetValid: return .serverCertificateHasBadDate
        case .clientCertificateRejected, .clientCertificateRequired: return .clientCertificateRejected
        default:
            let text = message.lowercased()
            guard text.contains("ssl") || text.contains("tls") || text.contains("certificate") || text.contains("alert") else { return nil }
            // libcurl's codes are not in the URLError; the text alone tells the TLS failures apart.
            return TLSFailure(code: -1, detail: message)?.kind
        }
    }
}

extension CocoaError {
    fileprivate var isFileError: Bool {
        (CocoaError.Code.fileNoSuchFile.rawValue...CocoaError.Code.fileWriteVolumeReadOnly.rawValue).contains(code.rawValue)
            || code == .fileReadNoSuchFile || code == .fileReadNoPermission || code == .fileWriteNoPermission
    }
}
