import BenchSupport
@_spi(Transport) import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Courier, two ways:
//   --client courier-curl | courier-urlsession [+dedupe]
//       the public API: Session(configuration:), request(...).serializingData() / serializingDecodable,
//       download(..., to: .file(...)).serializingDownloadedFileURL(), resumable downloads, dedupe;
//   --client transport-curl | transport-urlsession
//       the transport under it driven directly through the @_spi(Transport) contract: start a transfer,
//       collect the body, acknowledge it, wait for `completed`. Courier-API ÷ transport is the cost of
//       everything the request layer adds (workload E).
// Workload K (`sse`): `eventStream(url, reconnection: .never)` read through `events()` (courier-curl), or
// through `decodingEvents(of: Tick.self)` (courier-curl+typed), counting the events.
// Workload L (`wssmall`, `wslarge`, `wspipe`, `wsslow`): `session.webSocket(url)` (WebSocketWorkloads.swift).
// Workload M (`httpcache`, `httpcache1`): the HTTP cache on (`+cache`) or off (HTTPCacheWorkload.swift).
// HTTPS workloads (--cacert): `tls.trustRoots = .system(adding: [CA])` (the system store plus the
// benchmark's CA, the realistic set-up), or `.only([CA])` for the `+onlyca` client; `httpVersion` from
// --http (auto → .automatic, 1.1 → .http1_1, 2 → .http2, 3 → .http3). Workload N (h3seq, h3conc32) runs
// on the libcurl that COURIER_LIBCURL names (run.py sets it); the curl clients report it ("libcurl").

let args = Arguments()
let useCurl = args.client.contains("curl")
let direct = args.client.hasPrefix("transport-")
let dedupe = args.client.hasSuffix("+dedupe")
let onlyCA = args.client.hasSuffix("+onlyca")
let typed = args.client.hasSuffix("+typed")
let connections = max(args.c, 8)

func makeConfiguration() -> SessionConfiguration {
    var configuration = SessionConfiguration()
    configuration.transport = useCurl ? .curl : .urlSession(.ephemeral)
    configuration.maximumConnectionsPerHost = connections
    configuration.cookies = .none  // AsyncHTTPClient and curl handle no cookies either
    configuration.automaticDecompression = false  // as AsyncHTTPClient (`.disabled`) and curl (no --compressed)
    configuration.requestTimeout = 600
    configuration.maximumResponseSize = nil  // "dlmem" keeps 1 GiB in memory (AsyncHTTPClient is given 2 GiB)
    if !args.cacert.isEmpty {
        let ca = URL(fileURLWithPath: args.cacert)
        configuration.tls.trustRoots = onlyCA ? .only([ca]) : .system(adding: [ca])
        switch args.http {
        case "1.1": configuration.httpVersion = .http1_1
        case "2": configuration.httpVersion = .http2
        case "3": configuration.httpVersion = .http3
        default: configuration.httpVersion = .automatic
        }
    }
    return configuration
}

func makeSession() -> Session {
    Session(configuration: makeConfiguration(), deduplication: dedupe ? .safeMethods : .disabled,
            downloadStore: DownloadStore(directory: URL(fileURLWithPath: args.store)))
}

// MARK: - The public API

struct BadLength: Error {}

/// The cold phase: `args.c` requests at once from the new session (its first connections). Besides
/// the wall and CPU time, records from each response's metrics when its transfer started (relative to
/// the wave's start) and how long its TLS handshake took, to tell where a slow cold phase goes.
func coldWaveAPI(_ session: Session, _ cold: ColdPhase, into report: inout Report) async {
    let waveStart = Date()
    report.extra["cold_setup_ms"] = Double(nowNs() - cold.clockNs) / 1e6  // making the session
    let results = await withTaskGroup(of: (String, TransferMetrics?)?.self) { group in
        for _ in 0..<args.c {
            group.addTask {
                let response = await session.request(args.url).serializingData().response
                if let error = response.error {
                    log("\(error)")
                    return nil
                }
                let version = [response.metrics?.httpVersion, response.metrics?.tlsVersion].compactMap { $0 }.joined(separator: " ")
                return (version, response.metrics)
            }
        }
        var all: [(String, TransferMetrics?)?] = []
        for await result in group { all.append(result) }
        return all
    }
    let errors = results.filter { $0 == nil }.count
    cold.finish(into: &report, requests: args.c, errors: errors, protocolSeen: results.compactMap { $0?.0 }.first)
    let metrics = results.compactMap { $0?.1 }
    let starts = metrics.map { $0.start.timeIntervalSince(waveStart) * 1e3 }.sorted()
    let handshakes = metrics.compactMap { $0.tlsHandshake }.map { Double($0.components.attoseconds) / 1e15 + Double($0.components.seconds) * 1e3 }.sorted()
    if let first = starts.first, let last = starts.last {
        report.extra["cold_first_start_ms"] = first
        report.extra["cold_last_start_ms"] = last
    }
    if !handshakes.isEmpty {
        report.extra["cold_handshakes"] = Double(handshakes.count)
        report.extra["cold_tls_p50_ms"] = handshakes[(handshakes.count - 1) / 2]
        report.extra["cold_tls_max_ms"] = handshakes.last!
    }
}

func sequentialAPI(_ session: Session, cold: ColdPhase) async -> Report {
    var report = Report(args)
    var warmup = args.warmup
    if args.measuresColdPhase {
        await coldWaveAPI(session, cold, into: &report)
        warmup -= args.c
    }
    for _ in 0..<max(0, warmup) { _ = try? await session.request(args.url).serializingData().value }
    report.latenciesNs.reserveCapacity(args.n)
    let t0 = nowNs()
    for _ in 0..<args.n {
        let start = nowNs()
        do { report.bytes += Int64(try await session.request(args.url).serializingData().value.count) } catch {
            report.errors += 1
            if report.errors < 3 { log("\(error)") }
        }
        report.latenciesNs.append(nowNs() - start)
    }
    report.elapsedNs = nowNs() - t0
    return report
}

func concurrentAPI(_ session: Session, n: Int, decode: Bool) async -> (errors: Int, bytes: Int64) {
    await withTaskGroup(of: (Int, Int64).self) { group in
        for worker in 0..<args.c {
            group.addTask {
                var errors = 0
                var bytes: Int64 = 0
                for _ in 0..<share(n, args.c, worker) {
                    do {
                        if decode {
                            let catalog = try await session.request(args.url).serializingDecodable(Catalog.self).value
                            if catalog.items.count != expectedItems { errors += 1 }
                            bytes += 65536
                        } else {
                            bytes += Int64(try await session.request(args.url).serializingData().value.count)
                        }
                    } catch {
                        errors += 1
                        if errors < 3 { log("\(error)") }
                    }
                }
                return (errors, bytes)
            }
        }
        var total = (errors: 0, bytes: Int64(0))
        for await (errors, bytes) in group { total.errors += errors; total.bytes += bytes }
        return total
    }
}

func concurrentReportAPI(_ session: Session, cold: ColdPhase, decode: Bool) async -> Report {
    var report = Report(args)
    var warmup = args.warmup
    if args.measuresColdPhase {
        await coldWaveAPI(session, cold, into: &report)
        warmup -= args.c
    }
    _ = await concurrentAPI(session, n: max(0, warmup), decode: decode)
    let t0 = nowNs()
    (report.errors, report.bytes) = await concurrentAPI(session, n: args.n, decode: decode)
    report.elapsedNs = nowNs() - t0
    return report
}

/// tlscold: a new session, `args.c` requests at once, nothing else; timed from before the session.
func coldOnlyAPI(_ session: Session, cold: ColdPhase) async -> Report {
    var report = Report(args, n: args.c)
    await coldWaveAPI(session, cold, into: &report)
    report.elapsedNs = UInt64((report.extra["cold_ms"] ?? 0) * 1e6)
    report.errors = Int(report.extra["cold_errors"] ?? 0)
    return report
}

func toMemoryAPI(_ session: Session) async -> Report {
    var report = Report(args, n: 1)
    let t0 = nowNs()
    do { report.bytes = Int64(try await session.request(args.url).serializingData().value.count) } catch {
        report.errors = 1; log("\(error)")
    }
    report.elapsedNs = nowNs() - t0
    return report
}

func toDiskAPI(_ session: Session) async -> Report {
    unlink(args.out)
    var report = Report(args, n: 1)
    let destination = URL(fileURLWithPath: args.out)
    let t0 = nowNs()
    do {
        let url = try await session.download(args.url, to: .file(destination, options: .removePreviousFile))
            .serializingDownloadedFileURL().value
        if url.path != destination.path { throw BadLength() }
    } catch { report.errors = 1; log("\(error)") }
    report.elapsedNs = nowNs() - t0
    report.bytes = fileSize(args.out)
    return report
}

/// n identical GETs at once, issued behind the nginx gate; with `+dedupe` the gate opens once every
/// request has reached the deduplicator (started a transfer or joined one).
func identicalAPI(_ session: Session) async -> Report {
    var report = Report(args)
    let gate = NginxGate(pid: args.gatePID)
    gate.close()
    let t0 = nowNs()
    let tasks = (0..<args.n).map { _ in session.request(args.url).serializingData() }
    for task in tasks { task.resume() }
    if dedupe {
        let arrived = await waitUntil(timeout: 30) {
            let statistics = session.deduplicator.statistics
            return statistics.transfers + statistics.joined >= args.n
        }
        if !arrived { log("not every request reached the deduplicator: \(session.deduplicator.statistics)") }
    }
    gate.open()
    let results = await withTaskGroup(of: Data?.self) { group in
        for task in tasks { group.addTask { try? await task.value } }
        var all: [Data?] = []
        for await data in group { all.append(data) }
        return all
    }
    report.elapsedNs = nowNs() - t0
    let first = results.first ?? nil
    for data in results {
        if let data, data == first { report.bytes += Int64(data.count) } else { report.errors += 1 }
    }
    let statistics = session.deduplicator.statistics
    report.extra["dedupe_transfers"] = Double(statistics.transfers)
    report.extra["dedupe_joined"] = Double(statistics.joined)
    return report
}

/// Resumable download interrupted once the store's `.part` file passes half the body, then finished by
/// a new Session on the same DownloadStore directory.
func resumeAPI() async -> Report {
    var report = Report(args, n: 1)
    let total = Int64(args.expectBytes)
    let storeURL = URL(fileURLWithPath: args.store)
    try? FileManager.default.removeItem(at: storeURL)
    unlink(args.out)
    let destination = URL(fileURLWithPath: args.out)

    func partSize() -> Int64 {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: args.store)) ?? []
        return names.filter { $0.hasSuffix(".part") }.map { fileSize(args.store + "/" + $0) }.max() ?? 0
    }

    do {
        let session = makeSession()
        let request = session.download(args.url, to: .file(destination, options: .removePreviousFile), resumable: true)
        let task = request.serializingDownloadedFileURL()
        task.resume()
        guard await waitUntil(timeout: 120, { partSize() >= total / 2 }) else { fail("the .part file did not grow") }
        let atCancel = partSize()
        request.cancel()
        let first = await task.result
        if case .success = first { fail("the first attempt finished before it was cancelled") }
        let kept = session.downloadStore.partialDownloads().first?.bytesOnDisk ?? 0
        report.extra["part_at_cancel"] = Double(atCancel)
        report.extra["kept_bytes"] = Double(kept)
        report.extra["received_bytes"] = Double(max(kept, atCancel))
        report.notes["resume_data"] = "DownloadStore .part + journal"
        print("INTERRUPTED", kept)
        fflush(nil)
    }
    try? await Task.sleep(nanoseconds: 300_000_000)
    let session = makeSession()
    let t0 = nowNs()
    do {
        _ = try await session.download(args.url, to: .file(destination, options: .removePreviousFile), resumable: true)
            .serializingDownloadedFileURL().value
    } catch { report.errors = 1; log("\(error)") }
    report.elapsedNs = nowNs() - t0
    report.bytes = fileSize(args.out)
    return report
}

/// The `data` of each event of workload K's stream: `{"sequence":N,"text":"…"}`, N from 1.
struct Tick: Decodable, Sendable {
    let sequence: Int
    let text: String
}

/// Workload K: one event stream read to its end, one connection (`reconnection: .never`); every event
/// counted, and with `+typed` decoded as a `Tick` whose sequence number is checked. The count must be
/// exactly `args.n`.
func eventStreamAPI(_ session: Session) async -> Report {
    var report = Report(args)
    var events = 0
    let t0 = nowNs()
    do {
        let stream = session.eventStream(args.url, reconnection: .never)
        if typed {
            for try await tick in stream.decodingEvents(of: Tick.self) {
                events += 1
                if tick.sequence != events {
                    report.errors += 1
                    if report.errors < 3 { log("event \(events) has sequence \(tick.sequence)") }
                }
            }
        } else {
            for try await _ in stream.events() { events += 1 }
        }
    } catch {
        report.errors += 1
        log("\(error)")
    }
    report.elapsedNs = nowNs() - t0
    if events != args.n {
        report.errors += 1
        log("expected \(args.n) events, got \(events)")
    }
    report.extra["events"] = Double(events)
    return report
}

// MARK: - The transport driven directly

/// Collects one transfer's body, acknowledging every chunk at once, and hands the result to a
/// continuation when `completed` arrives. Events are serial per transfer; the lock only covers the
/// hand-over of the transfer handle, which `startTransfer` returns after events may have begun.
final class CollectingSink: TransportEventSink, @unchecked Sendable {
    private let lock = NSLock()
    private var transfer: (any TransportTransfer)?
    private var unacknowledged = 0
    private var status = 0
    private var body = Data()
    private let continuation: CheckedContinuation<(Int, Data, CourierError?), Never>

    init(_ continuation: CheckedContinuation<(Int, Data, CourierError?), Never>) { self.continuation = continuation }

    func attach(_ transfer: any TransportTransfer) {
        lock.lock()
        self.transfer = transfer
        let pending = unacknowledged
        unacknowledged = 0
        lock.unlock()
        if pending > 0 { transfer.acknowledge(pending) }
    }

    func receive(_ event: TransportEvent) {
        switch event {
        case .response(let head):
            status = head.statusCode
        case .body(let data):
            body.append(data)
            lock.lock()
            let transfer = self.transfer
            if transfer == nil { unacknowledged += data.count }
            lock.unlock()
            transfer?.acknowledge(data.count)
        case .completed(let error, _):
            lock.lock(); transfer = nil; lock.unlock()
            continuation.resume(returning: (status, body, error))
        case .uploadProgress:
            break
        }
    }
}

func makeTransport() -> any Transport {
    let configuration = TransportConfiguration(maximumConnectionsPerHost: connections)
    if useCurl {
        do { return try CurlTransport(configuration: configuration) } catch { fail("libcurl: \(error)") }
    }
    return URLSessionTransport(configuration: configuration, sessionConfiguration: .ephemeral)
}

@inline(__always)
func fetchDirect(_ transport: any Transport) async throws -> Data {
    let (status, body, error) = await withCheckedContinuation { continuation in
        let sink = CollectingSink(continuation)
        sink.attach(transport.startTransfer(TransportRequest(url: args.url), sink: sink))
    }
    if let error { throw error }
    guard status == 200 else { throw BadLength() }
    return body
}

func sequentialDirect(_ transport: any Transport) async -> Report {
    for _ in 0..<args.warmup { _ = try? await fetchDirect(transport) }
    var report = Report(args)
    report.latenciesNs.reserveCapacity(args.n)
    let t0 = nowNs()
    for _ in 0..<args.n {
        let start = nowNs()
        do { report.bytes += Int64(try await fetchDirect(transport).count) } catch { report.errors += 1 }
        report.latenciesNs.append(nowNs() - start)
    }
    report.elapsedNs = nowNs() - t0
    return report
}

func concurrentDirect(_ transport: any Transport, n: Int) async -> (errors: Int, bytes: Int64) {
    await withTaskGroup(of: (Int, Int64).self) { group in
        for worker in 0..<args.c {
            group.addTask {
                var errors = 0
                var bytes: Int64 = 0
                for _ in 0..<share(n, args.c, worker) {
                    do { bytes += Int64(try await fetchDirect(transport).count) } catch { errors += 1 }
                }
                return (errors, bytes)
            }
        }
        var total = (errors: 0, bytes: Int64(0))
        for await (errors, bytes) in group { total.errors += errors; total.bytes += bytes }
        return total
    }
}

// MARK: - Main

var report: Report
if direct {
    if !args.cacert.isEmpty { fail("the transport-direct clients run over plain HTTP only") }
    let transport = makeTransport()
    switch args.kind {
    case "seq":
        report = await sequentialDirect(transport)
    case "conc":
        _ = await concurrentDirect(transport, n: args.warmup)
        report = Report(args)
        let t0 = nowNs()
        (report.errors, report.bytes) = await concurrentDirect(transport, n: args.n)
        report.elapsedNs = nowNs() - t0
    default:
        fail("the transport-direct clients run seq and conc only")
    }
    transport.shutdown()
} else {
    switch args.kind {
    case "resume":
        report = await resumeAPI()
    default:
        // The cold phase starts before the session exists: making it is part of it.
        let cold = ColdPhase()
        let session = args.kind == "httpcache" ? makeHTTPCacheSession() : makeSession()
        switch args.kind {
        case "cold": report = await coldOnlyAPI(session, cold: cold)
        case "seq": report = await sequentialAPI(session, cold: cold)
        case "conc", "json": report = await concurrentReportAPI(session, cold: cold, decode: args.kind == "json")
        case "dlmem": report = await toMemoryAPI(session)
        case "dldisk": report = await toDiskAPI(session)
        case "dedupe": report = await identicalAPI(session)
        case "sse": report = await eventStreamAPI(session)
        case "wssmall", "wslarge", "wspipe", "wsslow": report = await webSocketAPI(session)
        case "httpcache": report = await httpCacheAPI(session)
        default: fail("unknown workload \(args.workload)")
        }
        report.notes["transport"] = session.transportName
        if useCurl, let libcurl = try? Libcurl.current() { report.notes["libcurl"] = libcurl.version }
    }
}
report.emit()
