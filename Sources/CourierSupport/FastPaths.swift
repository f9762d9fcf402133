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
/// - a WebSocket consumer reads on its own thread while messages come quickly (`WebSocketInlineWait`).
///
/// Each is an optimisation only, with the same results either way. With the switch off, the drains
/// that transport events start run on the global queue and the awaiting task waits for the result,
/// a request is sent from the curl loop's thread, libcurl reads the CA files itself, responses and
/// dates are built and parsed the general way, and a WebSocket's poller thread reads for its
/// consumer. Not behind the switch: a call on a request whose executor is idle (`resume()`,
/// `cancel()`, a chained call) runs on the caller's thread either way, and so does the rest of
/// docs/thread-map.md's "Other inline tricks" (a cache hit is replayed inside the routing drain).
/// On by default; `COURIER_FAST_PATHS=0` in the environment turns the tricks above off for the
/// process (`.ci/run` runs the test suite both ways).
package enum FastPaths {
    /// Whether the tricks are on; read once per process.
    package static let enabled: Bool = ProcessInfo.processInfo.environment["COURIER_FAST_PATHS"] != "0"
}
