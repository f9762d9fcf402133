import Foundation

// RFC 9111 §4.2: freshness lifetime, heuristic freshness, age.
extension HTTPCacheRules {
    /// The stored response's current age in seconds (RFC 9111 §4.2.3):
    ///
    ///     apparent_age          = max(0, response_time − date_value)
    ///     response_delay        = response_time − request_time
    ///     corrected_age_value   = age_value + response_delay
    ///     corrected_initial_age = max(apparent_age, corrected_age_value)
    ///     resident_time         = now − response_time
    ///     current_age           = corrected_initial_age + resident_time
    ///
    /// `date_value` is the `Date` field, or `response_time` when it is missing or invalid;
    /// `age_value` is the `Age` field's first member, 0 when missing or invalid (§5.1: ignored).
    /// A clock that ran backwards (a response time before the request time, `now` before the
    /// response time) counts as no time passing. Never negative; saturates instead of overflowing.
    func currentAge(of entry: CacheEntryHead, now: Date) -> Int {
        let dateValue = Self.dateValue(of: entry)
        let apparentAge = max(0, Self.wholeSeconds(entry.responseTime.timeIntervalSince(dateValue)))
        let responseDelay = max(0, Self.wholeSeconds(entry.responseTime.timeIntervalSince(entry.requestTime)))
        let correctedAgeValue = Self.adding(Self.ageValue(entry.headers) ?? 0, responseDelay)
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = max(0, Self.wholeSeconds(now.timeIntervalSince(entry.responseTime)))
        return Self.adding(correctedInitialAge, residentTime)
    }

    /// The stored response's freshness lifetime in seconds (RFC 9111 §4.2.1), the first of:
    /// `s-maxage` (shared cache only); `max-age`; `Expires` − `date_value` (an invalid `Expires`,
    /// such as `0` or two joined dates, means already expired, §5.3); otherwise a heuristic
    /// (§4.2.2): 10% of `date_value` − `Last-Modified`, for a heuristically cacheable status or a
    /// response marked `public` (or `private`, in a private cache). 0 when none applies.
    func freshnessLifetime(of entry: CacheEntryHead) -> Int {
        freshnessLifetime(of: entry, response: responseDirectives(entry.headers))
    }

    /// ``freshnessLifetime(of:)`` with the entry's `Cache-Control` already parsed.
    func freshnessLifetime(of entry: CacheEntryHead, response: CacheControl) -> Int {
        if isShared, let sharedMaxAge = response.sharedMaxAge { return sharedMaxAge }
        if let maxAge = response.maxAge { return maxAge }
        if entry.headers.contains("Expires") {
            guard let expires = Self.date("Expires", in: entry.headers, reference: entry.responseTime) else { return 0 }
            return max(0, Self.wholeSeconds(expires.timeIntervalSince(Self.dateValue(of: entry))))
        }
        return heuristicFreshnessLifetime(of: entry, response: response)
    }

    /// §4.2.2: 10% of the time since `Last-Modified`, when heuristics are allowed; else 0.
    func heuristicFreshnessLifetime(of entry: CacheEntryHead, response: CacheControl) -> Int {
        let allowed =
            Self.heuristicallyCacheableStatusCodes.contains(entry.statusCode)
            || response.isPublic || (!isShared && response.isPrivate)
        guard allowed, let lastModified = Self.date("Last-Modified", in: entry.headers, reference: entry.responseTime) else { return 0 }
        let sinceModified = Self.wholeSeconds(Self.dateValue(of: entry).timeIntervalSince(lastModified))
        return max(0, sinceModified / 10)
    }

    /// Whether the entry is fresh now: its lifetime exceeds its current age (§4.2).
    func isFresh(_ entry: CacheEntryHead, now: Date) -> Bool {
        freshnessLifetime(of: entry) > currentAge(of: entry, now: now)
    }

    /// §4.2.3's `date_value`: the `Date` field, or the response time when it is missing or invalid.
    static func dateValue(of entry: CacheEntryHead) -> Date {
        date("Date", in: entry.headers, reference: entry.responseTime) ?? entry.responseTime
    }

    /// The `Age` field (§5.1): its first list member as delta-seconds; `nil` when absent or invalid.
    static func ageValue(_ headers: HTTPHeaders) -> Int? {
        guard let value = headers["Age"] else { return nil }
        let first = value.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return CacheControl.deltaSeconds(String(first).trimmedASCII.utf8)
    }
}
