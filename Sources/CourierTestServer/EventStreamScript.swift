import Foundation

/// A scripted Server-Sent Events stream (`text/event-stream`) for testing SSE clients: events with
/// ids and delays, an optional drop of the connection after some events, and resumption after
/// the `Last-Event-ID` a reconnecting client sends.
///
/// ```swift
/// let script = EventStreamScript(events: (1...5).map { .init(id: "\($0)", data: "tick \($0)", delay: .milliseconds(20)) },
///                                dropAfter: 3)
/// server.route("/events") { script.response(for: $0) }
/// // First connection: events 1–3, then a reset. A reconnection with Last-Event-ID: 3 gets 4 and 5.
/// ```
public struct EventStreamScript: Sendable {
    /// One event of the script.
    public struct Event: Sendable, Equatable {
        /// The `id:` field, if any.
        public var id: String?
        /// The `event:` field, if any.
        public var event: String?
        /// The data; each line becomes a `data:` line.
        public var data: String
        /// A `retry:` field, if any (milliseconds).
        public var retry: Int?
        /// How long the server waits before writing this event.
        public var delay: Duration

        /// An event.
        public init(id: String? = nil, event: String? = nil, data: String, retry: Int? = nil, delay: Duration = .zero) {
            self.id = id
            self.event = event
            self.data = data
            self.retry = retry
            self.delay = delay
        }

        /// The event as written on the wire, ending with its blank line.
        public var wireText: String {
            var text = ""
            if let id { text += "id: \(id)\n" }
            if let event { text += "event: \(event)\n" }
            if let retry { text += "retry: \(retry)\n" }
            for line in data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
            return text + "\n"
        }
    }

    /// How a connection ends once its events are written.
    public enum Ending: Sendable, Equatable {
        /// The response ends normally (the last chunk of a chunked body).
        case end
        /// The connection is reset (RST), as a crashed server or a dropped network would.
        case reset
        /// The connection stays open with nothing more sent (an idle stream).
        case stall
    }

    /// The events, in order.
    public var events: [Event]
    /// After this many events of one connection, the connection is reset (the rest come on a
    /// reconnection that names the last id it saw); `nil` sends them all on one connection.
    public var dropAfter: Int?
    /// How a connection that sent the last event ends.
    public var ending: Ending

    /// A script.
    public init(events: [Event], dropAfter: Int? = nil, ending: Ending = .end) {
        self.events = events
        self.dropAfter = dropAfter
        self.ending = ending
    }

    /// The events a request should get: those after the request's `Last-Event-ID` (all of them
    /// without one, or when the id is unknown).
    public func remainingEvents(for request: RecordedRequest) -> ArraySlice<Event> {
        guard let last = request.headers["Last-Event-ID"], let index = events.firstIndex(where: { $0.id == last }) else {
            return events[...]
        }
        return events[(index + 1)...]
    }

    /// The response for `request`: a `text/event-stream` of the remaining events, each written
    /// after its delay, with the connection dropped after ``dropAfter`` of them.
    public func response(for request: RecordedRequest) -> MockResponse {
        var remaining = remainingEvents(for: request)
        var dropped = false
        if let dropAfter, remaining.count > dropAfter {
            remaining = remaining.prefix(dropAfter)
            dropped = true
        }
        var body = Data()
        var paces: [ResponseBehavior.Pace] = []
        for event in remaining {
            if event.delay > .zero { paces.append(.init(offset: Int64(body.count), delay: event.delay)) }
            body.append(contentsOf: event.wireText.utf8)
        }
        var response = MockResponse(
            status: 200, headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-cache"],
            body: .data(body)
        )
        .chunked(chunkSize: 64 << 10)
        .withBehavior { $0.paces = paces }
        // At the body's last byte, before the chunked body's last chunk: the client sees no clean end.
        let end = EffectPoint.responseBody(afterBytes: Int64(body.count))
        if dropped || ending == .reset {
            response = response.effect(.reset, at: end)
        } else if ending == .stall {
            response = response.effect(.stall, at: end)
        }
        return response
    }
}
