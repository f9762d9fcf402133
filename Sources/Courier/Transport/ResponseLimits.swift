import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The slowest a transfer may go: fewer than ``bytesPerSecond`` on average over ``window`` (bytes
/// sent and received together, while the transfer runs) fails it with `.timedOut`.
///
/// A server that drips one byte at a time never trips the idle timeout; this catches it.
/// Off unless set, on a ``SessionConfiguration`` or per request with
/// ``Request/minimumTransferRate(_:)``. On the curl transport it is libcurl's
/// `CURLOPT_LOW_SPEED_LIMIT`/`CURLOPT_LOW_SPEED_TIME` (the window is rounded up to whole seconds);
/// on URLSession Courier measures it itself. Time spent suspended does not count.
public struct MinimumTransferRate: Sendable, Hashable, CustomStringConvertible {
    /// The average rate, in bytes per second, below which the transfer fails.
    public var bytesPerSecond: Int
    /// How long the rate may stay below ``bytesPerSecond`` before the transfer fails.
    public var window: Duration

    /// A rate of `bytesPerSecond` averaged over `window` (30 s unless given).
    public init(bytesPerSecond: Int, window: Duration = .seconds(30)) {
        self.bytesPerSecond = max(0, bytesPerSecond)
        self.window = max(window, .milliseconds(1))
    }

    /// `"1024 bytes/s over 30 s"`.
    public var description: String { "\(bytesPerSecond) bytes/s over \(window.timeInterval) s" }

    /// The window in whole seconds, at least 1 (libcurl's unit).
    var wholeSeconds: Int {
        let (seconds, attoseconds) = window.components
        return max(1, Int(clamping: seconds) + (attoseconds > 0 ? 1 : 0))
    }
}

/// Which size limit applies to a body sink's bytes.
enum BodySizeLimitClass {
    /// The body is kept in memory: ``SessionConfiguration/maximumResponseSize``.
    case memory
    /// The body is written to a file: ``SessionConfiguration/maximumDownloadSize``.
    case download
    /// No size limit (a stream's consumer bounds memory by taking chunks).
    case unlimited
}

/// What one request changed of the session's limits; `nil` keeps the session's value, `.some(nil)` lifts it.
struct ResponseLimitOverrides: Sendable {
    var maximumResponseSize: Int??
    var maximumDownloadSize: Int64??
    var minimumTransferRate: MinimumTransferRate??
    var maximumDecompressionRatio: Int??
}

/// The decompression-ratio guard (``SessionConfiguration/maximumDecompressionRatio``) as the
/// transports apply it: they alone see coded bytes.
enum DecompressionRatioLimit {
    /// Decoded bytes that must have arrived before the ratio is checked, so that small bodies
    /// that compress well are never refused.
    static let minimumDecodedBytes: Int64 = 1 << 20

    /// The failure when `decoded` bytes came from `coded` received bytes at a ratio above `ratio`
    /// (and at least ``minimumDecodedBytes`` were decoded); `nil` otherwise.
    static func failure(decoded: Int64, coded: Int64, ratio: Int, statusCode: Int?, url: URL?) -> CourierError? {
        guard decoded >= minimumDecodedBytes else { return nil }
        let (allowed, overflow) = Int64(ratio).multipliedReportingOverflow(by: max(coded, 1))
        guard !overflow, decoded > allowed else { return nil }
        let seen = String(format: "%.1f", Double(decoded) / Double(max(coded, 1)))
        return CourierError(
            .responseTooLarge,
            "The response body decompressed at \(seen):1, more than maximumDecompressionRatio "
                + "(\(ratio):1) allows: \(decoded) decoded bytes from \(coded) received; the transfer was stopped.",
            responseCode: statusCode, url: url)
    }
}

/// The bound on a stream's body waiting for its consumer
/// (``SessionConfiguration/maximumStreamBacklog``), as a transport that cannot pause applies it.
enum UnacknowledgedBytesLimit {
    /// The failure when `waiting` delivered bytes have not been taken and that is more than
    /// `bound`; `nil` otherwise.
    static func failure(waiting: Int64, bound: Int64, statusCode: Int?, url: URL?) -> CourierError? {
        guard waiting > bound else { return nil }
        return CourierError(
            .responseTooLarge,
            "The stream's consumer fell behind: \(waiting) bytes had arrived that it had not taken, more than "
                + "maximumStreamBacklog (\(BodySizeLimit.format(bound))) allows. URLSession cannot hold the server back "
                + "(the curl transport pauses reading instead); the transfer was stopped.",
            responseCode: statusCode, url: url)
    }
}

/// A body size limit in force for one request, and the name it is configured under.
struct BodySizeLimit {
    let bytes: Int64
    let setting: String

    /// The error for a body of `seen` bytes, or one announced as `announced` bytes at the head.
    func failure(seen: Int64? = nil, announced: Int64? = nil, head: ResponseHead?) -> CourierError {
        let message =
            if let announced {
                "The response announces a body of \(announced) bytes (Content-Length), more than \(setting) allows "
                    + "(\(Self.format(bytes))); the body was not read."
            } else {
                "The response body exceeded \(setting) (\(Self.format(bytes))): \(seen ?? 0) bytes arrived before the transfer was stopped."
            }
        return CourierError(.responseTooLarge, message, responseCode: head?.statusCode, url: head?.url)
    }

    /// `"1048576 bytes (1 MiB)"`.
    static func format(_ bytes: Int64) -> String {
        let units: [(Int64, String)] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
        guard let (size, unit) = units.first(where: { bytes >= $0.0 }) else { return "\(bytes) bytes" }
        let value = Double(bytes) / Double(size)
        let shown = value == value.rounded() ? String(Int64(value)) : String(format: "%.1f", value)
        return "\(bytes) bytes (\(shown) \(unit))"
    }
}

extension CourierError {
    /// libcurl (under both transports on Linux) refuses a response head over 300 KiB with this
    /// sentence; the failure is a `.responseTooLarge`, not a lost connection.
    static func isTransportHeadLimit(_ message: String) -> Bool {
        message.hasPrefix("Too large response headers")
    }

    /// The message for libcurl's own head limit.
    static func transportHeadLimitMessage(_ detail: String) -> String {
        "The response head is larger than the transport accepts (libcurl allows 300 KiB in total): \(detail)."
    }

    /// libcurl keeps one header line in a buffer of at most 100 KiB and reports a longer line as
    /// "Out of memory" (`CURLE_OUT_OF_MEMORY`); callers check that the head was being read.
    static let transportHeaderLineLimitMessage =
        "A response header line is longer than the transport accepts "
        + "(libcurl allows 100 KiB per line and reports a longer one as \"Out of memory\")."

    /// Whether libcurl's `message` (under both transports on Linux) says the response's framing
    /// is broken: bad chunked framing (libcurl 7.x "… in chunked-encoding", 8.x "chunk …",
    /// "invalid chunk size …"), a chunked body whose trailer section libcurl could not pass on
    /// (``chunkedTrailerFailure``), or a `Content-Length` it cannot read. Libcurl reports these as
    /// receive errors (the trailer case as the error of its header store); they are the server's
    /// malformed reply, not a lost connection.
    static func isMalformedFraming(_ message: String) -> Bool {
        message.contains("in chunked-encoding") || message.hasPrefix("chunk ") || message.hasPrefix("invalid chunk size")
            || message.hasPrefix("Invalid Content-Length") || message.hasPrefix(chunkedTrailerFailure)
    }

    /// libcurl's sentence when what follows a chunked body's last chunk is not a trailer section
    /// it can store (its header store refuses a line without a colon). A chunk size written
    /// `0x10` ends here: libcurl reads the hex digits up to the `x` (0, the last chunk) and skips
    /// the rest of the line, so the chunk's data arrives as trailer lines. Courier's own
    /// callbacks never fail there (a failure of theirs carries its own error), so this is always
    /// the server's malformed reply.
    static let chunkedTrailerFailure = "Failed reading the chunked-encoded stream"

    /// Whether libcurl's `message` says a body in a content coding (gzip, deflate, br, zstd)
    /// could not be decoded. The curl transport has the code (`CURLE_BAD_CONTENT_ENCODING`);
    /// FoundationNetworking keeps only the sentence.
    static func isUndecodableBody(_ message: String) -> Bool {
        message.hasPrefix("Error while processing content unencoding") || message.hasPrefix("Unrecognized content encoding")
    }
}
