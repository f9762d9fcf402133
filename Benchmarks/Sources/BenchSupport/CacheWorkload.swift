import Foundation
import Synchronization

// Workload M (`httpcache`, `httpcache1`; issue 22): n GETs over a fixed list of 1,000 distinct
// 10 KiB files (`--urls`: one path a line, relative to `--url`), in passes over the list in the
// same order every pass, `c` workers each taking the next index from one shared counter (so the
// requests go out in the list's order, c at a time). Every request carries `X-Bench-Pass: N`
// (from `--first-pass`, 1 unless run.py fills the store first with a pass 0), which nginx logs, so
// run.py can tell what reached the server after the first pass;
// no cache keys on it (nginx sends no `Vary`). Every body must be 10,240 bytes and start with the
// line `courier cachebench <path>` that run.py wrote into the file; anything else is an error.

/// The URL list of workload M, and what each body must look like.
public struct CacheBenchList: Sendable {
    public static let bodySize = 10_240
    public let urls: [URL]
    /// Each file's first line, as run.py wrote it.
    public let prefixes: [Data]

    public init(_ args: Arguments) {
        guard !args.urls.isEmpty, let text = try? String(contentsOfFile: args.urls, encoding: .utf8) else {
            fail("workload \(args.workload) needs --urls FILE (one path a line)")
        }
        let paths = text.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        var base = args.url.absoluteString
        if !base.hasSuffix("/") { base += "/" }
        urls = paths.map { URL(string: base + $0)! }
        prefixes = paths.map { Data("courier cachebench \($0)\n".utf8) }
        if urls.isEmpty { fail("\(args.urls) lists no paths") }
    }

    /// Whether `body` is the body of the list's `index`th file.
    public func check(_ body: Data, _ index: Int) -> Bool {
        body.count == Self.bodySize && body.starts(with: prefixes[index])
    }

    /// The same for a body held as raw bytes.
    public func check(count: Int, prefix: [UInt8], _ index: Int) -> Bool {
        count == Self.bodySize && prefix.elementsEqual(prefixes[index])
    }
}

/// What one GET of workload M gave: whether the body was right, and where it came from (`source`:
/// Courier's `ResponseSource` as a short word; "network" for clients that cannot tell).
public struct CacheFetch: Sendable {
    public var ok: Bool
    public var source: String
    public init(ok: Bool, source: String = "network") {
        self.ok = ok
        self.source = source
    }
}

private final class CacheRunState: Sendable {
    let next = Atomic<Int>(0)
    /// When the first request of the second pass was taken (0 until then).
    let secondPassNs = Atomic<UInt64>(0)
}

/// Runs workload M: `args.n` GETs in passes over `list`, `args.c` at a time. `fetch(index, pass)` makes
/// one request for `list.urls[index]` (sending `X-Bench-Pass: pass`) and checks its body. No warm-up: the
/// first pass is what fills a cache, and is timed with the rest. The report's extra fields count the
/// responses by source, overall (`src_<source>`) and after the first pass (`later_src_<source>`), and give
/// the first pass's time (`pass1_s`) and the rate of the passes after it (`later_rps`).
public func runCacheWorkload(_ args: Arguments, _ list: CacheBenchList,
                             fetch: @escaping @Sendable (_ index: Int, _ pass: Int) async -> CacheFetch) async -> Report {
    var report = Report(args)
    let state = CacheRunState()
    let total = args.n
    let count = list.urls.count
    let t0 = nowNs()
    let merged = await withTaskGroup(of: (Int, [String: Int], [String: Int]).self) { group in
        for _ in 0..<max(1, args.c) {
            group.addTask {
                var errors = 0
                var sources: [String: Int] = [:]
                var later: [String: Int] = [:]
                while true {
                    let k = state.next.wrappingAdd(1, ordering: .relaxed).oldValue
                    if k >= total { break }
                    if k == count { state.secondPassNs.store(nowNs(), ordering: .relaxed) }
                    let pass = k / count + args.firstPass
                    let result = await fetch(k % count, pass)
                    if !result.ok {
                        errors += 1
                        if errors < 3 { log("wrong or failed response for \(list.urls[k % count].path) (pass \(pass))") }
                    }
                    sources[result.source, default: 0] += 1
                    if pass > 1 { later[result.source, default: 0] += 1 }
                }
                return (errors, sources, later)
            }
        }
        var all = (errors: 0, sources: [String: Int](), later: [String: Int]())
        for await (errors, sources, later) in group {
            all.errors += errors
            all.sources.merge(sources, uniquingKeysWith: +)
            all.later.merge(later, uniquingKeysWith: +)
        }
        return all
    }
    let end = nowNs()
    report.elapsedNs = end - t0
    report.errors = merged.errors
    report.bytes = Int64(total - merged.errors) * Int64(CacheBenchList.bodySize)
    for (source, n) in merged.sources { report.extra["src_\(source)"] = Double(n) }
    for (source, n) in merged.later { report.extra["later_src_\(source)"] = Double(n) }
    let second = state.secondPassNs.load(ordering: .relaxed)
    if second > 0 {
        report.extra["pass1_s"] = Double(second - t0) / 1e9
        report.extra["later_rps"] = Double(total - count) / (Double(end - second) / 1e9)
    }
    report.extra["urls"] = Double(count)
    return report
}
