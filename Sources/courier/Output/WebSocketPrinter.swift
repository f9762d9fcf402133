import Courier
import Foundation

/// Writes the messages of a WebSocket to standard output as they arrive.
///
/// - A text message is written followed by a newline; on a terminal, a JSON object or array is
///   pretty-printed (and coloured unless `NO_COLOR` is set), as a response body is.
/// - A binary message is written as one line, `binary message, N bytes: HEX` (the first 32
///   bytes in hexadecimal, `…` when there are more); with `--binary`, as its bytes, nothing added.
struct WebSocketPrinter {
    /// How many bytes of a binary message its summary line shows.
    static let summaryBytes = 32

    let console: Console
    /// `--binary`: binary messages are written as their bytes.
    let rawBinary: Bool

    /// Writes `message`; false when standard output is broken (a closed pipe).
    func print(_ message: WebSocketMessage) -> Bool {
        switch message {
        case .text(let text):
            let data = Data(text.utf8)
            if console.stdoutIsTerminal, BodyPrinter.looksLikeJSON(data),
                let formatted = JSONColouring.formattedBytes(data, palette: console.stdoutUsesColour ? .ansi : .none)
            {
                return console.out(formatted)
            }
            return console.out(data + [UInt8(ascii: "\n")])
        case .binary(let data):
            return rawBinary ? console.out(data) : console.out(Self.summary(of: data) + "\n")
        }
    }

    /// `binary message, 5 bytes: 68656c6c6f`.
    static func summary(of data: Data) -> String {
        let hex = data.prefix(summaryBytes).map { String(format: "%02x", $0) }.joined()
        let more = data.count > summaryBytes ? "…" : ""
        return "binary message, \(data.count) byte\(data.count == 1 ? "" : "s")" + (data.isEmpty ? "" : ": \(hex)\(more)")
    }
}
