#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The processor time the calling thread spends, which waiting for a processor on a busy machine
/// does not add to: what a bound on the cost of synchronous work (a parser that must stay linear)
/// measures, so that it holds however loaded the machine is.
public enum ThreadCPUTime {
    /// The calling thread's processor time so far.
    public static var now: Duration {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }

    /// The processor time `body` takes on the calling thread.
    public static func measure(_ body: () throws -> Void) rethrows -> Duration {
        let start = now
        try body()
        return now - start
    }
}
