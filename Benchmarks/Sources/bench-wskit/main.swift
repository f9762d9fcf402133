import BenchSupport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import WebSocketKit

// Workload L's peer client: Vapor's websocket-kit 2.16 (SwiftNIO's NIOWebSocket underneath), one
// connection to bench-ws-server, binary messages, frames up to 4 MiB, no compression (websocket-kit
// has none), no automatic pings.
//
//   --client wskit          websocket-kit as it is meant to be used: the next message is sent from the
//                           onBinary callback on the connection's event loop (no task hops at all)
//   --client wskit+async    the same loop written as Courier's is: a task sends with `try await send`, and
//                           the echoes reach it through an AsyncStream fed by onBinary
//
// Workloads (the URL is the server's /echo, or /flood for wsslow):
//   wssmall, wslarge, wspipe   n messages of --size bytes echoed, c in flight (c = 1: send one, await its
//                              echo, repeat); after a warm-up of --warmup messages (not timed)
//   wsslow                     the server floods n messages of --size bytes; the client keeps one per
//                              10 ms (websocket-kit has no read backpressure: what it cannot take yet piles
//                              up in the AsyncStream); peak RSS is the figure

let args = Arguments()
let group = MultiThreadedEventLoopGroup.singleton
let configuration = {
    var configuration = WebSocketClient.Configuration(maxFrameSize: 4 << 20)
    configuration.maxAccumulatedFrameSize = 16 << 20
    return configuration
}()

/// Everything the event-loop-driven client shares with its callbacks; it lives on the event loop, in a
/// `NIOLoopBoundBox` (which checks that every access is made there).
final class EchoState {
    var sent = 0
    var received = 0
    var errors = 0
    var bytes: Int64 = 0
    var target = 0
    var latenciesNs: [UInt64] = []
    var sentAt: [UInt64] = []
    var done: EventLoopPromise<Void>?
}

func connect(_ url: URL) async throws -> WebSocket {
    let promise = group.any().makePromise(of: WebSocket.self)
    WebSocket.connect(to: url, configuration: configuration, on: group) { socket in
        promise.succeed(socket)
    }.whenFailure { promise.fail($0) }
    return try await promise.futureResult.get()
}

/// The callback-driven echo loop: `count` messages, `window` in flight; on the event loop throughout.
func echoOnEventLoop(
    _ socket: WebSocket, _ box: NIOLoopBoundBox<EchoState>, payload: ByteBuffer, count: Int, window: Int, record: Bool
) async throws {
    guard count > 0 else { return }
    try await socket.eventLoop.submit {
        let state = box.value
        state.sent = 0
        state.received = 0
        state.bytes = 0
        state.target = count
        state.latenciesNs = []
        state.sentAt = []
        if record {
            state.latenciesNs.reserveCapacity(count)
            state.sentAt = Array(repeating: 0, count: count)
        }
        let done = socket.eventLoop.makePromise(of: Void.self)
        state.done = done
        @Sendable func sendOne() {
            let state = box.value
            if record { state.sentAt[state.sent] = nowNs() }
            state.sent += 1
            socket.send(payload, opcode: .binary, fin: true, promise: nil)
        }
        socket.onBinary { socket, buffer in
            let state = box.value
            if buffer.readableBytes != payload.readableBytes { state.errors += 1 }
            state.bytes += Int64(buffer.readableBytes)
            if record { state.latenciesNs.append(nowNs() - state.sentAt[state.received]) }
            state.received += 1
            if state.received == state.target {
                state.done?.succeed(())
            } else if state.sent < state.target {
                sendOne()
            }
        }
        for _ in 0..<min(window, count) { sendOne() }
        return done.futureResult
    }.get().get()
}

/// The task-driven loop: sends with `try await send`, echoes through an AsyncStream.
func echoAsync(_ socket: WebSocket, payload: ByteBuffer, count: Int, window: Int,
               messages: inout AsyncStream<ByteBuffer>.Iterator, report: inout Report, record: Bool) async throws {
    var sent = 0
    var sentAt: [UInt64] = record ? Array(repeating: 0, count: count) : []
    func sendOne() async throws {
        if record { sentAt[sent] = nowNs() }
        sent += 1
        try await socket.send(raw: payload.readableBytesView, opcode: .binary)
    }
    for _ in 0..<min(window, count) { try await sendOne() }
    for received in 0..<count {
        guard let buffer = await messages.next() else { throw CancellationError() }
        if buffer.readableBytes != payload.readableBytes { report.errors += 1 }
        if record {
            report.bytes += Int64(buffer.readableBytes)
            report.latenciesNs.append(nowNs() - sentAt[received])
        }
        if sent < count { try await sendOne() }
    }
}

func run() async -> Report {
    let size = args.size
    var report = Report(args)
    do {
        let socket = try await connect(args.url)
        if args.kind == "wsslow" {
            // The server floods; what websocket-kit hands over before the consumer takes it waits in the stream.
            let (stream, continuation) = AsyncStream<ByteBuffer>.makeStream()
            try await socket.eventLoop.submit { socket.onBinary { _, buffer in continuation.yield(buffer) } }.get()
            socket.onClose.whenComplete { _ in continuation.finish() }
            let t0 = nowNs()
            var count = 0
            for await buffer in stream {
                report.bytes += Int64(buffer.readableBytes)
                if buffer.readableBytes != size { report.errors += 1 }
                count += 1
                try await Task.sleep(nanoseconds: 10_000_000)
            }
            report.elapsedNs = nowNs() - t0
            if count != args.n {
                report.errors += 1
                log("expected \(args.n) messages, got \(count)")
            }
            report.extra["messages"] = Double(count)
        } else {
            let payload = ByteBuffer(repeating: 0x41, count: size)
            let warmup = args.warmup > 0 ? args.warmup : 0
            if args.client.hasSuffix("+async") {
                let (stream, continuation) = AsyncStream<ByteBuffer>.makeStream()
                try await socket.eventLoop.submit { socket.onBinary { _, buffer in continuation.yield(buffer) } }.get()
                socket.onClose.whenComplete { _ in continuation.finish() }
                var messages = stream.makeAsyncIterator()
                var scratch = Report(args)
                try await echoAsync(socket, payload: payload, count: warmup, window: args.c, messages: &messages, report: &scratch, record: false)
                report.latenciesNs.reserveCapacity(args.n)
                let t0 = nowNs()
                try await echoAsync(socket, payload: payload, count: args.n, window: args.c, messages: &messages, report: &report, record: true)
                report.elapsedNs = nowNs() - t0
                report.errors += scratch.errors
            } else {
                let loop = socket.eventLoop
                let box = try await loop.submit { NIOLoopBoundBox(EchoState(), eventLoop: loop) }.get()
                try await echoOnEventLoop(socket, box, payload: payload, count: warmup, window: args.c, record: false)
                let t0 = nowNs()
                try await echoOnEventLoop(socket, box, payload: payload, count: args.n, window: args.c, record: true)
                report.elapsedNs = nowNs() - t0
                let (bytes, errors, latencies) = try await loop.submit { (box.value.bytes, box.value.errors, box.value.latenciesNs) }.get()
                report.bytes = bytes
                report.errors += errors
                report.latenciesNs = latencies
            }
            report.extra["messages"] = Double(args.n)
            report.extra["warmup"] = Double(warmup)
            report.extra["message_bytes"] = Double(size)
        }
        try await socket.close(code: .normalClosure).get()
    } catch {
        report.errors += 1
        log("\(error)")
    }
    return report
}

await run().emit()
