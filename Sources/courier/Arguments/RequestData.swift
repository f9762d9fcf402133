import Foundation

/// The body of `-d`, `--data-binary`, `--data-raw`, `--data-urlencode` and `--json`, put together
/// as curl does: each piece in the order given, joined with `&` (`--json` pieces are concatenated).
///
/// - `-d TEXT` is sent as it is; `-d @FILE` (`@-`: standard input) without its CR and LF bytes.
/// - `--data-binary @FILE` is sent exactly; as the whole body it is streamed from disk.
/// - `--data-raw` never reads a file.
/// - `--data-urlencode` percent-encodes: `TEXT`, `=TEXT`, `NAME=TEXT`, `@FILE`, `NAME@FILE`.
/// - `--json TEXT|@FILE`: the pieces, concatenated, must be JSON.
///
/// Files read into the body are bounded (``inMemoryLimit``), and `-d @FILE` refuses a file that is
/// not text, rather than strip bytes out of it: `--data-binary` and `-T` are for those.
enum RequestData {
    /// One piece as given.
    enum Piece: Equatable, Sendable {
        case data(String)
        case binary(String)
        case raw(String)
        case urlencode(String)
    }

    /// The most bytes a file read into a body in memory may have.
    static let inMemoryLimit = 64 << 20

    /// The pieces of the data options, in command-line order.
    static func pieces(from parsed: ParsedArguments) -> [Piece] {
        parsed.options.compactMap { occurrence in
            guard let value = occurrence.value else { return nil }
            switch occurrence.id {
            case "data": return .data(value)
            case "data-binary": return .binary(value)
            case "data-raw": return .raw(value)
            case "data-urlencode": return .urlencode(value)
            default: return nil
            }
        }
    }

    /// The body the pieces make: one `--data-binary @FILE` alone is a file to stream; anything else
    /// is bytes in memory.
    static func body(
        _ pieces: [Piece], readData: (String) throws -> Data
    ) throws(UsageError) -> RequestBody {
        if pieces.count == 1, case .binary(let value) = pieces[0], value.hasPrefix("@"), value != "@-" {
            let path = String(value.dropFirst())
            guard !path.isEmpty else { throw UsageError("--data-binary @FILE needs a file name after '@'") }
            return .file(path: path)
        }
        var body = Data()
        for (index, piece) in pieces.enumerated() {
            if index > 0 { body.append(UInt8(ascii: "&")) }
            body.append(try bytes(of: piece, readData: readData))
        }
        if let text = String(data: body, encoding: .utf8) { return .data(text) }
        return .bytes(body)
    }

    /// The bytes one piece stands for.
    static func bytes(of piece: Piece, readData: (String) throws -> Data) throws(UsageError) -> Data {
        switch piece {
        case .raw(let text):
            return Data(text.utf8)
        case .binary(let text):
            guard text.hasPrefix("@") else { return Data(text.utf8) }
            return try file(String(text.dropFirst()), option: "--data-binary", readData: readData)
        case .data(let text):
            guard text.hasPrefix("@") else { return Data(text.utf8) }
            let contents = try file(String(text.dropFirst()), option: "-d", readData: readData)
            guard !contents.contains(0), String(data: contents, encoding: .utf8) != nil else {
                throw UsageError(
                    "-d \(text): the file is not text, and -d leaves out its line breaks; "
                        + "send it exactly with --data-binary \(text) or -T \(text.dropFirst())")
            }
            return Data(contents.filter { $0 != 0x0D && $0 != 0x0A })
        case .urlencode(let text):
            return Data(try urlencoded(text, readData: readData).utf8)
        }
    }

    /// `--data-urlencode`'s forms: `=TEXT` and `TEXT` encode TEXT, `NAME=TEXT` keeps `NAME=`,
    /// `@FILE` and `NAME@FILE` encode the file's contents.
    static func urlencoded(_ text: String, readData: (String) throws -> Data) throws(UsageError) -> String {
        let equals = text.firstIndex(of: "=")
        let at = text.firstIndex(of: "@")
        if let at, equals.map({ at < $0 }) ?? true {
            let name = String(text[..<at])
            let contents = try file(String(text[text.index(after: at)...]), option: "--data-urlencode", readData: readData)
            let encoded = percentEncoded(String(decoding: contents, as: UTF8.self), spaceAsPlus: true)
            return name.isEmpty ? encoded : name + "=" + encoded
        }
        guard let equals else { return percentEncoded(text, spaceAsPlus: true) }
        let name = String(text[..<equals])
        let encoded = percentEncoded(String(text[text.index(after: equals)...]), spaceAsPlus: true)
        return name.isEmpty ? encoded : name + "=" + encoded
    }

    /// `text` with everything but RFC 3986's unreserved characters percent-encoded, as curl
    /// encodes; with `spaceAsPlus` (a form's value, `--data-urlencode`), a space is `+`.
    static func percentEncoded(_ text: String, spaceAsPlus: Bool = false) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: " ") where spaceAsPlus:
                result.append("+")
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.append(Character(Unicode.Scalar(byte)))
            default:
                result += String(format: "%%%02X", byte)
            }
        }
        return result
    }

    /// The `--json` pieces concatenated (files read exactly), checked to be JSON.
    static func json(_ pieces: [String], readData: (String) throws -> Data) throws(UsageError) -> String {
        var body = Data()
        for piece in pieces {
            if piece.hasPrefix("@") {
                body.append(try file(String(piece.dropFirst()), option: "--json", readData: readData))
            } else {
                body.append(contentsOf: piece.utf8)
            }
        }
        guard let text = String(data: body, encoding: .utf8) else { throw UsageError("--json: not valid JSON: not UTF-8 text") }
        return text
    }

    /// A file's contents (standard input for `-`), bounded by ``inMemoryLimit``.
    static func file(_ path: String, option: String, readData: (String) throws -> Data) throws(UsageError) -> Data {
        guard !path.isEmpty else { throw UsageError("\(option) @FILE needs a file name after '@'") }
        let contents: Data
        do {
            contents = try readData(path)
        } catch {
            throw UsageError(
                "Failed to read \(path) for \(option): \(FileChecks.readableFileProblem(path) ?? "\(error)")", exitCode: .readError)
        }
        guard contents.count <= inMemoryLimit else {
            throw UsageError(
                "\(option) @\(path): the file has more than \(inMemoryLimit >> 20) MiB, which courier will not hold in memory; "
                    + "send it streamed with --data-binary @\(path) alone or -T \(path)")
        }
        return contents
    }
}
