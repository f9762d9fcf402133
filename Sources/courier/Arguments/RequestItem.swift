import Courier
import Foundation

/// An HTTPie-style request item after the URL: `name=value` (a JSON string field), `name:=json`
/// (a raw JSON field), `name==value` (a query parameter) or `Header:value` (a header).
///
/// The separator is the first of `:=`, `==`, `=` and `:` in the item, the longer one winning at
/// the same place, so `a=b:c` is a field and `X-A:b=c` a header.
enum RequestItem: Equatable, Sendable {
    /// `name=value`: the string `value` in the JSON body.
    case field(name: String, value: String)
    /// `name:=json`: the JSON `json` (checked) in the JSON body.
    case rawField(name: String, json: String)
    /// `name==value`: a query parameter.
    case query(name: String, value: String)
    /// `Header:value`.
    case header(HeaderField)

    /// Parses one item.
    static func parse(_ text: String) throws(UsageError) -> RequestItem {
        if FetchOptions.explicitScheme(text) != nil {
            throw UsageError("unexpected argument '\(text)' (only http:// and https:// URLs follow the first one)")
        }
        let scalars = Array(text.unicodeScalars)
        for index in scalars.indices {
            let next = index + 1 < scalars.count ? scalars[index + 1] : nil
            switch (scalars[index], next) {
            case (":", "="):
                let name = String(String.UnicodeScalarView(scalars[..<index]))
                let json = String(String.UnicodeScalarView(scalars[(index + 2)...]))
                try checkName(name, in: text)
                do {
                    _ = try JSON(parsing: json)
                } catch {
                    throw UsageError("item '\(text)': \(name):= needs JSON: \(error.message)")
                }
                return .rawField(name: name, json: json)
            case ("=", "="):
                let name = String(String.UnicodeScalarView(scalars[..<index]))
                try checkName(name, in: text)
                return .query(name: name, value: String(String.UnicodeScalarView(scalars[(index + 2)...])))
            case ("=", _):
                let name = String(String.UnicodeScalarView(scalars[..<index]))
                try checkName(name, in: text)
                return .field(name: name, value: String(String.UnicodeScalarView(scalars[(index + 1)...])))
            case (":", _):
                return .header(try HeaderField.parse(text))
            default:
                continue
            }
        }
        throw UsageError(
            "unexpected argument '\(text)' (expected [METHOD] URL, then items NAME=VALUE, NAME:=JSON, "
                + "NAME==VALUE or Header:value)")
    }

    private static func checkName(_ name: String, in text: String) throws(UsageError) {
        if name.isEmpty { throw UsageError("item '\(text)' has no name") }
    }

    /// Whether the item goes into the JSON body.
    var isJSONField: Bool {
        switch self {
        case .field, .rawField: true
        case .query, .header: false
        }
    }

    /// The header of a `Header:value` item.
    var header: HeaderField? {
        if case .header(let header) = self { return header }
        return nil
    }

    /// The JSON object of the body items, in the order given (a later item of the same name wins).
    static func jsonObject(_ items: [RequestItem]) -> String {
        var members: [(String, String)] = []
        for item in items {
            let member: (String, String)
            switch item {
            case .field(let name, let value): member = (name, quoted(value))
            case .rawField(let name, let json): member = (name, json)
            case .query, .header: continue
            }
            if let index = members.firstIndex(where: { $0.0 == member.0 }) { members[index] = member } else { members.append(member) }
        }
        return "{" + members.map { "\(quoted($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    /// `url` with the `name==value` items added to its query.
    static func addingQuery(_ items: [RequestItem], to url: URL) throws(UsageError) -> URL {
        let query = items.compactMap { item -> URLQueryItem? in
            if case .query(let name, let value) = item { return URLQueryItem(name: name, value: value) }
            return nil
        }
        guard !query.isEmpty else { return url }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        components.queryItems = (components.queryItems ?? []) + query
        guard let result = components.url else { throw UsageError("the query items make the URL invalid") }
        return result
    }

    /// `text` as a JSON string literal, written by Courier's JSON writer.
    static func quoted(_ text: String) -> String {
        JSON.string(text).description
    }
}
