import Foundation

/// Parses the three HTTP-date forms of RFC 9110 §5.6.7, always in GMT, without `DateFormatter`
/// (which is slow to create and locale-sensitive).
package enum HTTPDate {
    /// The longest interval a parsed date is turned into (about a century).
    package static let maximumInterval: TimeInterval = 100 * 366 * 86_400

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let shortWeekdays: Set<String> = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longWeekdays: Set<String> = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    /// Parses `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate), `Sunday, 06-Nov-94 08:49:37 GMT`
    /// (RFC 850) or `Sun Nov  6 08:49:37 1994` (asctime); `nil` for anything else.
    package static func parse(_ string: String, now: Date) -> Date? {
        if FastPaths.isOn(.bytes), let date = canonicalIMFFixdate(string) { return date }
        return parseAnyForm(string, now: now)
    }

    /// ``parse(_:now:)`` without its speed trick.
    package static func parseAnyForm(_ string: String, now: Date) -> Date? {
        let tokens = string.split(whereSeparator: { $0 == " " || $0 == "\t" })
        switch tokens.count {
        case 6: return imfFixdate(tokens)
        case 4: return rfc850(tokens, now: now)
        case 5: return asctime(tokens)
        default: return nil
        }
    }

    /// `Sun,` `06` `Nov` `1994` `08:49:37` `GMT`.
    private static func imfFixdate(_ tokens: [Substring]) -> Date? {
        guard tokens[0].hasSuffix(","), shortWeekdays.contains(tokens[0].dropLast().lowercased()),
            tokens[5] == "GMT", tokens[1].count == 2, tokens[3].count == 4,
            let day = Int(tokens[1]), let month = month(tokens[2]), let year = Int(tokens[3])
        else { return nil }
        return make(year: year, month: month, day: day, time: tokens[4])
    }

    /// A speed trick (``FastPaths``): the form servers send, `Sun, 06 Nov 1994 08:49:37 GMT` with
    /// single spaces and digits only, read byte by byte; `nil` for anything else, which the
    /// general parser then reads. Whatever it accepts, the general parser reads the same.
    package static func canonicalIMFFixdate(_ string: String) -> Date? {
        var string = string
        return string.withUTF8 { bytes -> Date? in
            guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[25] == UInt8(ascii: " "),
                bytes[26] == UInt8(ascii: "G"), bytes[27] == UInt8(ascii: "M"), bytes[28] == UInt8(ascii: "T"),
                bytes[4] == UInt8(ascii: " "), bytes[7] == UInt8(ascii: " "), bytes[11] == UInt8(ascii: " "), bytes[16] == UInt8(ascii: " "),
                bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":")
            else { return nil }
            /// The lower-cased three letters at `offset`, as one number.
            func word(at offset: Int) -> UInt32 {
                (UInt32(bytes[offset] | 0x20) << 16) | (UInt32(bytes[offset + 1] | 0x20) << 8) | UInt32(bytes[offset + 2] | 0x20)
            }
            /// The decimal number of `count` digits at `offset`, or nil.
            func number(at offset: Int, _ count: Int) -> Int? {
                var value = 0
                for byte in bytes[offset..<(offset + count)] {
                    guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                    value = value * 10 + Int(byte - UInt8(ascii: "0"))
                }
                return value
            }
            guard Self.packedWeekdays.contains(word(at: 0)),
                let month = Self.packedMonths.firstIndex(of: word(at: 8)).map({ $0 + 1 }),
                let day = number(at: 5, 2), let year = number(at: 12, 4),
                let hour = number(at: 17, 2), let minute = number(at: 20, 2), let second = number(at: 23, 2)
            else { return nil }
            return make(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        }
    }

    /// The short weekday and month names, lower-cased, three letters packed in one number (as
    /// ``canonicalIMFFixdate(_:)`` packs them; `| 0x20` maps only letters onto these).
    private static let packedWeekdays: [UInt32] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"].map(packed)
    private static let packedMonths: [UInt32] = months.map(packed)

    private static func packed(_ name: String) -> UInt32 {
        name.utf8.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// `Sunday,` `06-Nov-94` `08:49:37` `GMT`.
    private static func rfc850(_ tokens: [Substring], now: Date) -> Date? {
        let parts = tokens[1].split(separator: "-", omittingEmptySubsequences: false)
        guard tokens[0].hasSuffix(","), longWeekdays.contains(tokens[0].dropLast().lowercased()),
            tokens[3] == "GMT", parts.count == 3, parts[0].count == 2, parts[2].count == 2,
            let day = Int(parts[0]), let month = month(parts[1]), let shortYear = Int(parts[2])
        else { return nil }
        // RFC 9110: a two-digit year more than 50 years in the future means the most recent past
        // year with the same last two digits.
        let currentYear = civil(fromDays: Int((now.timeIntervalSince1970 / 86_400).rounded(.down))).year
        var year = currentYear - currentYear % 100 + shortYear
        if year > currentYear + 50 { year -= 100 }
        return make(year: year, month: month, day: day, time: tokens[2])
    }

    /// `Sun` `Nov` `6` `08:49:37` `1994`.
    private static func asctime(_ tokens: [Substring]) -> Date? {
        guard shortWeekdays.contains(tokens[0].lowercased()), let month = month(tokens[1]),
            (1...2).contains(tokens[2].count), let day = Int(tokens[2]),
            tokens[4].count == 4, let year = Int(tokens[4])
        else { return nil }
        return make(year: year, month: month, day: day, time: tokens[3])
    }

    private static func month(_ token: Substring) -> Int? {
        months.firstIndex(of: token.lowercased()).map { $0 + 1 }
    }

    /// Builds the date from its fields and an `HH:MM:SS` token, rejecting out-of-range values.
    private static func make(year: Int, month: Int, day: Int, time: Substring) -> Date? {
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
            let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2])
        else { return nil }
        return make(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// Builds the date from its fields, rejecting out-of-range values.
    private static func make(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date? {
        guard (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second),
            (1...31).contains(day), day <= daysIn(month: month, year: year), (1...9999).contains(year)
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        // A leap second (:60) is read as the minute's last second: `Date` has no leap seconds, and
        // 23:59:60 on 31 December 9999 would otherwise be a year no HTTP-date can write.
        let seconds = min(second, 59)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + seconds))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's civil algorithm).
    package static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of ``daysFromCivil(year:month:day:)``.
    package static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Formats `date` as an IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    package static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        // 1970-01-01 was a Thursday.
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let monthName = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][month - 1]
        let year4 = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(weekday), \(two(day)) \(monthName) \(year4) \(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }
}
