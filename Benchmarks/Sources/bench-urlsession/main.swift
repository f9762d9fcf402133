import BenchSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Raw URLSession (FoundationNetworking on Linux, on the system libcurl), async/await style:
// `data(for:)` and `download(for:)`. Configured like Courier's URLSession transport configures
// it: ephemeral, no URL cache, no cookies, connections per host = concurrency (at least 6).
// The resume workload uses a download task with a delegate, the only way to ask for resume data.
// Workload M (`httpcache`, `httpcache1`): `urlsession` as above (no cache), and `urlsession+cache` with a
// `URLCache` (64 MiB memory, 256 MiB disk in --store) and `.useProtocolCachePolicy`, as an app would turn it on.

let args = Arguments()
let urlCacheOn = args.kind == "httpcache" && args.client.hasSuffix("+cache")
let urlCache: URLCache? = urlCacheOn
    ? URLCache(memoryCapacity: 64 << 20, diskCapacity: 256 << 20, diskPath: args.store) : nil

func makeConfiguration() -> URLSessionConfiguration {
    let config = URLSessionConfiguration.ephemeral
    config.httpMaximumConnectionsPerHost = max(args.c, 6)
    config.urlCache = nil
    config.requestCachePolicy = .reloadIgnoringLocalCacheData
    config.httpCookieAcceptPolicy = .never
    config.httpShouldSetCookies = false
    config.httpCookieStorage = nil
    config.timeoutIntervalForRequest = 600
    config.timeoutIntervalForResource = 600
    if let urlCache {
        config.urlCache = urlCache
        config.requestCachePolicy = .useProtocolCachePolicy
    }
    return config
}

let session = URLSession(configuration: makeConfiguration())
let request: URLRequest = {
    var request = URLRequest(url: args.url)
    request.cachePolicy = .reloadIgnoringLocalCacheData
    return request
}()

struct BadStatus: Error { let code: Int }

@inline(__always)
func fetch() async throws -> Data {
    let (data, response) = try await session.data(for: request)
    guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
        throw BadStatus(code: (response as? HTTPURLResponse)?.statusCode ?? -1)
    }
    return data
}

func sequential() async -> Report {
    for _ in 0..<args.warmup { _ = try? await fetch() }
    var report = Report(args)
    report.latenciesNs.reserveCapacity(args.n)
    let t0 = nowNs()
    for _ in 0..<args.n {
        let start = nowNs()
        do { report.bytes += Int64(try await fetch().count) } catch { report.errors += 1 }
        report.latenciesNs.append(nowNs() - start)
    }
    report.elapsedNs = nowNs() - t0
    return report
}

func concurrent(n: Int, decode: Bool) async -> (errors: Int, bytes: Int64) {
    await withTaskGroup(of: (Int, Int64).self) { group in
        for worker in 0..<args.c {
            group.addTask {
                var errors = 0
                var bytes: Int64 = 0
                let decoder = JSONDecoder()
                for _ in 0..<share(n, args.c, worker) {
                    do {
                        let data = try await fetch()
                        bytes += Int64(data.count)
                        if decode, try decoder.decode(Catalog.self, from: data).items.count != expectedItems { errors += 1 }
                    } catch { errors += 1 }
                }
                return (errors, bytes)
            }
        }
        var total = (errors: 0, bytes: Int64(0))
        for await (errors, bytes) in group { total.errors += errors; total.bytes += bytes }
        return total
    }
}

func concurrentReport(decode: Bool) async -> Report {
    _ = await concurrent(n: args.warmup, decode: decode)
    var report = Report(args)
    let t0 = nowNs()
    (report.errors, report.bytes) = await concurrent(n: args.n, decode: decode)
    report.elapsedNs = nowNs() - t0
    return report
}

func toMemory() async -> Report {
    var report = Report(args, n: 1)
    let t0 = nowNs()
    do { report.bytes = Int64(try await fetch().count) } catch { report.errors = 1; log("\(error)") }
    report.elapsedNs = nowNs() - t0
    return report
}

func toDisk() async -> Report {
    unlink(args.out)
    var report = Report(args, n: 1)
    let t0 = nowNs()
    do {
        let (temporary, response) = try await session.download(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw BadStatus(code: -1) }
        try FileManager.default.moveItem(at: temporary, to: URL(fileURLWithPath: args.out))
    } catch { report.errors = 1; log("\(error)") }
    report.elapsedNs = nowNs() - t0
    report.bytes = fileSize(args.out)
    return report
}

/// n identical GETs at once (all issued behind the nginx gate), no deduplication.
func identical() async -> Report {
    var report = Report(args)
    let gate = NginxGate(pid: args.gatePID)
    gate.close()
    let t0 = nowNs()
    let results = await withTaskGroup(of: Data?.self) { group in
        for _ in 0..<args.n { group.addTask { try? await fetch() } }
        gate.open()
        var all: [Data?] = []
        for await data in group { all.append(data) }
        return all
    }
    report.elapsedNs = nowNs() - t0
    let first = results.first ?? nil
    for data in results {
        if let data, data == first { report.bytes += Int64(data.count) } else { report.errors += 1 }
    }
    return report
}

// MARK: Resume: a download task cancelled with `cancel(byProducingResumeData:)` at 50%

final class ResumeDelegate: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    let lock = NSLock()
    var written: Int64 = 0
    var finished: CheckedContinuation<URL?, Never>?
    let keep: String

    init(keep: String) { self.keep = keep }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        lock.lock(); written = totalBytesWritten; lock.unlock()
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        unlink(keep)
        try? FileManager.default.moveItem(at: location, to: URL(fileURLWithPath: keep))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        lock.lock(); let continuation = finished; finished = nil; lock.unlock()
        continuation?.resume(returning: error == nil ? URL(fileURLWithPath: keep) : nil)
    }

    var bytesWritten: Int64 { lock.lock(); defer { lock.unlock() }; return written }
}

func resume() async -> Report {
    var report = Report(args, n: 1)
    unlink(args.out)
    let total = Int64(args.expectBytes)
    let delegate = ResumeDelegate(keep: args.out)
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    let delegated = URLSession(configuration: makeConfiguration(), delegate: delegate, delegateQueue: queue)

    // First attempt: cancel once half the body has been written.
    let first = delegated.downloadTask(with: request)
    first.resume()
    guard await waitUntil(timeout: 120, { delegate.bytesWritten >= total / 2 }) else { fail("no progress") }
    let resumeData: Data? = await withCheckedContinuation { continuation in
        first.cancel(byProducingResumeData: { continuation.resume(returning: $0) })
    }
    report.extra["received_bytes"] = Double(delegate.bytesWritten)
    report.extra["kept_bytes"] = Double(resumeData == nil ? 0 : delegate.bytesWritten)
    report.notes["resume_data"] = resumeData == nil ? "nil (the second request starts over)" : "\(resumeData!.count) bytes"
    print("INTERRUPTED", delegate.bytesWritten)
    fflush(nil)
    try? await Task.sleep(nanoseconds: 300_000_000)

    // Second attempt, in a new session as after a restart.
    let second = URLSession(configuration: makeConfiguration(), delegate: delegate, delegateQueue: queue)
    let t0 = nowNs()
    let done: URL? = await withCheckedContinuation { continuation in
        delegate.lock.lock(); delegate.finished = continuation; delegate.lock.unlock()
        let task = resumeData.map { second.downloadTask(withResumeData: $0) } ?? second.downloadTask(with: request)
        task.resume()
    }
    report.elapsedNs = nowNs() - t0
    if done == nil { report.errors = 1 }
    report.bytes = fileSize(args.out)
    return report
}

/// Workload M: every URL of the list, in passes; with `+cache` the requests use the protocol's cache
/// policy and URLCache decides. URLSession cannot say where a response came from: nginx's log does.
/// After the timed run, how many of the list's URLs the URLCache holds (`urlcache_stored`).
func httpCache() async -> Report {
    let list = CacheBenchList(args)
    let policy: URLRequest.CachePolicy = urlCacheOn ? .useProtocolCachePolicy : .reloadIgnoringLocalCacheData
    var report = await runCacheWorkload(args, list) { index, pass in
        var request = URLRequest(url: list.urls[index])
        request.cachePolicy = policy
        request.setValue(String(pass), forHTTPHeaderField: "X-Bench-Pass")
        do {
            let (data, response) = try await session.data(for: request)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else { return CacheFetch(ok: false) }
            return CacheFetch(ok: list.check(data, index))
        } catch {
            log("\(error)")
            return CacheFetch(ok: false)
        }
    }
    if let urlCache {
        report.extra["urlcache_stored"] = Double(list.urls.filter { urlCache.cachedResponse(for: URLRequest(url: $0)) != nil }.count)
        report.extra["urlcache_memory_bytes"] = Double(urlCache.currentMemoryUsage)
        report.extra["urlcache_disk_bytes"] = Double(urlCache.currentDiskUsage)
    }
    return report
}

var report: Report
switch args.workload {
case "seq": report = await sequential()
case "conc": report = await concurrentReport(decode: false)
case "json": report = await concurrentReport(decode: true)
case "dlmem": report = await toMemory()
case "dldisk": report = await toDisk()
case "dedupe": report = await identical()
case "resume": report = await resume()
case "httpcache", "httpcache1", "httpcachewarm", "httpcachewarm1": report = await httpCache()
default: fail("unknown workload \(args.workload)")
}
report.emit()
