import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `-z/--time-cond`: only a resource modified since a date (or, with `-`, not modified since):
/// `If-Modified-Since` or `If-Unmodified-Since` from a date or a file's time. A server that ignores
/// it is checked against its `Last-Modified`, as curl does.
struct TimeCondition: Equatable, Sendable {
    /// The date.
    let date: Date
    /// `-z -DATE`: the resource must not have been modified since.
    let before: Bool

    /// Reads `text`: an HTTP date (or any form the cookie-date rules read), or the name of a file
    /// whose modification time is the date; a leading `-` asks for `before`.
    init(_ text: String) throws(UsageError) {
        before = text.hasPrefix("-")
        let rest = String(before ? text.dropFirst() : Substring(text))
        if let attributes = try? FileManager.default.attributesOfItem(atPath: rest), let modified = attributes[.modificationDate] as? Date {
            date = modified
        } else if let parsed = CookieDate.parse(rest) {
            date = parsed
        } else {
            throw UsageError("-z/--time-cond: '\(rest)' is neither a date (e.g. 'Wed, 09 Jun 2021 10:18:14 GMT') nor a file")
        }
    }

    /// The request header.
    var header: HeaderField {
        HeaderField(name: before ? "If-Unmodified-Since" : "If-Modified-Since", value: Self.httpDate(date))
    }

    /// Whether a 200 `response` shows the condition is not met (its `Last-Modified` says so).
    func isUnmet(by response: HTTPURLResponse) -> Bool {
        guard response.statusCode == 200, let text = response.value(forHTTPHeaderField: "Last-Modified"),
            let modified = CookieDate.parse(text)
        else { return false }
        return before ? modified > date : modified <= date
    }

    /// `Wed, 09 Jun 2021 10:18:14 GMT`.
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
