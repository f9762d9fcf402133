/// Where the client takes each frame's 4-byte masking key from (RFC 6455 §5.3).
///
/// ``random`` draws each key from the system's cryptographically secure generator, as §10.3
/// requires; tests pass a fixed sequence so that encoded frames are predictable.
struct WebSocketMaskingKeySource: Sendable {
    private let next: @Sendable () -> UInt32

    /// A source that calls `next` for every frame.
    init(_ next: @escaping @Sendable () -> UInt32) { self.next = next }

    /// A fresh unpredictable key per frame.
    static let random = WebSocketMaskingKeySource {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }

    /// The same key for every frame (tests only: a predictable key defeats the purpose of masking).
    static func fixed(_ key: UInt32) -> WebSocketMaskingKeySource { WebSocketMaskingKeySource { key } }

    /// The next key, as the four bytes written after the length.
    func nextKey() -> (UInt8, UInt8, UInt8, UInt8) {
        let key = next()
        return (UInt8(truncatingIfNeeded: key >> 24), UInt8(truncatingIfNeeded: key >> 16),
                UInt8(truncatingIfNeeded: key >> 8), UInt8(truncatingIfNeeded: key))
    }
}
