// Fuzz target: the WebSocket frame parser, message assembler and protocol state machine
// (WebSocketStateMachine) on arbitrary server bytes, and the incremental UTF-8 validator.
//
// Input: byte 0 picks how the rest is split into chunks, the message size limit and whether
// permessage-deflate was negotiated; the rest is the stream the server sends after the handshake
// (and, separately, the bytes the handshake response head reader gets).
// Properties: nothing traps; the actions and the final state are the same whether the stream is fed
// whole or in pieces; no delivered message is over the limit; every pong sent carries at most
// 125 bytes; once failed or closed nothing more is sent or delivered; the UTF-8 validator agrees
// with the standard library on the stream, whole and split; the response head reader gives the
// same head, remainder or failure whole and split, and never holds more than its limit.
import Foundation
@testable @_spi(Transport) import Courier

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let start, count >= 1 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let shape = Int(bytes[0])
    let stream = Data(bytes[1...])
    let limit = [WebSocketFrameParser.defaultMaximumMessageSize, 200, 5][shape % 3]
    let piece = [1, 2, 3, 7, 130][(shape / 3) % 5]
    let compression: WebSocketDeflateParameters? = switch (shape / 15) % 3 {
    case 0: nil
    case 1: WebSocketDeflateParameters()
    default: { var parameters = WebSocketDeflateParameters(); parameters.serverNoContextTakeover = true; return parameters }()
    }

    var whole = WebSocketStateMachine(maximumMessageSize: limit, keys: .fixed(0), compression: compression)
    _ = whole.handle(.handshakeCompleted)
    let wholeActions = whole.handle(.bytesReceived(stream))

    var split = WebSocketStateMachine(maximumMessageSize: limit, keys: .fixed(0), compression: compression)
    _ = split.handle(.handshakeCompleted)
    var splitActions: [WebSocketStateMachine.Action] = []
    var offset = 0
    while offset < stream.count {
        let end = min(stream.count, offset + piece)
        splitActions += split.handle(.bytesReceived(stream.subdata(in: offset..<end)))
        offset = end
    }
    precondition(wholeActions == splitActions, "split feeding gave other actions")
    precondition(whole.state == split.state, "split feeding ended in another state")

    var ended = false
    for action in wholeActions {
        precondition(!ended, "an action followed the failure")
        switch action {
        case .deliver(.text(let text)): precondition(text.utf8.count <= limit, "a text message passed the limit")
        case .deliver(.binary(let data)): precondition(data.count <= limit, "a binary message passed the limit")
        case .send(let frame):
            // The all-zero key leaves the payload as is: 2 header bytes, 4 key bytes, at most 125 bytes.
            precondition(frame.count <= 6 + 125, "a control frame sent more than 125 bytes")
            precondition(frame[0] == 0x8A || frame[0] == 0x88, "something other than a pong or a close was sent")
        case .fail, .closeConnection: break
        case .pongReceived(let payload): precondition(payload.count <= 125)
        case .closeReceived(let frame): precondition(Data(frame.reason.utf8).count <= 123, "a close reason passed 123 bytes")
        case .closed, .refused: preconditionFailure("no connection event or request was given")
        }
        if case .closeConnection = action { ended = true }
    }
    if case .closed = whole.state {
        precondition(whole.handle(.bytesReceived(stream)).isEmpty, "a closed machine acted on more bytes")
    }

    // The validator against the standard library, whole and split at the piece size.
    let valid = String(validating: stream, as: UTF8.self) != nil
    var validator = WebSocketUTF8Validator()
    precondition((validator.validate(stream) && validator.isComplete) == valid, "the validator disagrees with the standard library")
    var pieces = WebSocketUTF8Validator()
    var ok = true
    offset = 0
    while ok, offset < stream.count {
        let end = min(stream.count, offset + piece)
        ok = pieces.validate(stream.subdata(in: offset..<end))
        offset = end
    }
    precondition((ok && pieces.isComplete) == valid, "the validator disagrees with itself when split")

    checkHeadReader(stream, piece: piece, limit: [WebSocketResponseHeadReader.defaultMaximumSize, 64, 16][shape % 3])
    return 0
}

private func describe(_ result: Result<WebSocketResponseHeadReader.Result?, WebSocketHandshakeFailure>, taken: Int) -> String {
    switch result {
    case .success(nil): return "more"
    case .success(let found?):
        return "\(found.head.statusCode) \(found.head.httpVersion) \(found.head.headers) \(found.head.setCookies) +\(taken)"
    case .failure(let failure): return "\(failure)"
    }
}

/// The handshake response head reader fed whole and in pieces gives the same outcome.
private func checkHeadReader(_ stream: Data, piece: Int, limit: Int) {
    var whole = WebSocketResponseHeadReader(url: URL(string: "ws://fuzz/")!, maximumSize: limit)
    let wholeResult = Result { () throws(WebSocketHandshakeFailure) in try whole.read(stream) }
    // What came before the remainder: the head's length.
    let wholeTaken = (try? wholeResult.get()).flatMap { $0 }.map { stream.count - $0.remainder.count } ?? 0

    var split = WebSocketResponseHeadReader(url: URL(string: "ws://fuzz/")!, maximumSize: limit)
    var splitResult: Result<WebSocketResponseHeadReader.Result?, WebSocketHandshakeFailure> = .success(nil)
    var splitTaken = 0
    var offset = 0
    while offset < stream.count {
        let end = min(stream.count, offset + piece)
        let chunk = stream.subdata(in: offset..<end)
        splitResult = Result { () throws(WebSocketHandshakeFailure) in try split.read(chunk) }
        offset = end
        if case .success(let found?) = splitResult {
            splitTaken = offset - found.remainder.count
            break
        }
        if case .failure = splitResult { break }
    }
    if case .success(let found?) = wholeResult {
        precondition(wholeTaken <= limit, "a head longer than the limit was accepted")
        precondition(found.remainder == stream.subdata(in: wholeTaken..<stream.count))
    }
    precondition(describe(wholeResult, taken: wholeTaken) == describe(splitResult, taken: splitTaken),
                 "the head reader gave another outcome when split")
}
