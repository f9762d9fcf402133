import CourierSupport
import Foundation
import Testing
@testable import Courier

/// Shared clock and builders for the HTTP cache rule tables: every time is an offset in seconds
/// from `RuleClock.origin`, so no test reads the real clock.
enum RuleClock {
    /// 2025-06-15T15:06:40Z, a whole second.
    static let origin = Date(timeIntervalSince1970: 1_750_000_000)

    /// The instant `seconds` after the origin.
    static func at(_ seconds: TimeInterval) -> Date { origin.addingTimeInterval(seconds) }

    /// The IMF-fixdate of the instant `seconds` after the origin.
    static func date(_ seconds: TimeInterval) -> String { HTTPDate.format(at(seconds)) }
}

/// A stored response as a table row describes it: status, headers and when it was requested and
/// received (offsets from the origin); by default `Date` is the origin and both times are 0.
struct StoredRow: Sendable {
    var status = 200
    var headers: HTTPHeaders
    var requested: TimeInterval = 0
    var received: TimeInterval = 0
    var vary: [String: String]? = nil
    var authorized = false

    init(
        status: Int = 200, _ headers: HTTPHeaders = [:], dated: Bool = true, requested: TimeInterval = 0,
        received: TimeInterval = 0, vary: [String: String]? = nil, authorized: Bool = false
    ) {
        self.status = status
        var headers = headers
        if dated, !headers.contains("Date") { headers.add(name: "Date", value: RuleClock.date(0)) }
        self.headers = headers
        self.requested = requested
        self.received = received
        self.vary = vary
        self.authorized = authorized
    }

    var head: CacheEntryHead {
        CacheEntryHead(
            statusCode: status, headers: headers, requestTime: RuleClock.at(requested),
            responseTime: RuleClock.at(received), varyingRequestHeaders: vary, requestHadAuthorization: authorized)
    }
}

extension CacheControl {
    /// Directives built by a closure, for expected values in tables.
    static func with(_ build: (inout CacheControl) -> Void) -> CacheControl {
        var directives = CacheControl()
        build(&directives)
        return directives
    }
}
