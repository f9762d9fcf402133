import BenchSupport
import Courier
import Foundation

// Workload M (issue 22): 10 passes over 1,000 distinct 10 KiB files, half served fresh for an hour
// (`expires 1h`: `Cache-Control: max-age=3600`, `ETag`, `Last-Modified`), half with
// `Cache-Control: no-cache` (every reuse revalidates: `If-None-Match` → 304).
//   courier-curl+cache   `httpCache = .enabled` on a `ResponseCache(memoryCapacity: 64 MiB,
//                        diskDirectory: --store)`; run.py empties the directory before every run
//   courier-curl         the same session code and store with `httpCache = .disabled`
// Each response's `source` (network, cache, revalidated, stale) is counted; the body is checked.

/// The session of workload M: the usual configuration, with the HTTP cache on for `+cache`.
func makeHTTPCacheSession() -> Session {
    var configuration = makeConfiguration()
    configuration.httpCache = args.client.hasSuffix("+cache") ? .enabled : .disabled
    let store = ResponseCache(memoryCapacity: 64 << 20, diskDirectory: URL(fileURLWithPath: args.store))
    return Session(configuration: configuration, responseCache: store)
}

func sourceName(_ source: ResponseSource) -> String {
    switch source {
    case .network: "network"
    case .cache: "cache"
    case .revalidated: "revalidated"
    case .staleCache: "stale"
    }
}

func httpCacheAPI(_ session: Session) async -> Report {
    let list = CacheBenchList(args)
    return await runCacheWorkload(args, list) { index, pass in
        let response = await session.request(list.urls[index], headers: ["X-Bench-Pass": String(pass)])
            .serializingData().response
        let source = sourceName(response.source)
        guard response.response?.statusCode == 200, let data = response.value else {
            if let error = response.error { log("\(error)") }
            return CacheFetch(ok: false, source: source)
        }
        return CacheFetch(ok: list.check(data, index), source: source)
    }
}
