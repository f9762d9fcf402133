@testable import Courier
import Testing

/// When a pass on a caller's thread waits for the answer it sent: only after fast answers, for
/// twice their smoothed time, and never past the limit.
@Suite("Curl response wait")
struct CurlResponseWaitTests {
    @Test("no wait before any answer was measured")
    func noWaitWithoutAMeasurement() {
        #expect(CurlResponseWait().window == nil)
    }

    @Test("a fast answer allows a wait of twice its time")
    func waitsTwiceTheEstimate() {
        var wait = CurlResponseWait()
        wait.record(timeToFirstByte: .microseconds(60))
        #expect(wait.window == .microseconds(120))
    }

    @Test("answers slower than half the limit never wait")
    func slowServersAreNotWaitedFor() {
        var wait = CurlResponseWait()
        wait.record(timeToFirstByte: .milliseconds(20))
        #expect(wait.window == nil)
        var edge = CurlResponseWait(limit: .microseconds(250))
        edge.record(timeToFirstByte: .microseconds(126))
        #expect(edge.window == nil)
    }

    @Test("one slow answer among fast ones does not stop the waits; a run of slow ones does")
    func theEstimateIsSmoothed() {
        var wait = CurlResponseWait()
        for _ in 0..<4 { wait.record(timeToFirstByte: .microseconds(40)) }
        wait.record(timeToFirstByte: .microseconds(200))
        #expect(wait.estimate == .microseconds(80))
        #expect(wait.window == .microseconds(160))
        for _ in 0..<4 { wait.record(timeToFirstByte: .milliseconds(5)) }
        #expect(wait.window == nil)
    }

    @Test("a zero limit never waits")
    func zeroLimit() {
        var wait = CurlResponseWait(limit: .zero)
        wait.record(timeToFirstByte: .microseconds(1))
        #expect(wait.window == nil)
    }
}
