import Foundation

/// Writes a response body to standard output: the raw bytes when standard output is not a
/// terminal; on a terminal, JSON pretty-printed (and coloured unless `NO_COLOR` is set), text as
/// it is with a final newline, and binary data not at all (a note on stderr says so).
///
/// Formatting needs the whole body in memory, so it is done only for bodies of at most
/// ``formattingLimit`` bytes; larger ones are written as they are (see ``StreamedBody``).
struct BodyPrinter {
    /// Bodies larger than this are never held to be formatted; they are copied as they are.
    static let formattingLimit = 16 << 20

    let console: Console

    /// Prints a body held in memory.
    func print(data: Data, contentType: String?) -> ExitCode {
        guard console.stdoutIsTerminal, data.count <= Self.formattingLimit else {
            return console.out(data) ? .success : .writeError
        }
        return printForTerminal(data, contentType: contentType)
    }

    /// JSON formatted, text with a final newline, binary withheld.
    private func printForTerminal(_ data: Data, contentType: String?) -> ExitCode {
        if data.isEmpty { return .success }
        if JSONColouring.isJSONContentType(contentType) || Self.looksLikeJSON(data),
            let formatted = JSONColouring.formattedBytes(data, palette: console.stdoutUsesColour ? .ansi : .none)
        {
            return console.out(formatted) ? .success : .writeError
        }
        if data.contains(0) {
            console.message("courier: not printing \(data.count) bytes of binary data to a terminal; use -o FILE or a pipe")
            return .success
        }
        guard console.out(data) else { return .writeError }
        if data.last != UInt8(ascii: "\n"), !console.out(Data([UInt8(ascii: "\n")])) { return .writeError }
        return .success
    }

    /// Whether the first non-space byte opens an object or an array.
    static func looksLikeJSON(_ data: Data) -> Bool {
        guard let first = data.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { return false }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }
}
