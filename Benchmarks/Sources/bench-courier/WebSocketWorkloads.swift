import BenchSupport
import Courier
import Foundation

// Workload L: Courier's public WebSocket API against bench-ws-server, one connection, binary messages,
// compression not offered (the server has none either).
//   wssmall, wslarge, wspipe   `args.n` messages of `args.size` bytes echoed, `args.c` in flight (1: send
//                              one, await its echo, repeat): `try await socket.send(.binary(data))`, the
//                              echoes read from one iterator of `socket.messages`; after `args.warmup`
//                              messages on the same connection (not timed)
//   wsslow                     the server floods `args.n` messages of `args.size` bytes; this loop takes one
//                              every 10 ms, so the socket's receive buffer fills and its reads pause: peak RSS
//                              (GNU time, in run.py) is the figure

struct BadEcho: Error {}

func webSocketConfiguration() -> WebSocketConfiguration {
    var configuration = WebSocketConfiguration()
    configuration.offersCompression = false
    return configuration
}

/// `count` messages of `payload` echoed with `window` in flight, the echoes read from `messages`.
func echo(_ socket: WebSocket, _ payload: Data, count: Int, window: Int,
          messages: inout WebSocket.Messages.Iterator, report: inout Report, record: Bool) async throws {
    var sent = 0
    var sentAt: [UInt64] = record ? Array(repeating: 0, count: count) : []
    for _ in 0..<min(window, count) {
        if record { sentAt[sent] = nowNs() }
        sent += 1
        try await socket.send(.binary(payload))
    }
    for received in 0..<count {
        guard let message = try await messages.next() else { throw BadEcho() }
        guard case .binary(let data) = message, data.count == payload.count else {
            report.errors += 1
            continue
        }
        if record {
            report.bytes += Int64(data.count)
            report.latenciesNs.append(nowNs() - sentAt[received])
        }
        if sent < count {
            if record { sentAt[sent] = nowNs() }
            sent += 1
            try await socket.send(.binary(payload))
        }
    }
}

func webSocketAPI(_ session: Session) async -> Report {
    var report = Report(args)
    let socket = session.webSocket(args.url.absoluteString, configuration: webSocketConfiguration())
    do {
        try await socket.connect()
        if args.kind == "wsslow" {
            var count = 0
            let t0 = nowNs()
            for try await message in socket.messages {
                let size = message.data.count
                report.bytes += Int64(size)
                if size != args.size { report.errors += 1 }
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
            let payload = Data(repeating: 0x41, count: args.size)
            var messages = socket.messages.makeAsyncIterator()
            var scratch = Report(args)
            try await echo(socket, payload, count: max(0, args.warmup), window: args.c, messages: &messages,
                           report: &scratch, record: false)
            report.errors += scratch.errors
            report.latenciesNs.reserveCapacity(args.n)
            let t0 = nowNs()
            try await echo(socket, payload, count: args.n, window: args.c, messages: &messages, report: &report, record: true)
            report.elapsedNs = nowNs() - t0
            report.extra["messages"] = Double(args.n)
            report.extra["warmup"] = Double(max(0, args.warmup))
            report.extra["message_bytes"] = Double(args.size)
        }
        try await socket.close()
    } catch {
        report.errors += 1
        log("\(error)")
        socket.cancel()
    }
    return report
}
