import Courier
import Foundation

/// Prints a Server-Sent Events stream one event per block, as each arrives: `id:` and `event:`
/// lines when the event has them, then its data, pretty-printed when it is JSON, then a blank line.
struct EventPrinter {
    let console: Console
    var parser = ServerSentEventParser()
    /// Set once a write failed (a closed pipe); nothing more is written.
    private(set) var writeFailed = false

    init(console: Console) {
        self.console = console
    }

    /// Parses `chunk` and prints the events it completes; throws when an event passes the size limit.
    mutating func consume(_ chunk: Data) throws(CourierError) -> Bool {
        var events: [ServerSentEvent] = []
        try parser.parse(chunk) { events.append($0) }
        for event in events where !writeFailed { print(event) }
        return !writeFailed
    }

    /// Prints one event.
    mutating func print(_ event: ServerSentEvent) {
        var text = ""
        if let id = event.id { text += "id: \(id)\n" }
        if event.event != "message" { text += "event: \(event.event)\n" }
        text += "data: \(Self.formatted(event.data))\n\n"
        if !console.out(Data(text.utf8)) { writeFailed = true }
    }

    /// `data` pretty-printed when it is a JSON object or array, as it is otherwise.
    static func formatted(_ data: String) -> String {
        let trimmed = data.drop { $0 == " " }
        guard trimmed.first == "{" || trimmed.first == "[",
            let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)),
            let pretty = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        else {
            return data
        }
        return String(decoding: pretty, as: UTF8.self)
    }
}
