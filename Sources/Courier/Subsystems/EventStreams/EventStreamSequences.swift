import Foundation

/// Everything that happens on an event stream, in order; see ``EventStreamRequest/updates()``.
public struct EventStreamUpdates: AsyncSequence, Sendable {
    /// An update.
    public typealias Element = EventStreamUpdate
    /// The error a stream ends with.
    public typealias Failure = CourierError

    let request: EventStreamRequest

    /// Starts the stream and returns its iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(pump: EventStreamPump(request: request, attached: request.attachConsumer()))
    }

    /// Takes updates one at a time; the stream reads on only as they are taken.
    public struct Iterator: AsyncIteratorProtocol {
        let pump: EventStreamPump

        /// The next update, or `nil` when the stream ended cleanly.
        public mutating func next() async throws(CourierError) -> EventStreamUpdate? {
            if let update = pump.nextReady() { return update }
            return try await pump.next()
        }
    }
}

/// The events of an event stream; see ``EventStreamRequest/events()``.
public struct ServerSentEvents: AsyncSequence, Sendable {
    /// An event.
    public typealias Element = ServerSentEvent
    /// The error a stream ends with.
    public typealias Failure = CourierError

    let updates: EventStreamUpdates

    /// Starts the stream and returns its iterator.
    public func makeAsyncIterator() -> Iterator { Iterator(updates: updates.makeAsyncIterator()) }

    /// Takes events one at a time.
    public struct Iterator: AsyncIteratorProtocol {
        var updates: EventStreamUpdates.Iterator

        /// The next event, or `nil` when the stream ended cleanly.
        public mutating func next() async throws(CourierError) -> ServerSentEvent? {
            while true {
                // Events already parsed are taken without another suspension point.
                while let update = updates.pump.nextReady() {
                    if case .event(let event) = update { return event }
                }
                guard let update = try await updates.pump.next() else { return nil }
                if case .event(let event) = update { return event }
            }
        }
    }
}

/// An event stream's `data` decoded as JSON; see ``EventStreamRequest/decodingEvents(of:decoder:until:)``.
public struct DecodedServerSentEvents<Value: Decodable & Sendable>: AsyncSequence, Sendable {
    /// A decoded value.
    public typealias Element = Value
    /// The error a stream ends with.
    public typealias Failure = CourierError

    let events: ServerSentEvents
    let decoder: JSONDecoder
    let sentinel: String?

    /// Starts the stream and returns its iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(events: events.makeAsyncIterator(), request: events.updates.request, decoder: decoder, sentinel: sentinel)
    }

    /// Takes decoded values one at a time.
    public struct Iterator: AsyncIteratorProtocol {
        var events: ServerSentEvents.Iterator
        let request: EventStreamRequest
        let decoder: JSONDecoder
        let sentinel: String?
        var count = 0
        var ended = false

        /// The next value, or `nil` at the sentinel or a clean end of the stream.
        public mutating func next() async throws(CourierError) -> Value? {
            guard !ended, let event = try await events.next() else { return nil }
            count += 1
            if let sentinel, event.data == sentinel {
                ended = true
                request.cancel()
                return nil
            }
            do {
                return try decoder.decode(Value.self, from: Data(event.data.utf8))
            } catch {
                ended = true
                request.cancel()
                throw CourierError(
                    .serializationFailed, "Event \(count) of the stream (\(event.event)) did not decode as \(Value.self): \(error)",
                    underlyingError: error)
            }
        }
    }
}
