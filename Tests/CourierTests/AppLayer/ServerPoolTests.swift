import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier

extension AppLayer {
    /// `ServerPool` as a value: thresholds, minimum requests, cool-downs, trials, manual switching.
    @Suite("AppLayer: server pool") struct ServerPoolTests {
        static let primary = ServerPool.Server(name: "primary", baseURL: URL(string: "https://primary.test/api")!)
        static let backup = ServerPool.Server(name: "backup", baseURL: URL(string: "https://backup.test/")!)
        static let third = ServerPool.Server(name: "third", baseURL: URL(string: "https://third.test/")!)
        static let cdn = ServerPool.Server(name: "cdn", baseURL: URL(string: "https://cdn.test/static/")!)
        static let down = CourierError(.cannotConnect, "refused")

        let time = TestInstant()
        let recorder = NoticeRecorder()

        func pool(_ servers: [ServerPool.Server] = [primary, backup], failover: FailoverPolicy) -> ServerPool {
            let time = time
            let pool = ServerPool(servers, auxiliary: [Self.cdn], failover: failover, now: { time.now })
            let recorder = recorder
            pool.addSwitchObserver { notice in
                recorder.session(Session.shared, didNotice: notice)
                return true
            }
            return pool
        }

        func record(_ pool: ServerPool, _ server: ServerPool.Server, failures: Int = 0, successes: Int = 0) {
            let url = server.baseURL.appendingPathComponent("items")
            for _ in 0..<failures { pool.record(url, error: Self.down) }
            for _ in 0..<successes { pool.record(url, error: nil) }
        }

        @Test func itSwitchesOnlyOnceTheRateExceedsTheThresholdAfterTheMinimum() {
            let pool = pool(failover: .errorRate(0.1, minimumRequests: 40))
            record(pool, Self.primary, successes: 36)
            record(pool, Self.primary, failures: 3)
            #expect(pool.current == Self.primary)  // 39 outcomes: below the minimum
            record(pool, Self.primary, failures: 1)
            #expect(pool.current == Self.primary)  // 4 of 40 is 10%: not above the threshold
            record(pool, Self.primary, failures: 1)
            #expect(pool.current == Self.backup)  // 5 of the last 40
            #expect(recorder.switches.count == 1)
            #expect(recorder.switches.first?.message.contains("primary") == true)
            #expect(recorder.switches.first?.message.contains("backup") == true)
        }

        @Test func evenTotalFailureWaitsForTheMinimumRequests() {
            let pool = pool(failover: .errorRate(0.1, minimumRequests: 10))
            record(pool, Self.primary, failures: 9)
            #expect(pool.current == Self.primary)
            record(pool, Self.primary, failures: 1)
            #expect(pool.current == Self.backup)
        }

        @Test func onlyTransportFailuresCount() {
            let pool = pool(failover: .errorRate(0.1, minimumRequests: 5))
            let url = Self.primary.baseURL.appendingPathComponent("x")
            for _ in 0..<10 {
                pool.record(url, error: CourierError(.validationFailed, "500", responseCode: 500))
                pool.record(url, error: CourierError(.cancelled, "cancelled"))
                pool.record(url, error: CourierError(.serverError, "code 1"))
            }
            #expect(pool.current == Self.primary)
            for kind in [CourierError.Kind.timedOut, .connectionLost, .cannotFindHost] {
                pool.record(url, error: CourierError(kind, "down"))
            }
            #expect(pool.current == Self.backup)
        }

        @Test func outcomesOfOtherServersAndHostsDoNotCount() {
            let pool = pool(failover: .errorRate(0.1, minimumRequests: 3))
            record(pool, Self.backup, failures: 5)
            record(pool, Self.cdn, failures: 5)
            for _ in 0..<5 { pool.record(URL(string: "https://elsewhere.test/api/x"), error: Self.down) }
            // Same host, outside the base path.
            for _ in 0..<5 { pool.record(URL(string: "https://primary.test/other"), error: Self.down) }
            #expect(pool.current == Self.primary)
            #expect(recorder.switches.isEmpty)
        }

        @Test func itComesBackAfterTheCoolDownAndStaysWhenTheTrialSucceeds() {
            let pool = pool(failover: .errorRate(0.5, minimumRequests: 4, coolDown: .seconds(30)))
            record(pool, Self.primary, failures: 4)
            #expect(pool.current == Self.backup)
            time.advance(by: .seconds(29))
            #expect(pool.current == Self.backup)
            time.advance(by: .seconds(1))
            #expect(pool.current == Self.primary)
            #expect(recorder.switches.count == 2)
            #expect(recorder.switches.last?.message.contains("cool-down") == true)
            // The trial allows what the threshold allows over the minimum: 2 failures of 4.
            record(pool, Self.primary, failures: 2)
            record(pool, Self.primary, successes: 2)
            #expect(pool.current == Self.primary)
            // After the trial the normal rule judges the last 4 outcomes again.
            record(pool, Self.primary, failures: 2, successes: 1)
            #expect(pool.current == Self.primary)
            record(pool, Self.primary, failures: 1)
            #expect(pool.current == Self.backup)
        }

        @Test func aFailedTrialLeavesAgainWithALongerCoolDown() {
            let pool = pool(failover: .errorRate(0.5, minimumRequests: 4, coolDown: .seconds(30)))
            record(pool, Self.primary, failures: 4)
            time.advance(by: .seconds(30))
            #expect(pool.current == Self.primary)
            record(pool, Self.primary, failures: 2)
            #expect(pool.current == Self.primary)
            record(pool, Self.primary, failures: 1)  // 3 failures: more than 50% of 4 is certain
            #expect(pool.current == Self.backup)
            #expect(recorder.switches.last?.message.contains("trial") == true)
            time.advance(by: .seconds(59))
            #expect(pool.current == Self.backup)
            time.advance(by: .seconds(1))
            #expect(pool.current == Self.primary)
            #expect(recorder.switches.count == 4)
        }

        @Test func aNewServerIsNotLeftBeforeItsOwnMinimum() {
            let pool = pool([Self.primary, Self.backup, Self.third], failover: .errorRate(0.5, minimumRequests: 4))
            record(pool, Self.primary, failures: 4)
            #expect(pool.current == Self.backup)
            // Late failures of requests sent to the primary before the switch do not move the pool.
            record(pool, Self.primary, failures: 10)
            record(pool, Self.backup, failures: 3)
            #expect(pool.current == Self.backup)
            record(pool, Self.backup, failures: 1)
            #expect(pool.current == Self.third)
            // Every other server cools down: the pool stays and judges the third afresh.
            record(pool, Self.third, failures: 4)
            #expect(pool.current == Self.third)
            #expect(recorder.switches.count == 2)
        }

        @Test func manualSwitchingChangesTheServerReturnedTo() {
            let pool = pool([Self.primary, Self.backup, Self.third], failover: .errorRate(0.5, minimumRequests: 2, coolDown: .seconds(10)))
            #expect(pool.switchTo("third"))
            #expect(pool.current == Self.third)
            #expect(pool.preferred == Self.third)
            #expect(!pool.switchTo("nowhere"))
            #expect(!pool.switchTo("cdn"))  // auxiliary servers are never current
            #expect(pool.current == Self.third)
            #expect(pool.switchTo("third"))  // already there: nothing to report
            #expect(recorder.switches.count == 1)
            #expect(recorder.switches.first?.message.contains("by hand") == true)
            record(pool, Self.third, failures: 2)
            #expect(pool.current == Self.primary)
            time.advance(by: .seconds(10))
            #expect(pool.current == Self.third)
        }

        @Test func aManualPoolNeverSwitchesByItself() {
            let pool = pool(failover: .manual)
            record(pool, Self.primary, failures: 1000)
            #expect(pool.current == Self.primary)
            #expect(pool.switchTo("backup"))
            #expect(pool.currentBaseURL == Self.backup.baseURL)
        }

        @Test func urlsOnNamedServers() throws {
            let pool = pool(failover: .manual)
            #expect(try pool.url("img/1.png", on: "cdn").asURL().absoluteString == "https://cdn.test/static/img/1.png")
            #expect(try pool.url("users/1", on: "primary").asURL().absoluteString == "https://primary.test/api/users/1")
            let error = try #require(throws: CourierError.self) { try pool.url("x", on: "missing").asURL() }
            #expect(error.kind == .invalidURL)
            let named = ServerPool([URL(string: "https://a.test/")!, URL(string: "https://b.test/")!])
            #expect(named.current?.name == "https://a.test/")
            #expect(named.switchTo("https://b.test/"))
            #expect(ServerPool([URL]()).current == nil)
        }

        @Test func policiesAreClampedAndDescribed() {
            let policy = FailoverPolicy.errorRate(1.5, minimumRequests: 0, window: 0, coolDown: .seconds(-1))
            #expect(policy.threshold == 1)
            #expect(policy.minimumRequests == 1)
            #expect(policy.window == 1)
            #expect(policy.coolDown == .zero)
            #expect(FailoverPolicy.errorRate(0.1, minimumRequests: 40).description.hasPrefix("errorRate(10% of ≥40"))
            #expect(FailoverPolicy.manual.description == "manual")
        }
    }
}
