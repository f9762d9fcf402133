import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Shared by the three bench executables: command line, timing, the JSON result line, the
// Decodable model of the 64 KiB body, and the nginx "gate" used by the dedupe workload.
//
// Command line (every executable):
//   <workload> --client NAME [--url URL] [--n N] [--c C] [--out PATH] [--warmup W]
//              [--gate-pid PID] [--store DIR] [--expect-bytes B]
// Workloads: seq | conc | dlmem | dldisk | json | dedupe | resume
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
            default: fail("unknown option \(key)")
            }
        }
        if warmup < 0 {
            // A small in-process warm-up so that connection set-up is not timed; none for the
            // single-transfer workloads.
            switch workload {
            case "seq", "conc", "json": warmup = max(c, min(100, n / 50))
            default: warmup = 0
            }
        }
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
