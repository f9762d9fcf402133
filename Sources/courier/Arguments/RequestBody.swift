import Foundation

/// Where the body of a request comes from, as the command line described it.
enum RequestBody: Equatable, Sendable {
    /// `-d DATA` (and the other data options, joined): this text, sent as it is.
    case data(String)
    /// The data options' pieces when they are not UTF-8 text (`--data-binary @FILE` among others).
    case bytes(Data)
    /// `--data-binary @FILE` alone: the file, streamed from disk (never loaded whole).
    case file(path: String)
    /// `-T FILE`: the file, streamed from disk, sent with PUT.
    case upload(path: String)
    /// `-T -`: standard input, streamed.
    case standardInput
    /// `--json TEXT`: already checked to be JSON.
    case json(String)
    /// `-F ...`: a multipart form, in the order given.
    case form([FormField])

    /// How the option is named in messages.
    var optionName: String {
        switch self {
        case .data, .bytes, .file: "-d"
        case .upload, .standardInput: "-T"
        case .json: "--json"
        case .form: "-F"
        }
    }

    /// The body's length when it is known before sending (a file's is its size now).
    var knownLength: Int64? {
        switch self {
        case .data(let text), .json(let text): Int64(text.utf8.count)
        case .bytes(let bytes): Int64(bytes.count)
        case .file(let path), .upload(let path): FileChecks.size(of: URL(fileURLWithPath: path))
        case .standardInput, .form: nil
        }
    }

    /// Whether it is `-T`'s upload (PUT by default).
    var isUpload: Bool {
        switch self {
        case .upload, .standardInput: true
        default: false
        }
    }
}

/// One `-F` field of a multipart form.
struct FormField: Equatable, Sendable {
    /// What the field holds.
    enum Value: Equatable, Sendable {
        /// `name=text`.
        case text(String)
        /// `name=@path` or `name=@path;type=mime/type`: the file, streamed when the form is sent.
        case file(path: String, mimeType: String?)
    }

    /// The field name.
    let name: String
    /// The field's value.
    let value: Value

    /// Parses `name=value`, `name=@path` or `name=@path;type=mime/type`.
    static func parse(_ text: String) throws(UsageError) -> FormField {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
            throw UsageError("bad form field '\(text)' (expected NAME=VALUE or NAME=@FILE)")
        }
        let name = String(text[..<equals])
        let value = String(text[text.index(after: equals)...])
        guard value.hasPrefix("@") else { return FormField(name: name, value: .text(value)) }
        var path = String(value.dropFirst())
        var mimeType: String?
        if let marker = path.range(of: ";type=", options: .backwards) {
            mimeType = String(path[marker.upperBound...])
            path = String(path[..<marker.lowerBound])
        }
        guard !path.isEmpty else { throw UsageError("form field '\(name)': '@' needs a file name") }
        if let mimeType, mimeType.isEmpty || !mimeType.contains("/") {
            throw UsageError("form field '\(name)': bad type '\(mimeType)' (expected e.g. image/png)")
        }
        return FormField(name: name, value: .file(path: path, mimeType: mimeType))
    }
}
