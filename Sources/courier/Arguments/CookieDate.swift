import Foundation

/// The cookie-date algorithm of RFC 6265 §5.1.1, which reads every date format servers send.
enum CookieDate {
    static func parse(_ text: String) -> Date? {
        let delimiters = CharacterSet(charactersIn: "\t !\"#$%&'()*+,-./;<=>?@[\\]^_`{|}~")
        var time: (Int, Int, Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        for token in text.components(separatedBy: delimiters) where !token.isEmpty {
            if time == nil {
                let parts = token.split(separator: ":").map { Int($0.prefix { $0.isNumber }) }
                if parts.count == 3, let h = parts[0], let m = parts[1], let s = parts[2] {
                    time = (h, m, s)
                    continue
                }
            }
            let digits = token.prefix { $0.isNumber }
            if day == nil, (1...2).contains(digits.count), let value = Int(digits) {
                day = value
                continue
            }
            if month == nil, let index = months.firstIndex(of: String(token.prefix(3)).lowercased()) {
                month = index + 1
                continue
            }
            if year == nil, (2...4).contains(digits.count), let value = Int(digits) {
                year = value
            }
        }
        guard let (hour, minute, second) = time, let day, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(day), year >= 1601, hour <= 23, minute <= 59, second <= 59 else { return nil }
        var components = DateComponents()
        (components.year, components.month, components.day) = (year, month, day)
        (components.hour, components.minute, components.second) = (hour, minute, second)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar.date(from: components)
    }
}
