#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Formats and parses HTTP dates (RFC 9110 §5.6.7): IMF-fixdate, plus the obsolete RFC 850 and
/// asctime forms when parsing.
enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `date` as an IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT` (fractions dropped).
    static func format(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let weekday = weekdays[Int(parts.tm_wday) % 7]
        let month = months[Int(parts.tm_mon) % 12]
        return "\(weekday), \(two(parts.tm_mday)) \(month) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    /// Parses any of the three HTTP date forms; nil if `text` is none of them.
    static func parse(_ text: String) -> Date? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
        if fields.count == 6, fields[5] == "GMT", weekdays.contains(fields[0]),
            let day = Int(fields[1]), let month = months.firstIndex(of: fields[2]), let year = Int(fields[3])
        {
            return makeDate(year: year, month: month, day: day, time: fields[4])
        }
        // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
        if fields.count == 4, fields[3] == "GMT" {
            let dateParts = fields[1].split(separator: "-").map(String.init)
            if dateParts.count == 3, let day = Int(dateParts[0]), let month = months.firstIndex(of: dateParts[1]),
                let shortYear = Int(dateParts[2]), dateParts[2].count == 2
            {
                return makeDate(year: shortYear < 70 ? 2000 + shortYear : 1900 + shortYear, month: month, day: day, time: fields[2])
            }
        }
        // asctime: Sun Nov  6 08:49:37 1994
        if fields.count == 5, weekdays.contains(fields[0]), let month = months.firstIndex(of: fields[1]),
            let day = Int(fields[2]), let year = Int(fields[4])
        {
            return makeDate(year: year, month: month, day: day, time: fields[3])
        }
        return nil
    }

    private static func makeDate(year: Int, month: Int, day: Int, time: String) -> Date? {
        let clock = time.split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, (1...31).contains(day), (0...23).contains(clock[0]),
            (0...59).contains(clock[1]), (0...60).contains(clock[2]), (1900...9999).contains(year)
        else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(clock[0])
        parts.tm_min = Int32(clock[1])
        parts.tm_sec = Int32(clock[2])
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}
