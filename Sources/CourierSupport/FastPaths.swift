import Foundation

/// The one switch for Courier's speed tricks, most of which do work on the caller's thread instead
/// of handing it to another thread:
///
/// - the task awaiting a response hosts its request's drains, so the response is returned from
///   the thread that handled the transport's events (`RequestExecutor.awaitWork(unlessDone:)`);
/// - a pass of a curl event loop holds the drains its events start and starts them together when
///   the pass ends (`DeliveryBatch`);
/// - a request sent while its curl loop sleeps goes out from the caller's thread, which then waits
///   up to 250 µs for a fast server's answer (`CurlEventLoop.runPassIfIdle()`, `CurlResponseWait`;
///   the wait happens only in such a pass);
/// - a curl transport parses its trusted certificates once into one store that every TLS connection
///   verifies against (`CurlSharedTrust`), instead of handing libcurl the CA files to read;
/// - Courier's HTTP cache shares one `HTTPURLResponse` among replays of a stored response whose head is
///   the same (`HTTPResponseMemo`), reads a canonical IMF-fixdate byte by byte
///   (`HTTPDate.canonicalIMFFixdate(_:)`) and keys a URL already in normal form by itself;
/// - the disk store swaps rewritten heads in and reuses the replaced files (`CacheSpareFiles`),
///   and does not set the modification time of a head it has just written;
/// - a WebSocket consumer reads on its own thread while messages come quickly (`WebSocketInlineWait`);
/// - a curl loop carrying several transfers runs as a batch thread, which does not preempt the
///   thread that woke it (`CurlLoopScheduling`, Linux).
///
/// Each is an optimisation only, with the same results either way. With the switch off, the drains
/// that transport events start run on the global queue and the awaiting task waits for the result,
/// a request is sent from the curl loop's thread, libcurl reads the CA files itself, responses and
/// dates are built and parsed the general way, a WebSocket's poller thread reads for its
/// consumer, and a curl loop's thread stays an ordinary one. Not behind the switch: a call on a
/// request whose executor is idle (`resume()`, `cancel()`, a chained call) runs on the caller's
/// thread either way, and so does the rest of docs/thread-map.md's "Other inline tricks" (a cache
/// hit is replayed inside the routing drain). On by default; `COURIER_FAST_PATHS=0` in the
/// environment turns the tricks above off for the process (`.ci/run` runs the test suite both ways).
///
/// Each trick was weighed on its own against the others (Benchmarks/PROFILES.md, issue 38): the
/// shared trust store, the response memo, the byte-level readers and the disk-store tricks save
/// CPU in every round of the workloads where they act; the host, the delivery batch and the
/// caller's pass were kept with evidence too noisy to decide (the group wins on a quiet machine).
///
/// A measurement knob, not a setting: `COURIER_FAST_PATHS=-batch,-callerpass` (names from
/// `Trick`, each after a `-`, comma separated) turns only those tricks off and leaves the others
/// on, so Benchmarks/run.py (`FAST_PATHS_VARIANTS`) can weigh each trick against the rest in one
/// run. Any other value keeps every trick on.
package enum FastPaths {
    /// One speed trick (or the group of sites that together make one), by its name in
    /// `COURIER_FAST_PATHS`.
    package enum Trick: String, CaseIterable, Sendable {
        /// The awaiting task hosts its request's drains (`RequestExecutor/awaitWork(unlessDone:)`).
        case host
        /// A curl pass holds the drains its events start (`DeliveryBatch`).
        case batch
        /// A lone transfer is sent from the caller's thread, which waits up to 250 µs for the answer
        /// (`CurlEventLoop/runPassIfIdle()`, `CurlResponseWait`).
        case callerpass
        /// One parsed trust store shared by every curl connection (`CurlSharedTrust`).
        case trust
        /// Replays of one stored head share one `HTTPURLResponse` (`HTTPResponseMemo`).
        case memo
        /// Byte-level readers: the canonical IMF-fixdate and a URL already in normal form.
        case bytes
        /// The disk store's spare files, head swaps and skipped modification times.
        case disk
        /// A WebSocket consumer reads on its own thread (`WebSocketInlineWait`).
        case wsinline
        /// A curl loop carrying several transfers runs as a batch thread, which does not preempt
        /// the thread that woke it (`CurlLoopScheduling`; Linux).
        case loopyield
    }

    /// Whether every trick is on (no `COURIER_FAST_PATHS=0`, no trick turned off alone); read once
    /// per process.
    package static let enabled: Bool = disabledTricks.isEmpty

    /// The tricks `COURIER_FAST_PATHS` turns off: all for `0`, the named ones for a `-name` list.
    package static let disabledTricks: Set<Trick> = disabled(by: ProcessInfo.processInfo.environment["COURIER_FAST_PATHS"])

    /// Whether `trick` is on in this process.
    package static func isOn(_ trick: Trick) -> Bool { !disabledTricks.contains(trick) }

    /// The tricks a value of `COURIER_FAST_PATHS` turns off (pure, for tests).
    package static func disabled(by value: String?) -> Set<Trick> {
        guard let value else { return [] }
        if value == "0" { return Set(Trick.allCases) }
        var tricks = Set<Trick>()
        for item in value.split(separator: ",") {
            let name = item.trimmingCharacters(in: .whitespaces)
            guard name.hasPrefix("-"), let trick = Trick(rawValue: String(name.dropFirst())) else { continue }
            tricks.insert(trick)
        }
        return tricks
    }
}
