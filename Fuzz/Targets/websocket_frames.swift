// Fuzz target: the WebSocket frame parser, message assembler and protocol state machine
// (WebSocketStateMachine) on arbitrary server bytes, and the incremental UTF-8 validator.
//
// Input: byte 0 picks how the rest is split into chunks and the message size limit; the rest is
// the stream the server sends after the handshake.
// Properties: nothing traps; the actions and the final state are the same whether the stream is fed
// whole or in pieces; no delivered message is over the limit; every pong sent carries at most
// 125 bytes; once failed or closed nothing more is sent or delivered; the UTF-8 validator agrees
// with the standard library on the stream, whole and split.
import Foundation
@testable import Courier

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let start, count >= 1 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let shape = Int(bytes[0])
    let stream = Data(bytes[1...])
    let limit = [WebSocketFrameParser.defaultMaximumMessageSize, 200, 5][shape % 3]
    let piece = [1, 2, 3, 7, 130][(shape / 3) % 5]

    var whole = WebSocketStateMachine(maximumMessageSize: limit, keys: .fixed(0))
    _ = whole.handle(.handshakeCompleted)
    let wholeActions = whole.handle(.bytesReceived(stream))

    var split = WebSocketStateMachine(maximumMessageSize: limit, keys: .fixed(0))
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
        case .closeHandshakeCompleted: break
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
    return 0
}
