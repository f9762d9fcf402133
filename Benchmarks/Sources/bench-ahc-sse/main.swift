import AsyncHTTPClient
import BenchSupport
import EventSource
import Foundation
import NIOCore

// Workload K (`sse`) for AsyncHTTPClient: the response body streamed chunk by chunk (`response.body`)
// and fed to mattt/EventSource's parser (`EventSource.Parser`, an actor taking one byte per call).
// Each chunk crosses into the actor once: `consume(chunk:)` below loops over its bytes inside the
// actor and drains the events they complete there, so the parser pays one actor hop per chunk, not
// per byte (the cheapest way its public API allows). HTTP/1.1 over plain TCP, decompression off.
//
//   bench-ahc-sse sse --client ahc+eventsource --url URL --n EVENTS

let args = Arguments()
guard args.kind == "sse" else { fail("bench-ahc-sse runs the sse workload only") }
var configuration = HTTPClient.Configuration()
configuration.decompression = .disabled
let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)

struct BadStatus: Error { let code: UInt }

extension EventSource.Parser {
    /// Parses every byte of `chunk` in one hop onto the actor; returns how many events it completed.
    func consume(chunk: ByteBuffer) -> Int {
        var events = 0
        for byte in chunk.readableBytesView {
            consume(byte)
            // An event is dispatched only at the end of a line: no need to look for one elsewhere.
            if byte == 0x0A || byte == 0x0D {
                while getNextEvent() != nil { events += 1 }
            }
        }
        return events
    }

    /// Ends the stream (an unterminated last line is handled as the parser does) and counts what
    /// that dispatched.
    func finishCounting() -> Int {
        finish()
        var events = 0
        while getNextEvent() != nil { events += 1 }
        return events
    }
}

var report = Report(args)
var events = 0
let t0 = nowNs()
do {
    var request = HTTPClientRequest(url: args.url.absoluteString)
    request.headers.add(name: "Accept", value: "text/event-stream")
    let response = try await client.execute(request, timeout: .seconds(600))
    guard response.status == .ok else { throw BadStatus(code: response.status.code) }
    let parser = EventSource.Parser()
    for try await chunk in response.body {
        report.bytes += Int64(chunk.readableBytes)
        events += await parser.consume(chunk: chunk)
    }
    events += await parser.finishCounting()
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
report.emit()
try? await client.shutdown().get()
