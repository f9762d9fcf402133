import Foundation

/// A scripted HTTP response: status, ordered headers, a body, and how to send it (framing,
/// delays, throttling, socket faults).
///
/// It is a value; every modifier returns a modified copy:
/// ```swift
/// server.enqueue(.ok("hello").header("Cache-Control", "no-store").bodyDelay(.milliseconds(50)))
/// ```
/// `Content-Length` is added when the response is sent unless the body is chunked or
/// close-delimited, ``omitContentLength()`` was used, or the headers already carry one.
public struct MockResponse: Sendable, Equatable, CustomStringConvertible {
    /// The status code.
    public var status: Int
    /// The reason phrase; nil means the standard phrase for ``status``.
    public var reason: String?
    /// The headers the script set, in order; automatic headers are added when sending.
    public var headers: HeaderFields
    /// The body, before any content coding.
    public var body: Body

    var behavior = ResponseBehavior()

    /// Creates a response with a status, headers and body.
    public init(status: Int = 200, headers: HeaderFields = [:], body: Body = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The reason phrase that will be sent.
    public var reasonPhrase: String {
        reason ?? MockResponse.standardReason(for: status)
    }

    /// A short description such as `MockResponse(200 OK, 5 body bytes)`.
    public var description: String {
        "MockResponse(\(status) \(reasonPhrase), \(body.count) body bytes)"
    }

    /// The standard reason phrase for a status code, or "Unknown".
    static func standardReason(for status: Int) -> String {
        switch status {
        case 100: return "Continue"
        case 101: return "Switching Protocols"
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 416: return "Range Not Satisfiable"
        case 417: return "Expectation Failed"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        case 505: return "HTTP Version Not Supported"
        case 599: return "No Response Scripted"
        default: return "Unknown"
        }
    }
}

extension MockResponse {
    /// A response body: bytes in memory, or a deterministic pattern generated on the fly.
    public struct Body: Sendable, Equatable, CustomStringConvertible {
        enum Storage: Sendable, Equatable {
            case data(Data)
            case pattern(offset: Int64, count: Int64, seed: UInt64)
            case repeating(unit: Data, offset: Int64, count: Int64)
        }

        let storage: Storage

        /// No body.
        public static let empty = Body(storage: .data(Data()))

        /// The given bytes.
        public static func data(_ data: Data) -> Body {
            Body(storage: .data(data))
        }

        /// The UTF-8 encoding of `text`.
        public static func text(_ text: String) -> Body {
            Body(storage: .data(Data(text.utf8)))
        }

        /// `count` bytes of ``PatternBody`` for `seed`, generated while sending (never held in
        /// memory, so gigabytes are fine).
        public static func pattern(count: Int64, seed: UInt64) -> Body {
            Body(storage: .pattern(offset: 0, count: max(0, count), seed: seed))
        }

        /// `unit` over and over, `count` bytes in all (the last copy cut short if need be),
        /// generated while sending: an endless-looking stream (say, an event repeated for
        /// gigabytes) that is never held in memory.
        public static func repeating(_ unit: Data, count: Int64) -> Body {
            unit.isEmpty ? .empty : Body(storage: .repeating(unit: unit, offset: 0, count: max(0, count)))
        }

        /// The body's length in bytes.
        public var count: Int64 {
            switch storage {
            case .data(let data): return Int64(data.count)
            case .pattern(_, let count, _): return count
            case .repeating(_, _, let count): return count
            }
        }

        /// The bytes of an in-memory body; nil for a pattern body.
        public var data: Data? {
            if case .data(let data) = storage { return data }
            return nil
        }

        /// `count` bytes starting at `offset` of this body (clamped to it).
        func slice(offset: Int64, count: Int64) -> Body {
            let start = min(max(0, offset), self.count)
            let length = min(max(0, count), self.count - start)
            switch storage {
            case .data(let data):
                let lower = data.startIndex + Int(start)
                return .data(Data(data[lower..<(lower + Int(length))]))
            case .pattern(let base, _, let seed):
                return Body(storage: .pattern(offset: base + start, count: length, seed: seed))
            case .repeating(let unit, let base, _):
                return Body(storage: .repeating(unit: unit, offset: base + start, count: length))
            }
        }

        /// `count` bytes starting at `position`; the caller keeps the range inside the body.
        func bytes(from position: Int64, count: Int) -> [UInt8] {
            switch storage {
            case .data(let data):
                let lower = data.startIndex + Int(position)
                return [UInt8](data[lower..<(lower + count)])
            case .pattern(let base, _, let seed):
                return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                    PatternBody.fill(UnsafeMutableRawBufferPointer(buffer), offset: base + position, seed: seed)
                    initialized = count
                }
            case .repeating(let unit, let base, _):
                var bytes: [UInt8] = []
                bytes.reserveCapacity(count)
                var offset = Int((base + position) % Int64(unit.count))
                while bytes.count < count {
                    let take = min(unit.count - offset, count - bytes.count)
                    bytes.append(contentsOf: unit[(unit.startIndex + offset)..<(unit.startIndex + offset + take)])
                    offset = 0
                }
                return bytes
            }
        }

        /// A short description of the body.
        public var description: String {
            switch storage {
            case .data(let data): return "\(data.count) bytes"
            case .pattern(let offset, let count, let seed):
                return "pattern(seed: \(seed), offset: \(offset), count: \(count))"
            case .repeating(let unit, let offset, let count):
                return "repeating(\(unit.count)-byte unit, offset: \(offset), count: \(count))"
            }
        }
    }
}
