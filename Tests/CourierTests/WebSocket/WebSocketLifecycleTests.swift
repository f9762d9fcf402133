import Testing
import Foundation
@_spi(Transport) @testable import Courier

/// ``WebSocketLifecycle`` as event → action tables, without I/O: every way a connection opens,
/// closes or fails, and how the end it records reads.
@Suite struct WebSocketLifecycleTests {
    static let url = URL(string: "ws://example.com/live")!

    static func head(_ status: Int, contentLength: Int? = nil) -> ResponseHead {
        var fields: [(name: String, value: String)] = []
        if let contentLength { fields.append(("Content-Length", "\(contentLength)")) }
        return ResponseHead(statusCode: status, fields: fields, url: url, httpVersion: "HTTP/1.1")
    }

    /// A lifecycle driven through `events`; returns it and the actions of the last event.
    static func run(_ events: [WebSocketLifecycle.Event]) -> (WebSocketLifecycle, [WebSocketLifecycle.Action]) {
        var lifecycle = WebSocketLifecycle(url: url)
        var last: [WebSocketLifecycle.Action] = []
        for event in events { last = lifecycle.handle(event) }
        return (lifecycle, last)
    }

    static let opened: [WebSocketLifecycle.Event] = [.connecting, .connected, .accepted]
    static let serverClose = WebSocketCloseFrame(code: WebSocketCloseCode(4001), reason: "x")
    static let reset = CourierError(.connectionLost, "The connection was lost: Connection reset by peer")
    static let abnormal = WebSocketCloseStatus(code: .abnormalClosure)

    @Test func openingWritesTheHandshakeThenOpens() {
        var lifecycle = WebSocketLifecycle(url: Self.url)
        #expect(lifecycle.handle(.connecting) == [])
        #expect(lifecycle.phase == .connecting)
        #expect(lifecycle.handle(.connected) == [.writeHandshake])
        #expect(lifecycle.phase == .handshaking)
        #expect(lifecycle.handle(.accepted) == [.opened, .stateChanged(.open)])
        #expect(lifecycle.phase == .open)
    }

    /// (events after opening, the end recorded, whether the last actions finish with it)
    static let endings: [(String, [WebSocketLifecycle.Event], WebSocket.State, CourierError.Kind?, WebSocketCloseCode?)] = [
        // §7.1.2: the client closes, the server answers, the server drops TCP: a normal close.
        (
            "client closes cleanly",
            [
                .closeRequested(.normalClosure, reason: "bye"), .closeReceived(WebSocketCloseFrame(code: .normalClosure, reason: "bye")),
                .protocolEnded(.clean(WebSocketCloseFrame(code: .normalClosure, reason: "bye"))),
            ], .closed, nil, .normalClosure
        ),
        // §7.1.4: the server closes with 1000 or 1001 first: the sequence finishes normally.
        (
            "server closes with 1001",
            [.closeReceived(WebSocketCloseFrame(code: .goingAway)), .protocolEnded(.clean(WebSocketCloseFrame(code: .goingAway)))], .closed,
            nil, .goingAway
        ),
        (
            "server closes without a code",
            [.closeReceived(WebSocketCloseFrame(code: .noStatusReceived)), .protocolEnded(.clean(WebSocketCloseFrame(code: .noStatusReceived)))],
            .closed, nil, .noStatusReceived
        ),
        // Any other code from the server is an error carrying it.
        (
            "server closes with 4001", [.closeReceived(serverClose), .protocolEnded(.clean(serverClose))], .closed, .webSocketClosed,
            WebSocketCloseCode(4001)
        ),
        // Once the server's close frame is in, how TCP then ends does not matter (§7.1.5: 1006 is
        // for a connection that ended without one): a reset, a failed write, the close timeout.
        (
            "server closes with 4001, then resets", [.closeReceived(serverClose), .failed(reset, abnormal)], .closed, .webSocketClosed,
            WebSocketCloseCode(4001)
        ),
        (
            "server closes with 4001, then drops", [.closeReceived(serverClose), .protocolEnded(.abnormal)], .closed, .webSocketClosed,
            WebSocketCloseCode(4001)
        ),
        (
            "server closes with 1000, then resets", [.closeReceived(WebSocketCloseFrame(code: .normalClosure)), .failed(reset, abnormal)], .closed,
            nil, .normalClosure
        ),
        (
            "server closes with 4001, then the ping timeout", [.closeReceived(serverClose), .failed(CourierError(.timedOut, "no pong"), abnormal)],
            .closed, .webSocketClosed, WebSocketCloseCode(4001)
        ),
        (
            "client closes, the server answers, then resets",
            [.closeRequested(.normalClosure, reason: ""), .closeReceived(WebSocketCloseFrame(code: .normalClosure)), .failed(reset, abnormal)],
            .closed, nil, .normalClosure
        ),
        (
            "client closes with 4000, the server answers, then drops",
            [
                .closeRequested(WebSocketCloseCode(4000), reason: ""), .closeReceived(WebSocketCloseFrame(code: WebSocketCloseCode(4000))),
                .protocolEnded(.abnormal),
            ], .closed, nil, WebSocketCloseCode(4000)
        ),
        // The client's own abnormal code is what it asked for: no error.
        (
            "client closes with 4000",
            [
                .closeRequested(WebSocketCloseCode(4000), reason: ""), .closeReceived(WebSocketCloseFrame(code: WebSocketCloseCode(4000))),
                .protocolEnded(.clean(WebSocketCloseFrame(code: WebSocketCloseCode(4000)))),
            ], .closed, nil, WebSocketCloseCode(4000)
        ),
        // §7.1.5: no close frame: 1006 and connectionLost.
        ("TCP drops while open", [.protocolEnded(.abnormal)], .closed, .connectionLost, .abnormalClosure),
        (
            "TCP drops while closing", [.closeRequested(.normalClosure, reason: ""), .protocolEnded(.abnormal)], .closed, .connectionLost,
            .abnormalClosure
        ),
        // §7.1.7: a violation fails the connection with its code.
        (
            "protocol violation", [.protocolEnded(.failed(WebSocketProtocolViolation(.maskedFrame)))], .closed, .webSocketProtocolViolation,
            .protocolError
        ),
        (
            "message too big", [.protocolEnded(.failed(WebSocketProtocolViolation(.messageTooLarge(size: 10, limit: 5))))], .closed,
            .webSocketProtocolViolation, .messageTooBig
        ),
        ("cancelled while open", [.cancelled], .closed, .cancelled, .goingAway),
        ("cancelled while closing", [.closeRequested(.normalClosure, reason: ""), .cancelled], .closed, .cancelled, .goingAway),
        (
            "a transport failure", [.failed(CourierError(.connectionLost, "reset"), WebSocketCloseStatus(code: .abnormalClosure))], .closed,
            .connectionLost, .abnormalClosure
        ),
    ]

    @Test(arguments: Self.endings.indices)
    func endingsRecordHowTheConnectionEnded(index: Int) {
        let (name, events, state, kind, code) = Self.endings[index]
        let (lifecycle, actions) = Self.run(Self.opened + events)
        #expect(lifecycle.phase.state == state, "\(name)")
        guard case .closed(let end) = lifecycle.phase else {
            Issue.record("\(name): not closed")
            return
        }
        #expect(actions.contains(.finish(end)), "\(name): the transition that ends it carries the end")
        #expect(actions.last == .stateChanged(.closed), "\(name)")
        #expect(end.status?.code == code, "\(name)")
        switch end {
        case .closed: #expect(kind == nil, "\(name)")
        case .failed(let error, _): #expect(error.kind == kind, "\(name): \(error)")
        }
    }

    @Test func closingSendsTheCloseFrameOnceAndWaitsWithATimeout() {
        var lifecycle = WebSocketLifecycle(url: Self.url)
        for event in Self.opened { _ = lifecycle.handle(event) }
        #expect(
            lifecycle.handle(.closeRequested(.normalClosure, reason: "done"))
                == [.sendClose(.normalClosure, reason: "done"), .scheduleCloseTimeout, .stateChanged(.closing)])
        #expect(lifecycle.handle(.closeRequested(.goingAway, reason: "")) == [], "the first close stands")
        #expect(lifecycle.phase == .closing(serverFirst: false, serverClose: nil))
        // Once the server's close frame is in, the wait is for the server to drop TCP.
        #expect(lifecycle.handle(.closeReceived(WebSocketCloseFrame(code: .normalClosure))) == [.scheduleCloseTimeout])
        #expect(lifecycle.phase == .closing(serverFirst: false, serverClose: WebSocketCloseFrame(code: .normalClosure)))
    }

    @Test func theServerClosingFirstIsRemembered() {
        let (lifecycle, actions) = Self.run(Self.opened + [.closeReceived(Self.serverClose)])
        #expect(actions == [.scheduleCloseTimeout, .stateChanged(.closing)])
        #expect(lifecycle.phase == .closing(serverFirst: true, serverClose: Self.serverClose))
        let (ended, _) = Self.run(
            Self.opened + [.closeReceived(Self.serverClose), .protocolEnded(.clean(WebSocketCloseFrame(code: .normalClosure)))])
        if case .closed(.closed(let status)) = ended.phase { #expect(status.initiatedByServer) } else { Issue.record("not closed") }
    }

    @Test func cancellingAnOpenConnectionSendsGoingAwayAndEndsAtOnce() {
        let (_, actions) = Self.run(Self.opened + [.cancelled])
        #expect(actions.first == .sendClose(.goingAway, reason: ""))
        #expect(actions.count == 3, "send 1001, finish, state change: no waiting for the answer")
    }

    @Test(arguments: [[], [.connecting], [.connecting, .connected]] as [[WebSocketLifecycle.Event]])
    func closingOrCancellingBeforeOpeningEndsWithCancelled(prefix: [WebSocketLifecycle.Event]) {
        for last in [WebSocketLifecycle.Event.cancelled, .closeRequested(.normalClosure, reason: "")] {
            let (lifecycle, actions) = Self.run(prefix + [last])
            guard case .closed(.failed(let error, let status)) = lifecycle.phase else {
                Issue.record("not failed")
                continue
            }
            #expect(error.kind == .cancelled)
            #expect(status == nil, "no close frame was exchanged")
            #expect(!actions.contains { if case .sendClose = $0 { true } else { false } }, "nothing is sent before the handshake")
        }
    }

    @Test func aRefusalEndsOnceItsBodyIsReadOrTheConnectionEnds() {
        // Content-Length: the body's end is known.
        var lifecycle = WebSocketLifecycle(url: Self.url)
        for event in [WebSocketLifecycle.Event.connecting, .connected, .refused(Self.head(401, contentLength: 6))] { _ = lifecycle.handle(event) }
        #expect(lifecycle.handle(.rejectionBody(Data("exp".utf8), ended: false)) == [])
        let actions = lifecycle.handle(.rejectionBody(Data("ired".utf8), ended: false))
        guard case .closed(.failed(let error, nil)) = lifecycle.phase else {
            Issue.record("not failed")
            return
        }
        #expect(actions.first == .finish(.failed(error, nil)))
        #expect(error.kind == .webSocketHandshakeFailed)
        #expect(error.responseCode == 401)
        #expect(error.webSocketHandshakeResponse?.body == Data("expire".utf8), "the body is cut at Content-Length")

        // No length: until the connection ends; no body at all: at once.
        let (untilEnd, _) = Self.run([
            .connecting, .connected, .refused(Self.head(500)), .rejectionBody(Data("a".utf8), ended: false),
            .rejectionBody(Data(), ended: true),
        ])
        #expect(untilEnd.phase.state == .closed)
        let (empty, _) = Self.run([.connecting, .connected, .refused(Self.head(404, contentLength: 0))])
        #expect(empty.phase.state == .closed)
        // A failure while the body is read still reports the refusal, not the failure.
        let (failed, _) = Self.run([.connecting, .connected, .refused(Self.head(403)), .failed(CourierError(.connectionLost, "reset"), nil)])
        if case .closed(.failed(let error, _)) = failed.phase { #expect(error.kind == .webSocketHandshakeFailed) }
    }

    @Test func theRefusalBodyKeptIsBounded() {
        var lifecycle = WebSocketLifecycle(url: Self.url)
        for event in [WebSocketLifecycle.Event.connecting, .connected, .refused(Self.head(400))] { _ = lifecycle.handle(event) }
        _ = lifecycle.handle(.rejectionBody(Data(count: WebSocketLifecycle.rejectionBodyLimit + 100), ended: false))
        guard case .closed(.failed(let error, _)) = lifecycle.phase else {
            Issue.record("a body at the limit ends the read")
            return
        }
        #expect(error.webSocketHandshakeResponse?.body.count == WebSocketLifecycle.rejectionBodyLimit)
    }

    @Test func theOpeningTimeoutOnlyCountsBeforeOpening() {
        let (open, actions) = Self.run(Self.opened + [.openingTimedOut(.seconds(1))])
        #expect(open.phase == .open)
        #expect(actions == [])
        let (handshaking, _) = Self.run([.connecting, .connected, .openingTimedOut(.seconds(1))])
        if case .closed(.failed(let error, _)) = handshaking.phase { #expect(error.kind == .timedOut) } else { Issue.record("not failed") }
    }

    @Test func nothingHappensAfterTheEnd() {
        let (lifecycle, _) = Self.run(Self.opened + [.cancelled])
        var ended = lifecycle
        for event in [
            WebSocketLifecycle.Event.accepted, .closeReceived(Self.serverClose), .cancelled, .protocolEnded(.abnormal),
            .failed(CourierError(.timedOut, "late"), nil), .closeRequested(.normalClosure, reason: ""),
        ] {
            #expect(ended.handle(event) == [])
        }
        #expect(ended.phase == lifecycle.phase, "the first end stands")
    }
}
