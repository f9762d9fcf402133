import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket

// Workload L's WebSocket server: hummingbird 2 with hummingbird-websocket (SwiftNIO), HTTP/1.1 upgrade on
// 127.0.0.1, no extensions (so no permessage-deflate whatever a client offers), no automatic pings,
// frames up to 4 MiB (the 1 MiB messages travel as one frame each, with room to spare). Two paths:
//
//   /echo                       every data frame written back as it came (opcode, FIN, payload): a
//                               message comes back as the same message, with no reassembly or UTF-8
//                               check on the server's side
//   /flood?count=N&size=S       N binary messages of S bytes (a fixed buffer) sent as fast as the
//                               connection takes them (each write waits for the channel to be writable:
//                               a slow reader holds the server back through TCP), then a close 1000;
//                               frames from the client are read and dropped
//
//   bench-ws-server [--port P]     prints "bench-ws-server listening on port P" on stdout once it
//                                  accepts connections (P = 0: the system picks one); runs until killed

var port = 0
var argv = CommandLine.arguments.dropFirst().makeIterator()
while let key = argv.next() {
    guard key == "--port", let value = argv.next(), let number = Int(value) else {
        FileHandle.standardError.write(Data("usage: bench-ws-server [--port P]\n".utf8))
        exit(2)
    }
    port = number
}

/// The query items of a request path such as `/flood?count=10&size=100`.
func query(_ path: String) -> [String: Int] {
    guard let components = URLComponents(string: path) else { return [:] }
    var items: [String: Int] = [:]
    for item in components.queryItems ?? [] {
        if let value = item.value.flatMap({ Int($0) }) { items[item.name] = value }
    }
    return items
}

let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
    ws: WebSocketServerConfiguration(maxFrameSize: 4 << 20, extensions: [], autoPing: .disabled, validateUTF8: false)
)

var logger = Logger(label: "bench-ws-server")
logger.logLevel = .error

let app = Application(
    router: Router(),
    server: .http1WebSocketUpgrade(configuration: configuration) { request, _, _ in
        let path = request.path ?? "/"
        if path == "/echo" || path.hasPrefix("/echo?") {
            return .upgrade([:]) { inbound, outbound, _ in
                for try await frame in inbound {
                    let opcode: WebSocketOpcode = switch frame.opcode {
                    case .text: .text
                    case .binary: .binary
                    case .continuation: .continuation
                    }
                    try await outbound.write(.custom(WebSocketFrame(fin: frame.fin, opcode: opcode, data: frame.data)))
                }
            }
        }
        if path.hasPrefix("/flood") {
            let items = query(path)
            let count = items["count"] ?? 1000
            let size = items["size"] ?? (1 << 20)
            return .upgrade([:]) { inbound, outbound, _ in
                let payload = ByteBuffer(repeating: 0x5A, count: size)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    // Reads (and drops) what the client sends; ends with the client's answer to the close
                    // below. Returning before that would tear the connection down with the last
                    // messages still queued (a write returns once queued, not once sent).
                    group.addTask { for try await _ in inbound {} }
                    for _ in 0..<count { try await outbound.write(.binary(payload)) }
                    try await outbound.close(.normalClosure, reason: nil)
                    try await group.waitForAll()
                }
            }
        }
        return .dontUpgrade
    },
    configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port)),
    onServerRunning: { channel in
        print("bench-ws-server listening on port \(channel.localAddress?.port ?? -1)")
        fflush(nil)
    },
    logger: logger
)
try await app.runService()
