import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Shared by the bench executables: command line, timing, the JSON result line, the
// Decodable model of the 64 KiB body, and the nginx "gate" used by the dedupe workload.
//
// Command line (every executable):
//   <workload> --client NAME [--url URL] [--n N] [--c C] [--out PATH] [--warmup W]
//              [--gate-pid PID] [--store DIR] [--expect-bytes B] [--cacert PEM] [--http auto|1.1|2|3] [--size S]
//              [--urls FILE] [--first-pass N]
// Workloads: seq | conc | dlmem | dldisk | json | dedupe | resume, and over HTTPS (--cacert):
//   h1seq (as seq) | h1conc | h2conc32 | h2conc256 (as conc) | tlscold (one cold wave of c requests)
//   h3seq (as seq) | h3conc32 (as conc): workload N, against hypercorn/aioquic, --http 3, 2 or 1.1
//   sse: one event stream of n events read to its end (bench-courier, bench-ahc-sse)
//   wssmall | wslarge | wspipe: n WebSocket messages of --size bytes echoed over one connection, c in
//   flight; wsslow: n messages of --size bytes flooded by the server, read one per 10 ms (bench-courier,
//   bench-wskit; the URL is bench-ws-server's /echo or /flood)
//   httpcache | httpcache1: n GETs in passes over the --urls list of 1,000 10 KiB files, c (httpcache1:
//   1) at a time (workload M, CacheWorkload.swift); --store is the cache directory where there is one;
//   httpcachewarm | httpcachewarm1: the same against /cachewarm/ (run.py first runs one pass with
//   --first-pass 0 in a process of its own, to fill the store the timed process then starts from)
// Output: exactly one line starting with "{" on stdout (a JSON object); diagnostics on stderr.

public struct Arguments: Sendable {
    public var workload = "seq"
    public var client = ""
    public var url = URL(string: "http://127.0.0.1:18080/small.json")!
    public var n = 5000
    public var c = 1
    public var out = "/tmp/courier-bench.bin"
    public var warmup = -1
    public var gatePID: Int32 = 0
    public var store = "/tmp/courier-bench-store"
    public var expectBytes = -1
    /// The CA certificate (PEM) of the HTTPS workloads; empty for plain HTTP.
    public var cacert = ""
    /// The HTTP version asked for: "auto" (HTTP/2 by ALPN over TLS), "1.1", "2" or "3" (QUIC only).
    public var http = "auto"
    /// The message size of the WebSocket workloads (L), in bytes.
    public var size = 100
    /// Workload M's URL list: one path a line, relative to `url`.
    public var urls = ""
    /// Workload M's number for its first pass, sent as `X-Bench-Pass` (0: the untimed pass that fills
    /// the store for the warm variant).
    public var firstPass = 1

    public init(_ argv: [String] = CommandLine.arguments) {
        var it = argv.dropFirst().makeIterator()
        if let first = it.next() { workload = first }
        while let key = it.next() {
            guard let value = it.next() else { fail("missing value for \(key)") }
            switch key {
            case "--client": client = value
            case "--url": url = URL(string: value)!
            case "--n": n = Int(value)!
            case "--c": c = Int(value)!
            case "--out": out = value
            case "--warmup": warmup = Int(value)!
            case "--gate-pid": gatePID = Int32(value)!
            case "--store": store = value
            case "--expect-bytes": expectBytes = Int(value)!
            case "--cacert": cacert = value
            case "--size": size = Int(value)!
            case "--urls": urls = value
            case "--first-pass": firstPass = Int(value)!
            case "--http":
                guard ["auto", "1.1", "2", "3"].contains(value) else { fail("--http takes auto, 1.1, 2 or 3") }
                http = value
            default: fail("unknown option \(key)")
            }
        }
        if warmup < 0 {
            // A small in-process warm-up so that connection set-up is not timed; none for the
            // single-transfer workloads.
            switch kind {
            case "seq", "conc", "json": warmup = max(c, min(100, n / 50))
            default: warmup = 0
            }
        }
    }

    /// What the workload does: the HTTPS workloads run the plain ones' code over TLS
    /// (h1seq, h3seq → seq; h1conc, h2conc32, h2conc256, h3conc32 → conc); tlscold is a cold wave alone.
    public var kind: String {
        switch workload {
        case "h1seq", "h3seq": "seq"
        case "h1conc", "h2conc32", "h2conc256", "h3conc32": "conc"
        case "tlscold": "cold"
        case "httpcache1", "httpcachewarm", "httpcachewarm1": "httpcache"
        default: workload
        }
    }

    /// Whether the run also reports its cold phase: the first wave of `c` requests (one per worker,
    /// all started at once) from a client created just before, i.e. its first `c` connections over
    /// HTTP/1.1. The HTTPS workloads do; the plain ones keep their warm-up as it was.
    public var measuresColdPhase: Bool { !cacert.isEmpty && ["seq", "conc", "cold"].contains(kind) }
}

/// CPU time (user + system, every thread) this process has used so far, in nanoseconds.
public func cpuTimeNs() -> UInt64 {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    func ns(_ t: timeval) -> UInt64 { UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_usec) * 1000 }
    return ns(usage.ru_utime) + ns(usage.ru_stime)
}

/// The cold phase of a run: a client created at `clockNs`/`cpuNs`, then `c` requests at once (one
/// per worker); wall and CPU time from just before the client was made to the last of them.
public struct ColdPhase: Sendable {
    public let clockNs: UInt64
    public let cpuNs: UInt64
    public init() {
        clockNs = nowNs()
        cpuNs = cpuTimeNs()
    }

    /// Records the phase that ends now into `report.extra`: cold_ms, cold_cpu_ms, cold_requests,
    /// cold_errors; plus the protocol one of its responses came over (notes "protocol").
    public func finish(into report: inout Report, requests: Int, errors: Int, protocolSeen: String?) {
        let wall = nowNs() - clockNs
        let cpu = cpuTimeNs() - cpuNs
        report.extra["cold_ms"] = Double(wall) / 1e6
        report.extra["cold_cpu_ms"] = Double(cpu) / 1e6
        report.extra["cold_requests"] = Double(requests)
        report.extra["cold_errors"] = Double(errors)
        if let protocolSeen { report.notes["protocol"] = protocolSeen }
    }
}

public func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

public func log(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

@inline(__always) public func nowNs() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// `n` requests split over `c` workers: worker `i`'s share.
public func share(_ n: Int, _ c: Int, _ i: Int) -> Int { n / c + (i < n % c ? 1 : 0) }

public func fileSize(_ path: String) -> Int64 {
    var st = stat()
    return stat(path, &st) == 0 ? Int64(st.st_size) : -1
}

/// One run's result, printed as one JSON line; the orchestrator adds peak RSS and CPU time.
public struct Report: Sendable {
    public var client: String
    public var workload: String
    public var n: Int
    public var c: Int
    public var elapsedNs: UInt64 = 0
    public var bytes: Int64 = 0
    public var errors = 0
    public var latenciesNs: [UInt64] = []
    public var extra: [String: Double] = [:]
    public var notes: [String: String] = [:]

    public init(_ args: Arguments, n: Int? = nil) {
        client = args.client
        workload = args.workload
        self.n = n ?? args.n
        c = args.c
    }

    public func emit() {
        let seconds = Double(elapsedNs) / 1e9
        var fields: [String] = [
            "\"client\":\(quote(client))", "\"workload\":\(quote(workload))",
            "\"n\":\(n)", "\"c\":\(c)", "\"seconds\":\(seconds)",
            "\"rps\":\(seconds > 0 ? Double(n) / seconds : 0)", "\"bytes\":\(bytes)",
            "\"mbps\":\(seconds > 0 ? Double(bytes) / 1e6 / seconds : 0)", "\"errors\":\(errors)",
        ]
        if !latenciesNs.isEmpty {
            let sorted = latenciesNs.sorted()
            func percentile(_ p: Double) -> Double {
                let index = min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))
                return Double(sorted[index]) / 1000
            }
            fields += ["\"p50_us\":\(percentile(0.50))", "\"p99_us\":\(percentile(0.99))",
                       "\"max_us\":\(Double(sorted.last!) / 1000)"]
        }
        for (key, value) in extra.sorted(by: { $0.key < $1.key }) { fields.append("\(quote(key)):\(value)") }
        for (key, value) in notes.sorted(by: { $0.key < $1.key }) { fields.append("\(quote(key)):\(quote(value))") }
        print("{" + fields.joined(separator: ",") + "}")
        fflush(nil)
    }

    private func quote(_ s: String) -> String {
        var out = "\""
        for ch in s.unicodeScalars {
            switch ch {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out + "\""
    }
}

/// Model of the 64 KiB body: 852 items plus padding.
public struct Item: Decodable, Sendable {
    public let id: Int
    public let name: String
    public let price: Double
    public let tags: [String]
    public let active: Bool
}

public struct Catalog: Decodable, Sendable {
    public let items: [Item]
    public let pad: String
}

public let expectedItems = 852

/// Holds nginx's worker process (SIGSTOP) while a client issues its requests, so that every
/// request of the dedupe workload is in flight before the first byte comes back: the same
/// "gate" as issue 7's acceptance test, for every client alike.
public struct NginxGate: Sendable {
    public let pid: Int32
    public init(pid: Int32) { self.pid = pid }
    public func close() { if pid > 0 { kill(pid, SIGSTOP) } }
    public func open() { if pid > 0 { kill(pid, SIGCONT) } }
}

/// Polls `condition` every millisecond until it holds or `timeout` passes.
public func waitUntil(timeout: Double = 60, _ condition: () -> Bool) async -> Bool {
    let deadline = nowNs() + UInt64(timeout * 1e9)
    while !condition() {
        if nowNs() > deadline { return false }
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
    return true
}

/// Writes a whole buffer to a file descriptor.
public func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) {
    var offset = 0
    while offset < buffer.count {
        let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            fail("write failed: errno \(errno)")
        }
        offset += written
    }
}
