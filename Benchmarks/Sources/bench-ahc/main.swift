import AsyncHTTPClient
import BenchSupport
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

// AsyncHTTPClient 1.37, async API: `execute` + `body.collect(upTo:)`, or the body streamed chunk by
// chunk into a file descriptor for the to-disk workloads. HTTP/1.1 over plain TCP, decompression
// off, connection soft limit = concurrency (at least 8), no cookies (AHC has none).
// HTTPS workloads (--cacert): NIOSSL (BoringSSL) trusting only the benchmark's CA
// (`TLSConfiguration.makeClientConfiguration()`, `trustRoots = .certificates(PEM)`), HTTP/2 by ALPN
// (`httpVersion = .automatic`) unless --http 1.1 (`.http1Only`).

let args = Arguments()
// The cold phase starts before the client exists: making it (and its TLS context) is part of it.
let cold = ColdPhase()
var configuration = HTTPClient.Configuration()
configuration.connectionPool = .init(idleTimeout: .seconds(60),
                                     concurrentHTTP1ConnectionsPerHostSoftLimit: max(args.c, 8))
configuration.decompression = .disabled
if !args.cacert.isEmpty {
    var tls = TLSConfiguration.makeClientConfiguration()
    do { tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(args.cacert)) } catch {
        fail("cannot read \(args.cacert): \(error)")
    }
    configuration.tlsConfiguration = tls
    if args.http == "3" { fail("AsyncHTTPClient has no HTTP/3") }
    configuration.httpVersion = args.http == "1.1" ? .http1Only : .automatic
}
let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
let request = HTTPClientRequest(url: args.url.absoluteString)
let maximumBody = 2 << 30

struct BadStatus: Error { let code: UInt }

@inline(__always)
func fetch() async throws -> ByteBuffer {
    let response = try await client.execute(request, timeout: .seconds(600))
    guard response.status == .ok else { throw BadStatus(code: response.status.code) }
    return try await response.body.collect(upTo: maximumBody)
}

/// One request, and the HTTP version it came over (for the cold wave's report).
func fetchNoting() async throws -> (ByteBuffer, String) {
    let response = try await client.execute(request, timeout: .seconds(600))
    guard response.status == .ok else { throw BadStatus(code: response.status.code) }
    return (try await response.body.collect(upTo: maximumBody), "\(response.version)")
}

/// The cold phase: `args.c` requests at once from the new client (its first connections).
func coldWave(into report: inout Report) async {
    report.extra["cold_setup_ms"] = Double(nowNs() - cold.clockNs) / 1e6  // making the client
    let results = await withTaskGroup(of: String?.self) { group in
        for _ in 0..<args.c { group.addTask { try? await fetchNoting().1 } }
        var all: [String?] = []
        for await version in group { all.append(version) }
        return all
    }
    let errors = results.filter { $0 == nil }.count
    cold.finish(into: &report, requests: args.c, errors: errors, protocolSeen: results.compactMap { $0 }.first)
}

func sequential() async -> Report {
    var report = Report(args)
    var warmup = args.warmup
    if args.measuresColdPhase {
        await coldWave(into: &report)
        warmup -= args.c
    }
    for _ in 0..<max(0, warmup) { _ = try? await fetch() }
    report.latenciesNs.reserveCapacity(args.n)
    let t0 = nowNs()
    for _ in 0..<args.n {
        let start = nowNs()
        do { report.bytes += Int64(try await fetch().readableBytes) } catch { report.errors += 1 }
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
                        let buffer = try await fetch()
                        bytes += Int64(buffer.readableBytes)
                        if decode {
                            // JSONDecoder needs contiguous Data; one copy, as an app would make.
                            let data = Data(buffer.readableBytesView)
                            if try decoder.decode(Catalog.self, from: data).items.count != expectedItems { errors += 1 }
                        }
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
    var report = Report(args)
    var warmup = args.warmup
    if args.measuresColdPhase {
        await coldWave(into: &report)
        warmup -= args.c
    }
    _ = await concurrent(n: max(0, warmup), decode: decode)
    let t0 = nowNs()
    (report.errors, report.bytes) = await concurrent(n: args.n, decode: decode)
    report.elapsedNs = nowNs() - t0
    return report
}

func toMemory() async -> Report {
    var report = Report(args, n: 1)
    let t0 = nowNs()
    do { report.bytes = Int64(try await fetch().readableBytes) } catch { report.errors = 1; log("\(error)") }
    report.elapsedNs = nowNs() - t0
    return report
}

/// Streams the body into `path`; stops (cancelling the request) once `stopAfter` bytes are written.
func stream(to path: String, stopAfter: Int64 = .max) async throws -> Int64 {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { fail("cannot open \(path)") }
    defer { close(fd) }
    let response = try await client.execute(request, timeout: .seconds(600))
    guard response.status == .ok else { throw BadStatus(code: response.status.code) }
    var written: Int64 = 0
    for try await chunk in response.body {
        chunk.withUnsafeReadableBytes { writeAll(fd, $0) }
        written += Int64(chunk.readableBytes)
        if written >= stopAfter { break }  // leaving the loop drops the body stream: AHC closes the connection
    }
    return written
}

func toDisk() async -> Report {
    unlink(args.out)
    var report = Report(args, n: 1)
    let t0 = nowNs()
    do { _ = try await stream(to: args.out) } catch { report.errors = 1; log("\(error)") }
    report.elapsedNs = nowNs() - t0
    report.bytes = fileSize(args.out)
    return report
}

func identical() async -> Report {
    var report = Report(args)
    let gate = NginxGate(pid: args.gatePID)
    gate.close()
    let t0 = nowNs()
    let results = await withTaskGroup(of: ByteBuffer?.self) { group in
        for _ in 0..<args.n { group.addTask { try? await fetch() } }
        gate.open()
        var all: [ByteBuffer?] = []
        for await buffer in group { all.append(buffer) }
        return all
    }
    report.elapsedNs = nowNs() - t0
    let first = results.first ?? nil
    for buffer in results {
        if let buffer, buffer == first { report.bytes += Int64(buffer.readableBytes) } else { report.errors += 1 }
    }
    return report
}

/// AsyncHTTPClient has no resumable downloads: after the interruption the file is fetched again.
func resume() async -> Report {
    var report = Report(args, n: 1)
    unlink(args.out)
    let total = Int64(args.expectBytes)
    do {
        let kept = try await stream(to: args.out, stopAfter: total / 2)
        print("INTERRUPTED", kept)
        fflush(nil)
        report.extra["received_bytes"] = Double(kept)
        report.extra["kept_bytes"] = 0
        report.notes["resume_data"] = "none (no resume support: the second request starts over)"
        try await Task.sleep(nanoseconds: 300_000_000)
        let t0 = nowNs()
        _ = try await stream(to: args.out)
        report.elapsedNs = nowNs() - t0
    } catch { report.errors = 1; log("\(error)") }
    report.bytes = fileSize(args.out)
    return report
}

/// tlscold: a new client, `args.c` requests at once, nothing else; timed from before the client.
func coldOnly() async -> Report {
    var report = Report(args, n: args.c)
    await coldWave(into: &report)
    report.elapsedNs = UInt64((report.extra["cold_ms"] ?? 0) * 1e6)
    report.errors = Int(report.extra["cold_errors"] ?? 0)
    return report
}

/// Workload M: every URL of the list, in passes; AsyncHTTPClient has no cache, so this is the
/// network-only reference (every request a full 200).
func httpCache() async -> Report {
    let list = CacheBenchList(args)
    return await runCacheWorkload(args, list) { index, pass in
        var request = HTTPClientRequest(url: list.urls[index].absoluteString)
        request.headers.add(name: "X-Bench-Pass", value: String(pass))
        do {
            let response = try await client.execute(request, timeout: .seconds(600))
            guard response.status == .ok else { return CacheFetch(ok: false) }
            let body = try await response.body.collect(upTo: maximumBody)
            let prefix = body.getBytes(at: body.readerIndex, length: min(body.readableBytes, list.prefixes[index].count)) ?? []
            return CacheFetch(ok: list.check(count: body.readableBytes, prefix: prefix, index))
        } catch {
            log("\(error)")
            return CacheFetch(ok: false)
        }
    }
}

var report: Report
switch args.kind {
case "cold": report = await coldOnly()
case "seq": report = await sequential()
case "conc": report = await concurrentReport(decode: false)
case "json": report = await concurrentReport(decode: true)
case "dlmem": report = await toMemory()
case "dldisk": report = await toDisk()
case "dedupe": report = await identical()
case "resume": report = await resume()
case "httpcache": report = await httpCache()
default: fail("unknown workload \(args.workload)")
}
report.emit()
try? await client.shutdown().get()
