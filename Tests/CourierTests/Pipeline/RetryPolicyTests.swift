import CourierSupport
import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking

extension Pipeline {
    /// `RetryPolicy`'s decisions, without a network.
    @Suite("Pipeline: RetryPolicy rules") struct RetryPolicyRuleTests {
        private func validationError(_ code: Int) -> CourierError {
            CourierError(.validationFailed, "status \(code)", responseCode: code)
        }

        @Test func defaults() {
            let policy = RetryPolicy()
            #expect(policy.retryLimit == 2)
            #expect(policy.exponentialBackoffBase == 2)
            #expect(policy.exponentialBackoffScale == 0.5)
            #expect(policy.jitter)
            #expect(policy.retryableHTTPMethods == [.get, .head, .put, .delete, .options, .trace, .query])
            #expect(policy.retryableHTTPStatusCodes == [408, 429, 500, 502, 503, 504])
            #expect(policy.retryableErrorKinds == [.timedOut, .connectionLost, .cannotConnect, .cannotFindHost])
            #expect(policy.maximumRetryAfter == .seconds(60))
            let viaStaticMember: any RequestInterceptor = .retryPolicy
            #expect((viaStaticMember as? RetryPolicy)?.retryLimit == 2)
            let custom: any RequestInterceptor = .retryPolicy(retryLimit: 5, jitter: false)
            #expect((custom as? RetryPolicy)?.retryLimit == 5)
        }

        @Test func whatIsRetried() {
            let policy = RetryPolicy()
            for code in [408, 429, 500, 502, 503, 504] {
                #expect(policy.shouldRetry(method: .get, error: validationError(code)), "status \(code)")
            }
            for code in [400, 401, 403, 404, 409, 501] {
                #expect(!policy.shouldRetry(method: .get, error: validationError(code)), "status \(code)")
            }
            for kind: CourierError.Kind in [.timedOut, .connectionLost, .cannotConnect, .cannotFindHost] {
                #expect(policy.shouldRetry(method: .put, error: CourierError(kind, "transient")), "\(kind)")
            }
            for kind: CourierError.Kind in [
                .secureConnectionFailed, .invalidURL, .encodingFailed, .adaptationFailed,
                .serializationFailed, .tooManyRedirects, .fileSystem,
            ] {
                #expect(!policy.shouldRetry(method: .get, error: CourierError(kind, "permanent")), "\(kind)")
            }
            // A status code only counts when it is the reason for the failure.
            #expect(!policy.shouldRetry(method: .get, error: CourierError(.serializationFailed, "bad JSON", responseCode: 503)))
        }

        @Test func neverAfterACancelAndNeverANonIdempotentMethodByDefault() {
            let policy = RetryPolicy()
            #expect(!policy.shouldRetry(method: .get, error: CourierError(.cancelled, "cancelled")))
            #expect(!policy.shouldRetry(method: .get, error: CourierError(.cancelled, "cancelled", responseCode: 503)))
            #expect(!policy.shouldRetry(method: .post, error: validationError(503)))
            #expect(!policy.shouldRetry(method: .patch, error: CourierError(.connectionLost, "lost")))
            #expect(!policy.shouldRetry(method: nil, error: validationError(503)))
            let allowingPost = RetryPolicy(retryableHTTPMethods: [.post])
            #expect(allowingPost.shouldRetry(method: .post, error: validationError(503)))
            #expect(!allowingPost.shouldRetry(method: .post, error: CourierError(.cancelled, "cancelled")))
        }

        @Test func backoffFollowsBaseAndScale() {
            let standard = RetryPolicy(jitter: false)
            #expect((0..<4).map(standard.backoffDelay(retryCount:)) == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4)])
            let custom = RetryPolicy(exponentialBackoffBase: 3, exponentialBackoffScale: 0.25, jitter: false)
            #expect((0..<3).map(custom.backoffDelay(retryCount:)) == [.milliseconds(250), .milliseconds(750), .milliseconds(2250)])
            // Huge exponents are capped instead of overflowing `Duration`.
            #expect(custom.backoffDelay(retryCount: 10_000) > .seconds(86_400))
        }

        @Test func fullJitterStaysWithinTheBackoff() {
            var policy = RetryPolicy(jitter: true)
            let units = Locked([0.0, 0.5, 1.0])
            policy.randomUnit = { units.withLock { $0.removeFirst() } }
            #expect((0..<3).map { _ in policy.backoffDelay(retryCount: 1) } == [.zero, .milliseconds(500), .seconds(1)])

            let random = RetryPolicy(jitter: true)
            let draws = (0..<200).map { _ in random.backoffDelay(retryCount: 2) }
            #expect(draws.allSatisfy { $0 >= .zero && $0 <= .seconds(2) })
            #expect(Set(draws).count > 1)
        }

        @Test func retryAfterOverridesBackoffAndIsCapped() throws {
            var policy = RetryPolicy(jitter: true, maximumRetryAfter: .seconds(60))
            let now = Date(timeIntervalSince1970: 1_700_000_000)
            policy.now = { now }
            func response(_ headers: [String: String]) throws -> HTTPURLResponse {
                try #require(HTTPURLResponse(url: URL(fileURLWithPath: "/"), statusCode: 503, httpVersion: "HTTP/1.1", headerFields: headers))
            }
            #expect(policy.retryAfterDelay(of: try response(["Retry-After": "7"])) == .seconds(7))
            #expect(policy.retryAfterDelay(of: try response(["Retry-After": "3600"])) == .seconds(60))
            #expect(policy.retryAfterDelay(of: try response(["Retry-After": "99999999999999999999999"])) == .seconds(60))
            let inFortyFive = HTTPDate.format(now.addingTimeInterval(45))
            #expect(policy.retryAfterDelay(of: try response(["Retry-After": inFortyFive])) == .seconds(45))
            let past = HTTPDate.format(now.addingTimeInterval(-45))
            #expect(policy.retryAfterDelay(of: try response(["Retry-After": past])) == .zero)
            // The server's own Date header is the reference when present, whatever the local clock says.
            let serverNow = now.addingTimeInterval(-3600)
            let dated = try response(["Date": HTTPDate.format(serverNow), "Retry-After": HTTPDate.format(serverNow.addingTimeInterval(20))])
            #expect(policy.retryAfterDelay(of: dated) == .seconds(20))
            #expect(policy.retryAfterDelay(of: try response(["Retry-After": "soon"])) == nil)
            #expect(policy.retryAfterDelay(of: try response([:])) == nil)
            #expect(policy.retryAfterDelay(of: nil) == nil)
        }
    }

    /// `Retry-After` and HTTP-date parsing (RFC 9110 §5.6.7, §10.2.3).
    @Suite("Pipeline: Retry-After") struct RetryAfterTests {
        private let now = Date(timeIntervalSince1970: 1_700_000_000)  // 2023-11-14

        @Test(arguments: [
            ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777.0),
            ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777.0),
            ("Sun Nov  6 08:49:37 1994", 784_111_777.0),
            ("Thu, 01 Jan 1970 00:00:00 GMT", 0.0),
            ("Tue, 29 Feb 2000 23:59:59 GMT", 951_868_799.0),
            ("Wed, 31 Dec 2042 12:00:00 GMT", 2_303_640_000.0),
        ])
        func parsesTheThreeDateForms(text: String, seconds: Double) {
            #expect(HTTPDate.parse(text, now: now)?.timeIntervalSince1970 == seconds)
        }

        @Test(arguments: [
            "", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun Nov 6 08:49 1994", "1994-11-06T08:49:37Z", "-5", "1.5",
        ])
        func rejectsAnythingElse(text: String) {
            #expect(RetryAfter(text, now: now) == nil)
        }

        @Test func twoDigitYearsPreferThePast() {
            // From 2023, "42" would be 2042 (19 years ahead) and "94" would be 2094 (more than 50): 1994.
            #expect(HTTPDate.parse("Wednesday, 31-Dec-42 12:00:00 GMT", now: now)?.timeIntervalSince1970 == 2_303_640_000)
            #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: now)?.timeIntervalSince1970 == 784_111_777)
        }

        @Test func secondsForm() {
            #expect(RetryAfter("120", now: now) == .seconds(120))
            #expect(RetryAfter(" 0 ", now: now) == .seconds(0))
            #expect(RetryAfter("120", now: now)?.delay(from: now) == .seconds(120))
        }

        @Test func formatRoundTrips() {
            for seconds in [0.0, 784_111_777, 951_868_799, 1_700_000_000, 4_102_444_800] {
                let date = Date(timeIntervalSince1970: seconds)
                #expect(HTTPDate.parse(HTTPDate.format(date), now: now) == date)
            }
            #expect(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        }
    }
}
