import Courier

/// `-v` on the curl transport: libcurl's own account of each transfer, printed as curl prints it,
/// in the order it happens. `* ` before what libcurl says it does (`* Trying 127.0.0.1:443...`,
/// `* Connected to ...`, `* ALPN: server accepted h2`, `* SSL connection using TLSv1.3 / ...`),
/// `> ` before each line of the request head as sent, `< ` before each line of the response head
/// as received (the blank line that ends a head is a lone `>` or `<`).
///
/// The text comes from the transport's thread; each line goes to standard error whole, through
/// the console's lock.
struct CurlDebugPrinter: Sendable {
    let console: Console

    /// Prints one piece of libcurl's account.
    func print(_ event: CurlDebugEvent) {
        for line in Self.lines(event) { console.message(line) }
    }

    /// The lines of standard error `event` makes.
    static func lines(_ event: CurlDebugEvent) -> [String] {
        let marker: String
        switch event.kind {
        case .text: marker = "*"
        case .headerIn: marker = "<"
        case .headerOut: marker = ">"
        }
        // "\r\n" is one Character in Swift: lines are split on it as on "\n".
        var lines = event.text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
            .map { $0.isEmpty ? marker : "\(marker) \($0)" }
        // A final line end leaves an empty piece; a request head's blank line leaves two.
        if lines.last == marker { lines.removeLast() }
        if event.kind == .headerOut, lines.last == marker { lines.removeLast() }
        // The request head arrives whole, its blank line included.
        if event.kind == .headerOut { lines.append(marker) }
        return lines
    }
}
