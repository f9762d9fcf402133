import Foundation

/// Serves one accepted connection on its own thread: reads requests, records them, writes the
/// scripted responses, and closes the socket the way the script (or the protocol) says.
struct Connection {
    /// How the socket is to be closed when the connection ends.
    enum Ending {
        /// Orderly close (FIN).
        case close
        /// Abortive close (RST).
        case reset
        /// Keep the socket open, sending nothing, until the client closes or shutdown.
        case stall
        /// Send FIN, then wait for the client to close.
        case shutdownOutput

        init(_ effect: SocketEffect) {
            switch effect {
            case .close: self = .close
            case .reset: self = .reset
            case .stall: self = .stall
            case .shutdownOutput: self = .shutdownOutput
            }
        }
    }

    private let core: ServerCore
    private let fd: Int32
    private let index: Int
    private var reader: RequestReader

    init(core: ServerCore, fd: Int32, index: Int) {
        self.core = core
        self.fd = fd
        self.index = index
        self.reader = RequestReader(
            fd: fd,
            maxHeadBytes: core.configuration.maxRequestHeadBytes,
            recordLimit: core.configuration.maxRecordedBodyBytes)
    }

    /// Runs the connection to completion, then closes and deregisters the socket.
    mutating func run() {
        let (ending, sequenceNumber) = serve()
        switch ending {
        case .stall:
            waitForClientClose(sequenceNumber: sequenceNumber, marksDisconnect: true)
        case .shutdownOutput:
            Socket.shutdownOutput(fd)
            waitForClientClose(sequenceNumber: sequenceNumber, marksDisconnect: false)
        case .close, .reset:
            break
        }
        core.releaseSocket(index)
        if ending == .reset {
            Socket.closeWithReset(fd)
        } else {
            Socket.closeGracefully(fd)
        }
        core.threadFinished(index)
    }

    /// The request/response loop; returns how to end and the last request's sequence number.
    private mutating func serve() -> (Ending, Int?) {
        var exchange = 0
        var lastSequence: Int?
        while !core.isStopping {
            let exchangeIndex = exchange
            exchange += 1
            let headBytes: ArraySlice<UInt8>
            switch reader.readHead() {
            case .idleClose:
                return (.close, lastSequence)
            case .truncated(let partial):
                let (head, _) = RequestHeadParser.parse(partial)
                recordFailure(
                    head: head, exchangeIndex: exchangeIndex,
                    error: "connection closed before the request head was complete (\(partial.count) bytes)")
                return (.close, lastSequence)
            case .tooLarge:
                let error = "request head larger than \(core.configuration.maxRequestHeadBytes) bytes"
                let request = recordFailure(head: nil, exchangeIndex: exchangeIndex, error: error)
                _ = respondToFailure(status: 431, message: error, request: request)
                return (.close, request.sequenceNumber)
            case .head(let bytes):
                headBytes = bytes
            }

            let (parsedHead, parseError) = RequestHeadParser.parse(headBytes)
            guard let head = parsedHead, parseError == nil else {
                let error = parseError ?? RequestParseError(status: 400, message: "unparseable request")
                let request = recordFailure(head: parsedHead, exchangeIndex: exchangeIndex, error: error.message)
                _ = respondToFailure(status: error.status, message: error.message, request: request)
                return (.close, request.sequenceNumber)
            }
            let framing: RequestHead.Framing
            switch RequestHeadParser.framing(of: head) {
            case .success(let value):
                framing = value
            case .failure(let error):
                let request = recordFailure(head: head, exchangeIndex: exchangeIndex, error: error.message)
                _ = respondToFailure(status: error.status, message: error.message, request: request)
                return (.close, request.sequenceNumber)
            }

            if head.expectsContinue, framing != .none {
                let path = RecordedRequest.split(target: head.target).path
                let sendsContinue = core.state.withLock { $0.sendsContinue(path: path, method: head.method) }
                if sendsContinue, !Socket.writeAll(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) {
                    recordFailure(head: head, exchangeIndex: exchangeIndex, error: "client went away before 100 Continue was sent")
                    return (.close, lastSequence)
                }
            }

            let path = RecordedRequest.split(target: head.target).path
            if core.state.withLock({ $0.duplexEchoPaths.contains(path) }) {
                return (echoInFullDuplex(head, framing: framing, exchangeIndex: exchangeIndex), lastSequence)
            }

            let body = reader.readBody(framing)
            if let error = body.error {
                let request = record(head: head, body: body, exchangeIndex: exchangeIndex, error: error.message)
                if !body.connectionLost {
                    _ = respondToFailure(status: error.status, message: error.message, request: request)
                }
                return (.close, request.sequenceNumber)
            }

            let request = record(head: head, body: body, exchangeIndex: exchangeIndex, error: nil)
            lastSequence = request.sequenceNumber
            let response = core.response(for: request)
            if let script = response.behavior.webSocket {
                return (upgrade(request, response: response, script: script), lastSequence)
            }
            var writer = ResponseWriter(core: core, fd: fd, request: request)
            // Both Content-Length and chunked framing is a smuggling risk; RFC 9112 §6.1 says close.
            let mustClose = head.wantsClose || (framing == .chunked && head.headers.contains("Content-Length"))
            switch writer.write(response, isHead: head.method == "HEAD", requestWantsClose: mustClose) {
            case .completed(let closeAfter):
                if closeAfter { return (.close, lastSequence) }
            case .effect(let effect):
                return (Ending(effect), lastSequence)
            case .clientGone:
                core.markDisconnected(request.sequenceNumber)
                return (.close, lastSequence)
            case .shutdown:
                return (.close, lastSequence)
            }
        }
        return (.close, lastSequence)
    }

    /// Serves a ``TestServer/routeDuplexEcho(_:)`` exchange: the head at once, then each piece of
    /// the request body as a response chunk while the body is still arriving, then the request's
    /// trailers as the response's. The request is recorded once its body ended.
    private mutating func echoInFullDuplex(_ head: RequestHead, framing: RequestHead.Framing, exchangeIndex: Int) -> Ending {
        let fd = fd
        let responseHead = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        guard Socket.writeAll(fd, Array(responseHead.utf8)) else {
            recordFailure(head: head, exchangeIndex: exchangeIndex, error: "client went away before the duplex response head was sent")
            return .close
        }
        reader.observer = { piece in
            Socket.writeAll(fd, Array(String(piece.count, radix: 16).utf8) + [13, 10] + Array(piece) + [13, 10])
        }
        let body = reader.readBody(framing)
        reader.observer = nil
        let request = record(head: head, body: body, exchangeIndex: exchangeIndex, error: body.error?.message)
        if body.error == nil {
            let end = "0\r\n" + body.trailers.map { "\($0.name): \($0.value)\r\n" }.joined() + "\r\n"
            if !Socket.writeAll(fd, Array(end.utf8)) { core.markDisconnected(request.sequenceNumber) }
        }
        return .close
    }

    /// Answers a WebSocket handshake (RFC 6455 §4.2): `101` and the script's session, or `400` /
    /// `426` for a request that is not a valid handshake.
    private mutating func upgrade(_ request: RecordedRequest, response: MockResponse, script: WebSocketScript) -> Ending {
        var writer = ResponseWriter(core: core, fd: fd, request: request)
        let offer: WebSocketHandshake.Offer
        switch WebSocketHandshake.validate(request) {
        case .success(let value):
            offer = value
        case .failure(let error):
            core.noteWebSocketViolation("\(request.requestLine): \(error.message)")
            var refusal = MockResponse.text("TestServer: \(error.message)\n", status: error.status)
            if error.status == 426 { refusal = refusal.header("Sec-WebSocket-Version", "13") }
            _ = writer.write(refusal, isHead: false, requestWantsClose: true)
            return .close
        }
        let subprotocol = script.chosenSubprotocol(offered: offer.protocols)
        let answer = WebSocketHandshake.acceptance(offer, script: script, subprotocol: subprotocol, behaviorOf: response)
        switch writer.write(answer, isHead: false, requestWantsClose: false) {
        case .completed:
            break
        case .effect(let effect):
            return Ending(effect)
        case .clientGone:
            core.markDisconnected(request.sequenceNumber)
            return .close
        case .shutdown:
            return .close
        }
        let recording = WebSocketRecording(request: request, subprotocol: subprotocol)
        core.register(recording)
        var session = WebSocketSession(core: core, fd: fd, script: script, recording: recording, leftover: reader.takeBuffered())
        return session.run()
    }

    @discardableResult
    private func recordFailure(head: RequestHead?, exchangeIndex: Int, error: String) -> RecordedRequest {
        core.record { sequence in
            RecordedRequest(head: head, error: error, connectionIndex: index, exchangeIndex: exchangeIndex, sequenceNumber: sequence)
        }
    }

    private func record(head: RequestHead, body: RequestReader.BodyResult, exchangeIndex: Int, error: String?) -> RecordedRequest {
        core.record { sequence in
            RecordedRequest(
                head: head, error: error, body: body.body, bodySize: body.size,
                chunkSizes: body.chunkSizes, trailers: body.trailers,
                connectionIndex: index, exchangeIndex: exchangeIndex, sequenceNumber: sequence)
        }
    }

    private func respondToFailure(status: Int, message: String, request: RecordedRequest) -> ResponseWriter.Outcome {
        var writer = ResponseWriter(core: core, fd: fd, request: request)
        return writer.write(.text("TestServer: \(message)\n", status: status), isHead: false, requestWantsClose: true)
    }

    /// Reads and discards input until the client closes or the server shuts down.
    private func waitForClientClose(sequenceNumber: Int?, marksDisconnect: Bool) {
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = scratch.withUnsafeMutableBytes { Socket.receive(fd, into: $0) }
            if count > 0 { continue }
            if marksDisconnect, !core.isStopping, let sequenceNumber {
                core.markDisconnected(sequenceNumber)
            }
            return
        }
    }
}
