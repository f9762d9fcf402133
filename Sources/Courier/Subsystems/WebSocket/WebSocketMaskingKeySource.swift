import CCourierSystem
import CourierLocking

/// Where the client takes each frame's 4-byte masking key from (RFC 6455 §5.3).
///
/// ``random`` draws each key from the system's cryptographically secure generator, as §10.3
/// requires; tests pass a fixed sequence so that encoded frames are predictable.
struct WebSocketMaskingKeySource: Sendable {
    private let next: @Sendable () -> UInt32

    /// A source that calls `next` for every frame.
    init(_ next: @escaping @Sendable () -> UInt32) { self.next = next }

    /// A fresh unpredictable key per frame, from the system's secure generator; drawn 64 at a
    /// time (one system call for 64 frames, not one per frame), and each used once.
    static let random: WebSocketMaskingKeySource = {
        let pool = Locked(RandomKeys())
        return WebSocketMaskingKeySource { pool.withLock { $0.next() } }
    }()

    /// The same key for every frame (tests only: a predictable key defeats the purpose of masking).
    static func fixed(_ key: UInt32) -> WebSocketMaskingKeySource { WebSocketMaskingKeySource { key } }

    /// The next key, as the four bytes written after the length.
    func nextKey() -> (UInt8, UInt8, UInt8, UInt8) {
        let key = next()
        return (
            UInt8(truncatingIfNeeded: key >> 24), UInt8(truncatingIfNeeded: key >> 16),
            UInt8(truncatingIfNeeded: key >> 8), UInt8(truncatingIfNeeded: key)
        )
    }
}

/// Keys drawn from the system's secure generator in batches.
private struct RandomKeys: Sendable {
    private var keys = [UInt32](repeating: 0, count: 64)
    private var index = 64

    mutating func next() -> UInt32 {
        if index == keys.count {
            let filled = keys.withUnsafeMutableBytes { csystem_random_bytes($0.baseAddress, $0.count) } == 0
            if !filled {
                // The batch call failed: the standard library's generator, one key at a time.
                var generator = SystemRandomNumberGenerator()
                return generator.next()
            }
            index = 0
        }
        defer { index += 1 }
        return keys[index]
    }
}
