import Foundation

/// A representation served with validators and byte ranges as RFC 9110 specifies: `ETag`,
/// `Last-Modified`, `Range` (206/416), `If-Range`, `If-None-Match` and `If-Modified-Since` (304).
///
/// Register it with `TestServer.route(_:method:_:)` and swap it with
/// ``TestServer/replace(_:at:)`` to simulate "the file changed". Like ``MockResponse`` it can
/// carry timing and fault modifiers, applied to every response it produces (or, with
/// ``effect(_:at:forFirst:)``, to the first few).
public struct Resource: Sendable {
    /// The representation's bytes.
    public var body: MockResponse.Body
    /// The entity tag including its quotes, e.g. `"v1"` or `W/"v1"`; nil sends none.
    public var etag: String?
    /// The modification date (whole seconds are used); nil sends no `Last-Modified`.
    public var lastModified: Date?
    /// The `Content-Type` sent with the representation.
    public var contentType: String
    /// When true, every GET gets 200 with the full body and no `Accept-Ranges`, as from a server
    /// that does not support ranges.
    public var ignoresRange: Bool

    /// Headers and behaviour applied to every response.
    var template = MockResponse()
    /// Effects applied only to the first `count` responses since the resource was registered.
    var limitedEffects: [(effect: SocketEffect, point: EffectPoint, count: Int)] = []
    var transforms: [@Sendable (RecordedRequest, MockResponse) -> MockResponse] = []

    /// A resource holding `data` in memory.
    public init(
        data: Data, etag: String? = nil, lastModified: Date? = nil,
        contentType: String = "application/octet-stream", ignoresRange: Bool = false
    ) {
        self.init(body: .data(data), etag: etag, lastModified: lastModified, contentType: contentType, ignoresRange: ignoresRange)
    }

    /// A resource of `count` ``PatternBody`` bytes for `seed`, generated while sending (never
    /// held in memory).
    public init(
        pattern count: Int64, seed: UInt64, etag: String? = nil, lastModified: Date? = nil,
        contentType: String = "application/octet-stream", ignoresRange: Bool = false
    ) {
        self.init(
            body: .pattern(count: count, seed: seed), etag: etag, lastModified: lastModified,
            contentType: contentType, ignoresRange: ignoresRange)
    }

    /// A resource with any body.
    public init(
        body: MockResponse.Body, etag: String? = nil, lastModified: Date? = nil,
        contentType: String = "application/octet-stream", ignoresRange: Bool = false
    ) {
        self.body = body
        self.etag = etag
        self.lastModified = lastModified
        self.contentType = contentType
        self.ignoresRange = ignoresRange
    }

    /// The representation's length in bytes.
    public var count: Int64 { body.count }

    /// The response this resource gives to `request`, as its first response.
    public func response(for request: RecordedRequest) -> MockResponse {
        response(for: request, serveIndex: 0)
    }

    // MARK: Modifiers

    /// Returns a copy that ignores (or honours) `Range`.
    public func ignoringRange(_ ignores: Bool = true) -> Resource {
        var copy = self
        copy.ignoresRange = ignores
        return copy
    }

    /// Adds a header to every response.
    public func header(_ name: String, _ value: String) -> Resource {
        withTemplate { $0.header(name, value) }
    }

    /// Waits before every response head; see ``MockResponse/headersDelay(_:)``.
    public func headersDelay(_ delay: Duration) -> Resource {
        withTemplate { $0.headersDelay(delay) }
    }

    /// Waits between every head and body; see ``MockResponse/bodyDelay(_:)``.
    public func bodyDelay(_ delay: Duration) -> Resource {
        withTemplate { $0.bodyDelay(delay) }
    }

    /// Throttles every body; see ``MockResponse/throttle(bytes:every:)``.
    public func throttle(bytes: Int, every period: Duration) -> Resource {
        withTemplate { $0.throttle(bytes: bytes, every: period) }
    }

    /// Holds every response until `gate` opens; see ``MockResponse/waiting(for:)``.
    public func waiting(for gate: Gate) -> Resource {
        withTemplate { $0.waiting(for: gate) }
    }

    /// Pauses every body after `bytes` bytes until `gate` opens; see ``MockResponse/pausing(afterBytes:until:)``.
    /// Once the gate is open, later responses pass straight through.
    public func pausing(afterBytes bytes: Int64, until gate: Gate) -> Resource {
        withTemplate { $0.pausing(afterBytes: bytes, until: gate) }
    }

    /// Applies a socket effect to every response; see ``MockResponse/effect(_:at:)``.
    public func effect(_ effect: SocketEffect, at point: EffectPoint) -> Resource {
        withTemplate { $0.effect(effect, at: point) }
    }

    /// Applies a socket effect to the first `count` responses only, e.g. reset the first
    /// download part-way and serve the resumed request normally.
    public func effect(_ effect: SocketEffect, at point: EffectPoint, forFirst count: Int) -> Resource {
        var copy = self
        copy.limitedEffects.append((effect, point, count))
        return copy
    }

    /// Truncates every body after `bytes` bytes; see ``MockResponse/truncated(afterBytes:)``.
    public func truncated(afterBytes bytes: Int64) -> Resource {
        withTemplate { $0.truncated(afterBytes: bytes) }
    }

    /// Sends every body chunked; see ``MockResponse/chunked(chunkSize:)``.
    public func chunked(chunkSize: Int = 1024) -> Resource {
        withTemplate { $0.chunked(chunkSize: chunkSize) }
    }

    /// Closes the connection after every response; see ``MockResponse/connectionClose()``.
    public func connectionClose() -> Resource {
        withTemplate { $0.connectionClose() }
    }

    /// Adjusts each response after the resource has built it (runs on a server thread).
    public func modifying(_ transform: @escaping @Sendable (RecordedRequest, MockResponse) -> MockResponse) -> Resource {
        var copy = self
        copy.transforms.append(transform)
        return copy
    }

    private func withTemplate(_ change: (MockResponse) -> MockResponse) -> Resource {
        var copy = self
        copy.template = change(copy.template)
        return copy
    }
}
