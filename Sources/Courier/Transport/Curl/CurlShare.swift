import CCurl
import CourierLocking

/// One libcurl share handle per transport: TLS sessions and DNS answers are shared by every easy
/// handle of every event loop, so a second connection to a host resumes the first one's TLS
/// session (an abbreviated handshake) instead of running a full one.
///
/// `@unchecked Sendable`: the share handle is used from every loop thread at once, which libcurl
/// allows because ccurl.c gives it a mutex per kind of shared data (those mutexes guard it).
final class CurlShare: @unchecked Sendable {
    /// The share handle.
    let pointer: OpaquePointer

    /// A new share handle; `nil` when libcurl cannot make one (transfers then share nothing).
    init?() {
        guard let pointer = ccurl_share_create() else { return nil }
        self.pointer = pointer
    }

    deinit {
        // Every easy handle using it is gone by now (each loop cleans its handles up before it
        // ends); if one were not, libcurl keeps the share and ccurl keeps its locks alive.
        _ = ccurl_share_destroy(pointer)
    }
}

/// Which event loop an HTTP/2 origin's transfers go to, so that they multiplex on one connection
/// instead of spreading over the loops (each loop has a connection pool of its own).
///
/// An origin that may speak HTTP/2 (HTTPS, or prior knowledge) gets a home loop at its first
/// transfer; once a response shows that it speaks HTTP/1.x, its transfers spread over the loops
/// again as HTTP/1.1 transfers do, and no longer wait for a connection to multiplex on.
final class CurlMultiplexRouting: Sendable {
    /// What is known about one origin.
    struct Origin: Sendable, Equatable {
        /// The loop its transfers go to.
        var home: Int?
        /// Whether a response showed it speaks HTTP/1.x.
        var speaksHTTP1 = false
    }

    /// At most this many origins are remembered; past it the memory starts afresh.
    static let capacity = 1024

    // Guards the table of origins; held only for a lookup or an update.
    private let origins = Locked<[String: Origin]>([:])

    /// What is known about `origin`.
    func lookup(_ origin: String) -> Origin {
        origins.withLock { $0[origin] } ?? Origin()
    }

    /// Makes `loop` the home of `origin`.
    func assign(_ origin: String, to loop: Int) {
        origins.withLock { table in
            if table.count >= Self.capacity, table[origin] == nil { table.removeAll() }
            table[origin, default: Origin()].home = loop
        }
    }

    /// Records the HTTP version a response from `origin` came over.
    func learn(_ origin: String, httpVersion: String) {
        let http1 = httpVersion.hasPrefix("HTTP/1")
        origins.withLock { table in
            guard table[origin]?.speaksHTTP1 != http1 else { return }
            if table.count >= Self.capacity, table[origin] == nil { table.removeAll() }
            table[origin, default: Origin()].speaksHTTP1 = http1
        }
    }
}
