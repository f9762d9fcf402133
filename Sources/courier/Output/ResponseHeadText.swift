import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierLocking

/// A response head as `-i`, `-I`, `-D` and `-v` print it: the status line, then one line per
/// field, in the order of ``fields``.
///
/// The printers take the fields as an ordered list, so that they print whatever order they are
/// given: Courier's ``HTTPHeaders`` field lines, in wire order with repeated names apart. From an
/// `HTTPURLResponse` alone the order on the wire is lost (Foundation keeps the fields in a
/// dictionary and joins repeated ones), so ``init(_:version:fields:)`` without lines sorts them by
/// name to print the same head the same way every time.
struct ResponseHeadText: Equatable, Sendable {
    /// `HTTP/1.1 200 OK`, or `HTTP/2 200 ` (HTTP/2 has no reason phrase on the wire; curl ends
    /// the line with a space all the same).
    var statusLine: String
    /// `(name, value)` in the order to print.
    var fields: [(name: String, value: String)]

    static func == (lhs: ResponseHeadText, rhs: ResponseHeadText) -> Bool {
        lhs.statusLine == rhs.statusLine && lhs.fields.elementsEqual(rhs.fields) { $0 == $1 }
    }

    /// A status line and fields in the order given.
    init(statusLine: String, fields: [(name: String, value: String)]) {
        self.statusLine = statusLine
        self.fields = fields
    }

    /// The head of `response` spoken over `version`: `lines` in their order when given, else the
    /// response's fields sorted by name (see the type's note).
    init(_ response: HTTPURLResponse, version: String, fields lines: HTTPHeaders? = nil) {
        statusLine =
            version.hasPrefix("HTTP/1")
            ? "\(version) \(HTTPStatusText.line(response.statusCode))"
            : "\(version) \(response.statusCode) "
        if let lines {
            fields = lines.map { (name: $0.name, value: $0.value) }
        } else {
            fields = response.allHeaderFields.map { (name: "\($0.key)", value: "\($0.value)") }
                .sorted { $0.name.lowercased() < $1.name.lowercased() }
        }
    }

    /// The lines without line ends: the status line, then `Name: value` for each field.
    var lines: [String] {
        [statusLine] + fields.map { "\($0.name): \($0.value)" }
    }

    /// The head as it goes on the wire: CRLF after each line, and a blank line at the end.
    var wireText: String {
        lines.map { $0 + "\r\n" }.joined() + "\r\n"
    }
}

/// Where `-D FILE` writes response heads: a file opened (truncated) once for the whole command, or
/// standard output for `-D -`.
final class HeadDump: Sendable {
    private enum Target: Sendable {
        case standardOutput(Console)
        case file(FileHandle)
    }

    // Serialises the writes of transfers that run in parallel (-Z); guards the handle.
    private let target: Locked<Target>

    /// Opens `path` for the heads (`-` is standard output).
    ///
    /// - Throws: a message naming the problem when the file cannot be created.
    init(path: String, console: Console) throws(UsageError) {
        if path == "-" {
            target = Locked(.standardOutput(console))
            return
        }
        guard let handle = OutputPath.openForWriting(path, appending: false) else {
            throw UsageError(
                "cannot write the -D file \(path): \(FileChecks.writableDestinationProblem(path) ?? "it cannot be created")", exitCode: .writeError)
        }
        target = Locked(.file(handle))
    }

    /// Appends one head.
    func write(_ head: ResponseHeadText) {
        let text = head.wireText
        target.withLock { target in
            switch target {
            case .standardOutput(let console): console.out(text)
            case .file(let handle): try? handle.write(contentsOf: Data(text.utf8))
            }
        }
    }

    /// Closes the file.
    func close() {
        target.withLock { target in
            if case .file(let handle) = target { try? handle.close() }
        }
    }
}
