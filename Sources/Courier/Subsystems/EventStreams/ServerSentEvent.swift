import Foundation

/// One event of a Server-Sent Events stream (`text/event-stream`), as the WHATWG HTML standard's
/// parsing rules dispatch it.
///
/// ```swift
/// for try await event in session.eventStream("v1/events").events() {
///     print(event.event, event.data)
/// }
/// ```
public struct ServerSentEvent: Sendable, Hashable, CustomStringConvertible {
    /// The last event ID the stream set (`id:`), carried over events that set none; `nil` while
    /// no event set one, or after an `id:` line with an empty value reset it.
    public var id: String?
    /// The event type (`event:`), `"message"` when the event named none.
    public var event: String
    /// The event's `data:` lines joined with `"\n"`.
    public var data: String
    /// The reconnection time in milliseconds that a `retry:` line of this event set, if any.
    public var retry: Int?

    /// Creates an event (tests and custom parsers; a stream's events come from its parser).
    public init(id: String? = nil, event: String = "message", data: String, retry: Int? = nil) {
        self.id = id
        self.event = event
        self.data = data
        self.retry = retry
    }

    /// The event in its wire form, as a server would write it (one field per line, then a blank line).
    public var description: String {
        var text = ""
        if let id { text += "id: \(id)\n" }
        if event != "message" { text += "event: \(event)\n" }
        if let retry { text += "retry: \(retry)\n" }
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
        return text + "\n"
    }
}
