import Foundation

/// A complete WebSocket data message (RFC 6455 §5.6), reassembled from its fragments.
///
/// ```swift
/// try await socket.send(.text("hello"))
/// for try await message in socket.messages {
///     if case .text(let text) = message { print(text) }
///     let update = try message.decode(PriceUpdate.self)   // JSON in a text or binary message
/// }
/// ```
public enum WebSocketMessage: Sendable, Hashable {
    /// A text message; its bytes were valid UTF-8.
    case text(String)
    /// A binary message.
    case binary(Data)

    /// The message's bytes: a text message's UTF-8, or the binary data.
    public var data: Data {
        switch self {
        case .text(let text): Data(text.utf8)
        case .binary(let data): data
        }
    }

    /// The text of a text message; nil for a binary one.
    public var text: String? {
        if case .text(let text) = self { text } else { nil }
    }

    /// The message's bytes decoded as JSON into `type`; throws `.serializationFailed`.
    public func decode<Value: Decodable>(_ type: Value.Type = Value.self, decoder: JSONDecoder = JSONDecoder()) throws -> Value {
        do {
            return try decoder.decode(type, from: data)
        } catch {
            throw CourierError(
                .serializationFailed, "The WebSocket message could not be decoded as \(Value.self): \(error)",
                underlyingError: error)
        }
    }

    /// The message's size in bytes.
    var byteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .binary(let data): data.count
        }
    }
}
