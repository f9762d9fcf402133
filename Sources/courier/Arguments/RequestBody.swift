import Foundation

/// Where the body of a request comes from, as the command line described it.
enum RequestBody: Equatable, Sendable {
    /// `-d DATA`: these bytes, sent as they are.
    case data(String)
    /// `-d @FILE`: the file, streamed from disk (never loaded whole).
    case file(path: String)
    /// `--json TEXT`: already checked to be JSON.
    case json(String)
    /// `-F ...`: a multipart form, in the order given.
    case form([FormField])

    /// How the option is named in messages.
    var optionName: String {
        switch self {
        case .data, .file: "-d"
        case .json: "--json"
        case .form: "-F"
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
