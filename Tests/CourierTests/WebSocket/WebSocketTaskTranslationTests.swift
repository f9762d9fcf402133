import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

/// ``WebSocketTaskTranslation`` as tables, without I/O: what the URLSession backend
/// (`URLSessionWebSocketTask`) hands over and how Courier reads it — messages, close codes and
/// reasons, the handshake request, and every way a task's end becomes the socket's end (run
/// through ``WebSocketLifecycle`` to the state, error kind and close status the caller sees).
@Suite struct WebSocketTaskTranslationTests {
    static let url = URL(string: "wss://example.com/live")!

    // MARK: Messages

    static let messages: [(WebSocketMessage, URLSessionWebSocketTask.Message)] = [
        (.text("hello"), .string("hello")),
        (.text(""), .string("")),
        (.text("ünïcödé 🎉"), .string("ünïcödé 🎉")),
        (.binary(Data([0, 1, 2, 255])), .data(Data([0, 1, 2, 255]))),
        (.binary(Data()), .data(Data())),
    ]

    @Test(arguments: 0..<messages.count)
    func messagesMapBothWays(_ index: Int) {
        let (message, taskMessage) = Self.messages[index]
        #expect(WebSocketTaskTranslation.message(taskMessage) == message)
        let there = WebSocketTaskTranslation.taskMessage(message)
        #expect(WebSocketTaskTranslation.message(there) == message, "round trip of \(message)")
        switch (there, message) {
        case (.string(let text), .text(let expected)): #expect(text == expected)
        case (.data(let data), .binary(let expected)): #expect(data == expected)
        default: Issue.record("\(message) became \(there)")
        }
    }

    // MARK: Close codes and reasons

    /// Every code URLSession names goes out as itself.
    static let namedCodes: [(WebSocketCloseCode, URLSessionWebSocketTask.CloseCode)] = [
        (.normalClosure, .normalClosure), (.goingAway, .goingAway), (.protocolError, .protocolError),
        (.unsupportedData, .unsupportedData), (.invalidFramePayloadData, .invalidFramePayloadData),
        (.policyViolation, .policyViolation), (.messageTooBig, .messageTooBig), (.mandatoryExtension, .mandatoryExtensionMissing),
        (.internalServerError, .internalServerError),
    ]

    @Test func closeCodesGoOutAsTheTasksOwn() {
        for (code, taskCode) in Self.namedCodes {
            #expect(WebSocketTaskTranslation.taskCloseCode(code) == taskCode, "\(code)")
            #expect(taskCode.rawValue == Int(code.rawValue), "\(code)")
        }
        // An application's own code: Apple's CloseCode carries any number, FoundationNetworking's
        // only those it names (so 1000 goes out there).
        #if canImport(FoundationNetworking)
        #expect(WebSocketTaskTranslation.taskCloseCode(WebSocketCloseCode(4001)) == .normalClosure)
        #else
        #expect(WebSocketTaskTranslation.taskCloseCode(WebSocketCloseCode(4001)).rawValue == 4001)
        #endif
    }

    /// (the task's close code, as URLSession names it or a raw number, its reason, the frame read)
    static let closeFrames: [(Int, Data?, WebSocketCloseFrame?)] = [
        (URLSessionWebSocketTask.CloseCode.invalid.rawValue, nil, nil),
        (URLSessionWebSocketTask.CloseCode.invalid.rawValue, Data("ignored".utf8), nil),
        (URLSessionWebSocketTask.CloseCode.normalClosure.rawValue, nil, WebSocketCloseFrame(code: .normalClosure)),
        (URLSessionWebSocketTask.CloseCode.normalClosure.rawValue, Data(), WebSocketCloseFrame(code: .normalClosure)),
        (URLSessionWebSocketTask.CloseCode.goingAway.rawValue, Data("bye".utf8), WebSocketCloseFrame(code: .goingAway, reason: "bye")),
        (URLSessionWebSocketTask.CloseCode.noStatusReceived.rawValue, nil, WebSocketCloseFrame(code: .noStatusReceived)),
        (URLSessionWebSocketTask.CloseCode.abnormalClosure.rawValue, nil, WebSocketCloseFrame(code: .abnormalClosure)),
        (
            URLSessionWebSocketTask.CloseCode.messageTooBig.rawValue, Data("too big".utf8),
            WebSocketCloseFrame(code: .messageTooBig, reason: "too big")
        ),
        (4001, Data("bye".utf8), WebSocketCloseFrame(code: WebSocketCloseCode(4001), reason: "bye")),
        (70000, nil, nil),
        (
            URLSessionWebSocketTask.CloseCode.internalServerError.rawValue, Data([0x6F, 0xFF, 0x6B]),
            WebSocketCloseFrame(code: .internalServerError, reason: "o\u{FFFD}k")
        ),
    ]

    @Test func closeFramesComeInFromTheTasksCodeAndReason() {
        for (code, reason, frame) in Self.closeFrames {
            #expect(WebSocketTaskTranslation.closeFrame(code: code, reason: reason) == frame, "\(code) \(String(describing: reason))")
        }
    }

    @Test func reasonsGoOutAsUTF8OrNothing() {
        #expect(WebSocketTaskTranslation.taskReason("") == nil)
        #expect(WebSocketTaskTranslation.taskReason("bye") == Data("bye".utf8))
        #expect(WebSocketTaskTranslation.taskReason("ché") == Data("ché".utf8))
    }

    // MARK: The handshake request

    @Test func theTaskRequestCarriesTheURLHeadersAndSubprotocols() throws {
        let cases: [(url: String, protocols: [String], headers: HTTPHeaders, expectedURL: String)] = [
            ("https://example.com/v1/live?x=1", ["chat", "superchat"], ["Authorization": "Bearer t", "X-A": "1"], "wss://example.com/v1/live?x=1"),
            ("http://example.com:8080/live", [], [:], "ws://example.com:8080/live"),
            ("wss://example.com/live", ["chat"], ["Origin": "https://app.example.com"], "wss://example.com/live"),
        ]
        for (url, protocols, headers, expectedURL) in cases {
            let handshake = try WebSocketHandshakeRequest(url: URL(string: url)!, protocols: protocols, headers: headers)
            let request = WebSocketTaskTranslation.taskRequest(for: handshake, timeout: 12)
            #expect(request.url?.absoluteString == expectedURL)
            #expect(request.httpMethod == "GET")
            #expect(request.timeoutInterval == 12)
            #expect(request.value(forHTTPHeaderField: "Sec-WebSocket-Protocol") == (protocols.isEmpty ? nil : protocols.joined(separator: ", ")))
            for header in headers { #expect(request.value(forHTTPHeaderField: header.name) == header.value, "\(header.name)") }
            // URLSession writes the upgrade itself.
            #expect(request.value(forHTTPHeaderField: "Sec-WebSocket-Key") == nil)
            #expect(request.value(forHTTPHeaderField: "Upgrade") == nil)
        }
    }

    // MARK: The end

    /// What the caller sees in the end: the state stays `.closed`; the error kind (nil: a normal
    /// close) and the close status.
    struct Seen: Equatable, CustomStringConvertible {
        var kind: CourierError.Kind?
        var code: WebSocketCloseCode?
        var reason = ""
        var description: String { "\(kind.map { "\($0)" } ?? "closed") \(code.map { "\($0)" } ?? "-") \(reason)" }
    }

    typealias End = WebSocketTaskTranslation.End

    static func end(
        _ error: (any Error)? = nil, answer: Int? = nil, headers: HTTPHeaders = [:], serverClose: WebSocketCloseFrame? = nil,
        opened: Bool = true, sentClose: WebSocketCloseFrame? = nil, foundationNetworking: Bool = false
    ) -> End {
        End(
            error: error, handshakeAnswer: answer.map { ($0, headers) }, serverClose: serverClose, opened: opened, sentClose: sentClose,
            maximumMessageSize: 1 << 20, foundationNetworking: foundationNetworking)
    }

    static let notSupported = URLError(.unsupportedURL, userInfo: [NSLocalizedDescriptionKey: "WebSockets not supported by libcurl"])

    static let endings: [(String, End, Seen)] = [
        // The server's close frame: 1000/1001/none end normally, any other code is an error carrying it.
        ("server closes 1000", end(serverClose: WebSocketCloseFrame(code: .normalClosure)), Seen(kind: nil, code: .normalClosure)),
        (
            "server closes 1001 with a task error",
            end(URLError(.networkConnectionLost), serverClose: WebSocketCloseFrame(code: .goingAway, reason: "bye")),
            Seen(kind: nil, code: .goingAway, reason: "bye")
        ),
        (
            "server closes 4001", end(serverClose: WebSocketCloseFrame(code: WebSocketCloseCode(4001), reason: "bye")),
            Seen(kind: .webSocketClosed, code: WebSocketCloseCode(4001), reason: "bye")
        ),
        (
            "server closes 1011", end(serverClose: WebSocketCloseFrame(code: .internalServerError)),
            Seen(kind: .webSocketClosed, code: .internalServerError)
        ),
        // The application's close, answered or not as far as URLSession tells.
        (
            "client close answered by 1000",
            end(serverClose: WebSocketCloseFrame(code: .normalClosure), sentClose: WebSocketCloseFrame(code: .normalClosure)),
            Seen(kind: nil, code: .normalClosure)
        ),
        (
            "client close, task completes", end(sentClose: WebSocketCloseFrame(code: WebSocketCloseCode(4000), reason: "done")),
            Seen(kind: nil, code: WebSocketCloseCode(4000), reason: "done")
        ),
        (
            "client close, task cancelled", end(URLError(.cancelled), sentClose: WebSocketCloseFrame(code: .normalClosure)),
            Seen(kind: nil, code: .normalClosure)
        ),
        (
            "client close, connection lost", end(URLError(.networkConnectionLost), sentClose: WebSocketCloseFrame(code: .normalClosure)),
            Seen(kind: .connectionLost, code: .abnormalClosure)
        ),
        // Open, then no close frame.
        ("completes without a close frame", end(), Seen(kind: .connectionLost, code: .abnormalClosure)),
        ("connection lost", end(URLError(.networkConnectionLost)), Seen(kind: .connectionLost, code: .abnormalClosure)),
        ("timed out", end(URLError(.timedOut)), Seen(kind: .timedOut, code: .abnormalClosure)),
        ("cancelled by the transport's shutdown", end(URLError(.cancelled)), Seen(kind: .sessionInvalidated, code: .abnormalClosure)),
        ("message too long", end(POSIXError(.EMSGSIZE)), Seen(kind: .webSocketProtocolViolation, code: .messageTooBig)),
        // Never opened: the handshake's answer, FoundationNetworking's missing support, the rest.
        (
            "refused 401", end(URLError(.badServerResponse), answer: 401, headers: ["WWW-Authenticate": "Bearer"], opened: false),
            Seen(kind: .webSocketHandshakeFailed)
        ),
        ("refused 403 without an error", end(answer: 403, opened: false), Seen(kind: .webSocketHandshakeFailed)),
        ("redirected", end(answer: 302, headers: ["Location": "/elsewhere"], opened: false), Seen(kind: .webSocketHandshakeFailed)),
        ("FoundationNetworking without WebSockets", end(notSupported, opened: false, foundationNetworking: true), Seen(kind: .invalidConfiguration)),
        ("unsupported URL on Apple", end(URLError(.unsupportedURL), opened: false), Seen(kind: .invalidURL)),
        ("cannot connect", end(URLError(.cannotConnectToHost), opened: false), Seen(kind: .cannotConnect)),
        ("cannot find host", end(URLError(.cannotFindHost), opened: false), Seen(kind: .cannotFindHost)),
        ("untrusted certificate", end(URLError(.serverCertificateUntrusted), opened: false), Seen(kind: .serverCertificateUntrusted)),
        ("handshake timed out", end(URLError(.timedOut), opened: false), Seen(kind: .timedOut)),
        ("cancelled before opening", end(URLError(.cancelled), opened: false), Seen(kind: .sessionInvalidated)),
        ("ended before the handshake", end(opened: false), Seen(kind: .invalidResponse)),
        ("101 answer, then a failure", end(URLError(.networkConnectionLost), answer: 101, opened: false), Seen(kind: .connectionLost)),
    ]

    /// The end as the socket applies it: a server close frame while open goes through closing first.
    static func run(_ end: End) -> (WebSocketLifecycle, [WebSocket.State]) {
        var lifecycle = WebSocketLifecycle(url: url)
        var states: [WebSocket.State] = []
        func handle(_ event: WebSocketLifecycle.Event) {
            for case .stateChanged(let state) in lifecycle.handle(event) { states.append(state) }
        }
        handle(.connecting)
        if end.opened {
            handle(.connected)
            handle(.accepted)
            if let sent = end.sentClose { handle(.closeRequested(sent.code, reason: sent.reason)) }
        }
        let event = WebSocketTaskTranslation.event(for: end, url: url)
        if case .protocolEnded(.clean) = event, let frame = end.serverClose, lifecycle.phase == .open { handle(.closeReceived(frame)) }
        handle(event)
        return (lifecycle, states)
    }

    @Test(arguments: 0..<endings.count)
    func aTasksEndBecomesTheSocketsEnd(_ index: Int) throws {
        let (name, end, expected) = Self.endings[index]
        let (lifecycle, states) = Self.run(end)
        guard case .closed(let socketEnd) = lifecycle.phase else {
            Issue.record("\(name): not closed but \(lifecycle.phase)")
            return
        }
        var seen = Seen(kind: nil, code: socketEnd.status?.code, reason: socketEnd.status?.reason ?? "")
        if case .failed(let error, _) = socketEnd { seen.kind = error.kind }
        #expect(seen == expected, "\(name)")
        // The same states as over the curl transport: open, closing (when a close frame was
        // exchanged), closed.
        let closeExchanged = end.sentClose != nil || end.serverClose != nil
        let expectedStates: [WebSocket.State] = end.opened ? (closeExchanged ? [.open, .closing, .closed] : [.open, .closed]) : [.closed]
        #expect(states == expectedStates, "\(name)")
        if case .failed(let error, _) = socketEnd {
            #expect(error.url == Self.url, "\(name)")
            if error.kind == .webSocketClosed { #expect(error.webSocketCloseStatus?.code == expected.code, "\(name)") }
        }
    }

    @Test func aRefusalCarriesTheStatusAndHeaders() throws {
        let event = WebSocketTaskTranslation.event(for: Self.end(answer: 401, headers: ["WWW-Authenticate": "Bearer"], opened: false), url: Self.url)
        guard case .failed(let error, nil) = event else {
            Issue.record("\(event)")
            return
        }
        #expect(error.kind == .webSocketHandshakeFailed)
        #expect(error.responseCode == 401)
        let response = try #require(error.webSocketHandshakeResponse)
        #expect(response.statusCode == 401)
        #expect(response.headers["WWW-Authenticate"] == "Bearer")
        #expect(response.body.isEmpty, "URLSession does not hand over a refusal's body")

        let redirect = WebSocketTaskTranslation.event(for: Self.end(answer: 302, headers: ["Location": "/elsewhere"], opened: false), url: Self.url)
        guard case .failed(let redirectError, nil) = redirect else {
            Issue.record("\(redirect)")
            return
        }
        #expect(redirectError.message.contains("/elsewhere"))
        #expect(redirectError.message.contains("does not follow"))
    }

    @Test func foundationNetworkingsMissingSupportSaysToUseTheCurlTransport() throws {
        let event = WebSocketTaskTranslation.event(for: Self.end(Self.notSupported, opened: false, foundationNetworking: true), url: Self.url)
        guard case .failed(let error, nil) = event else {
            Issue.record("\(event)")
            return
        }
        #expect(error.kind == .invalidConfiguration)
        #expect(error.message.contains("use the curl transport"))
        #expect(error.message.contains("WebSockets not supported by libcurl"))
        #expect(error.underlyingError is URLError)
    }
}
