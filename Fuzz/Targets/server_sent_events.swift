// Fuzz target: the Server-Sent Events parser (ServerSentEventParser) on arbitrary bytes.
//
// Input: byte 0 picks how the rest is split into chunks and the event size limit; the rest is the stream.
// Properties: nothing traps; the events (and the last event ID and retry) are the same whether the
// stream is fed whole or in pieces; an over-long event fails the same way both ways; no event's
// data passes the limit.
import Foundation
@testable import Courier

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let start, count >= 1 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let shape = Int(bytes[0])
    let stream = Data(bytes[1...])
    let limit = [ServerSentEventParser.defaultMaximumEventSize, 64, 7][shape % 3]
    let piece = [1, 2, 3, 5, 64][(shape / 3) % 5]

    var whole = ServerSentEventParser(maximumEventSize: limit)
    let wholeResult = Result { () throws(CourierError) in try whole.parse(stream) }

    var split = ServerSentEventParser(maximumEventSize: limit)
    var splitEvents: [ServerSentEvent] = []
    var splitError: CourierError?
    var offset = 0
    while offset < stream.count {
        let end = min(stream.count, offset + piece)
        do throws(CourierError) {
            splitEvents += try split.parse(stream.subdata(in: offset..<end))
        } catch {
            splitError = error
            break
        }
        offset = end
    }
    switch wholeResult {
    case .success(let events):
        precondition(splitError == nil, "split feeding failed where whole feeding did not")
        precondition(events == splitEvents, "split feeding gave other events")
        precondition(whole.lastEventID == split.lastEventID && whole.reconnectionTime == split.reconnectionTime)
        for event in events { precondition(event.data.utf8.count <= limit * 3, "an event passed the limit") }
    case .failure(let error):
        precondition(error.kind == .responseTooLarge)
        precondition(splitError?.kind == .responseTooLarge, "whole feeding failed where split feeding did not")
    }
    return 0
}
