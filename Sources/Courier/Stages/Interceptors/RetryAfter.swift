import CourierSupport
import Foundation

/// A parsed `Retry-After` field value (RFC 9110 §10.2.3): a number of seconds or an HTTP-date.
enum RetryAfter: Equatable {
    /// `Retry-After: 120`.
    case seconds(Int)
    /// `Retry-After: Wed, 21 Oct 2015 07:28:00 GMT` (or one of the two obsolete date forms).
    case date(Date)

    /// Parses a field value; `nil` when it is neither form.
    ///
    /// `now` decides the century of two-digit years in the obsolete RFC 850 form.
    init?(_ value: String, now: Date) {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // Absurdly long digit strings still mean "a long time"; the caller caps them.
            self = .seconds(Int(trimmed) ?? .max)
        } else if let date = HTTPDate.parse(trimmed, now: now) {
            self = .date(date)
        } else {
            return nil
        }
    }

    /// How long to wait, measured from `reference` for the date form; never negative.
    func delay(from reference: Date) -> Duration {
        switch self {
        case .seconds(let seconds):
            return .seconds(seconds)
        case .date(let date):
            let interval = date.timeIntervalSince(reference)
            guard interval > 0 else { return .zero }
            // Clamp before converting: a date centuries ahead must not overflow `Duration`.
            return .seconds(min(interval, HTTPDate.maximumInterval))
        }
    }
}
