import Foundation

extension MockResponse {
    /// Adds a header field after the existing ones (repeated names are allowed).
    public func header(_ name: String, _ value: String) -> MockResponse {
        var copy = self
        copy.headers.add(name, value)
        return copy
    }

    /// Removes every header field called `name` (case-insensitive).
    public func removingHeader(_ name: String) -> MockResponse {
        var copy = self
        copy.headers.remove(name)
        return copy
    }

    /// Replaces the body.
    public func body(_ body: Body) -> MockResponse {
        var copy = self
        copy.body = body
        return copy
    }

    /// Replaces the reason phrase.
    public func reason(_ phrase: String) -> MockResponse {
        var copy = self
        copy.reason = phrase
        return copy
    }

    /// Sends the body with `Transfer-Encoding: chunked`, in chunks of `chunkSize` bytes.
    public func chunked(chunkSize: Int = 1024) -> MockResponse {
        withBehavior { $0.framing = .chunked(size: max(1, chunkSize)) }
    }

    /// Adds a trailer field sent after the body (repeated names are allowed, sent in order). A
    /// trailer needs a chunked body: a response that was not chunked becomes chunked.
    public func trailer(_ name: String, _ value: String) -> MockResponse {
        withBehavior {
            $0.trailers.append("\(name): \(value)")
            if case .chunked = $0.framing {} else { $0.framing = .chunked(size: 1024) }
        }
    }

    /// Sends no `Content-Length`; the body ends when the server closes the connection.
    public func closeDelimited() -> MockResponse {
        withBehavior { $0.framing = .closeDelimited }
    }

    /// Leaves out the automatic `Content-Length` but otherwise keeps the connection open, so a
    /// client cannot tell where the body ends.
    public func omitContentLength() -> MockResponse {
        withBehavior { $0.omitsContentLength = true }
    }

    /// Waits `delay` before sending the response head.
    public func headersDelay(_ delay: Duration) -> MockResponse {
        withBehavior { $0.headersDelay = delay }
    }

    /// Waits `delay` between the response head and the body.
    public func bodyDelay(_ delay: Duration) -> MockResponse {
        withBehavior { $0.bodyDelay = delay }
    }

    /// Sends at most `bytes` body bytes per `period`, pacing by deadline so the average rate is
    /// `bytes / period`.
    public func throttle(bytes: Int, every period: Duration) -> MockResponse {
        withBehavior { $0.throttle = .init(bytes: max(1, bytes), period: period) }
    }

    /// Holds the whole response until `gate` is opened (or the server shuts down).
    public func waiting(for gate: Gate) -> MockResponse {
        withBehavior { $0.gate = gate }
    }

    /// Sends `bytes` body bytes, then holds the rest (connection open) until `gate` opens: a
    /// deterministic point to suspend, cancel or join a transfer mid-body.
    public func pausing(afterBytes bytes: Int64, until gate: Gate) -> MockResponse {
        withBehavior { $0.bodyPause = ResponseBehavior.BodyPause(afterBytes: max(0, bytes), gate: gate) }
    }

    /// Applies a socket effect at a point in the exchange; the connection ends there.
    public func effect(_ effect: SocketEffect, at point: EffectPoint) -> MockResponse {
        withBehavior { $0.effects.append(.init(effect: effect, point: point)) }
    }

    /// Sends only the first `bytes` body bytes of the declared length, then closes (FIN).
    public func truncated(afterBytes bytes: Int64) -> MockResponse {
        effect(.close, at: .responseBody(afterBytes: bytes))
    }

    /// Sends the body as a valid gzip stream (stored deflate blocks) with
    /// `Content-Encoding: gzip`; `Content-Length` is the encoded length.
    public func gzip() -> MockResponse {
        withBehavior { $0.coding = .gzip }.replacingHeader("Content-Encoding", "gzip")
    }

    /// Sends the body as a valid zlib stream (stored deflate blocks) with
    /// `Content-Encoding: deflate`; `Content-Length` is the encoded length.
    public func deflate() -> MockResponse {
        withBehavior { $0.coding = .deflate }.replacingHeader("Content-Encoding", "deflate")
    }

    /// Sends `Connection: close` and closes the connection after the response.
    public func connectionClose() -> MockResponse {
        withBehavior { $0.closesConnection = true }
    }

    /// Whether to answer `Expect: 100-continue` with `100 Continue` before reading the request
    /// body (the default). With false the server sends no interim response and reads the body
    /// whenever the client sends it.
    ///
    /// Only honoured for queued responses: routes and dispatchers see the whole request, so the
    /// body has already been read by the time they run.
    public func continueResponse(_ sendsContinue: Bool) -> MockResponse {
        withBehavior { $0.sendsContinue = sendsContinue }
    }

    func withBehavior(_ change: (inout ResponseBehavior) -> Void) -> MockResponse {
        var copy = self
        change(&copy.behavior)
        return copy
    }

    private func replacingHeader(_ name: String, _ value: String) -> MockResponse {
        var copy = self
        copy.headers.set(name, value)
        return copy
    }
}

extension MockResponse {
    /// 200 with a UTF-8 text body (`Content-Type: text/plain; charset=utf-8`).
    public static func ok(_ text: String) -> MockResponse {
        .text(text)
    }

    /// 200 with a binary body (`Content-Type: application/octet-stream`).
    public static func ok(_ data: Data) -> MockResponse {
        MockResponse(status: 200, headers: ["Content-Type": "application/octet-stream"], body: .data(data))
    }

    /// A status with an empty body.
    public static func status(_ status: Int) -> MockResponse {
        MockResponse(status: status)
    }

    /// A JSON body (`Content-Type: application/json`).
    public static func json(_ json: String, status: Int = 200) -> MockResponse {
        MockResponse(status: status, headers: ["Content-Type": "application/json"], body: .text(json))
    }

    /// A UTF-8 text body (`Content-Type: text/plain; charset=utf-8`).
    public static func text(_ text: String, status: Int = 200) -> MockResponse {
        MockResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: .text(text))
    }

    /// A redirect to `location` with an empty body.
    public static func redirect(to location: String, status: Int = 302) -> MockResponse {
        MockResponse(status: status, headers: ["Location": location])
    }
}
