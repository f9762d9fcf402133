import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierTestServer

// The `///` examples of the Alamofire-parity APIs of #26 (part A), as written, run against
// CourierTestServer: only `import Courier` (no @testable), so they use nothing users cannot.
// `print` in the examples goes to `Printed` below instead of the test log.

private struct Order: Codable, Sendable { let item: Int }
private struct Receipt: Decodable, Sendable { let id: Int }
private struct Tick: Codable, Sendable, Equatable { let symbol: String; let price: Double }

/// Signs every attempt (the `interceptor:` example's adapter).
private struct SigningAdapter: RequestInterceptor {
    let key: String
    func adapt(_ request: URLRequest, for session: Session) async throws -> URLRequest {
        var signed = request
        signed.setValue("HMAC \(key)", forHTTPHeaderField: "X-Signature")
        return signed
    }
}

@Suite struct ParityExamplesA {
    /// What the examples printed, in order.
    private let printed = Collected<String>()

    private func print(_ items: Any..., terminator: String = "\n") {
        printed.append(items.map { "\($0)" }.joined(separator: " ") + terminator)
    }

    private func session(_ server: TestServer, _ transport: TransportUnderTest) -> Session {
        makeSession(transport, server: server)
    }

    @Test(arguments: TransportUnderTest.available)
    func leavingAStreamLoop(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok(Data([1, 2, 0x04, 5])))
            let session = session(server, transport)
            // DataStreamRequest.streamingData(automaticallyCancelling:)
            let request = session.streamRequest("events")
            for try await chunk in request.streamingData() {
                if chunk.contains(0x04) { break }  // the request is cancelled here
            }
            #expect(await request.state == .cancelled)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func perRequestInterceptorAndMonitors(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue([.json(#"[{"item":1}]"#), .ok("report")])
            let api = session(server, transport)
            let key = "k1"
            // Session.request(_:method:headers:timeout:interceptor:requestModifier:)
            let signed = try await api.request("orders", interceptor: SigningAdapter(key: key))
                .validate()
                .serializingDecodable([Order].self).value
            #expect(signed.map(\.item) == [1])
            #expect(try await server.takeRequest().headers["X-Signature"] == "HMAC k1")

            let lines = Collected<String>()
            let session = api
            // Request.eventMonitors(_:)
            let timing = LoggingMonitor(verbose: true) { lines.append($0) }  // the example's `LoggingMonitor(verbose: true)`, captured
            let text = try await session.request("slow/report")
                .eventMonitors([timing])
                .serializingString().value
            #expect(text == "report")
            #expect(lines.all.count == 1)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func onHTTPResponseAndDecideHTTPResponse(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue([
                .ok("report"), .text("a,b\n", status: 200).header("Content-Type", "text/plain"),
                MockResponse.ok(Data(count: 1000)).header("Content-Length", "1000"),
            ])
            let session = session(server, transport)
            // Request.onHTTPResponse(queue:perform:) — observing
            let text = try await session.request("report")
                .onHTTPResponse { response in print("status", response.statusCode) }
                .serializingString().value
            #expect(text == "report")

            // Request.onHTTPResponse(queue:perform:) — deciding through a callback
            let outcome: DataResponse<String, CourierError> = await withCheckedContinuation { continuation in
                session.request("export.csv")
                    .onHTTPResponse { response, decide in
                        decide(response.mimeType == "text/csv" ? .allow : .cancel)
                    }
                    .responseString { response in continuation.resume(returning: response) }
            }
            #expect(outcome.error?.kind == .cancelled)

            // Request.decideHTTPResponse(_:)
            let response = await session.request("export.csv")
                .decideHTTPResponse { response in
                    response.expectedContentLength > 50_000_000 ? .cancel : .allow
                }
                .serializingData().response
            #expect(response.data?.count == 1000)
            #expect(printed.all == ["status 200\n"])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func typedStreams(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let ticks = #"{"symbol":"A","price":1.5}"# + "\n" + #"{"symbol":"B","price":2}"# + "\n"
            server.route("/llm/completion", Resource(data: Data("Hello, wörld 👋".utf8)))
            server.route("/logs/tail", Resource(data: Data("INFO up\nERROR down\nINFO up\n".utf8)))
            server.route("/ticks", Resource(data: Data(ticks.utf8)))
            let session = session(server, transport)

            // DataStreamRequest.streamingStrings(automaticallyCancelling:)
            for try await text in session.streamRequest("llm/completion").streamingStrings() {
                print(text, terminator: "")
            }
            // DataStreamRequest.streamingLines(maximumLineLength:automaticallyCancelling:)
            for try await line in session.streamRequest("logs/tail").streamingLines() where line.hasPrefix("ERROR") {
                print(line)
            }
            // DataStreamRequest.streamingDecodables(_:decoder:maximumLineLength:automaticallyCancelling:)
            for try await tick in session.streamRequest("ticks").streamingDecodables(Tick.self) {
                print(tick.symbol, tick.price)
            }
            #expect(printed.all.joined() == "Hello, wörld 👋ERROR down\nA 1.5\nB 2.0\n")

            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // DataStreamRequest.responseStreamString(queue:_:)
                session.streamRequest("llm/completion").responseStreamString { event in
                    switch event {
                    case .value(let text): print(text, terminator: "")
                    case .complete(let completion): print(completion.error.map { "\n\($0)" } ?? "\n"); continuation.resume()
                    }
                }
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // DataStreamRequest.responseStreamLines(queue:maximumLineLength:_:)
                session.streamRequest("logs/tail").responseStreamLines { event in
                    if case .value(let line) = event { print(line) } else { continuation.resume() }
                }
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // DataStreamRequest.responseStreamDecodable(of:queue:decoder:maximumLineLength:_:)
                session.streamRequest("ticks").responseStreamDecodable(of: Tick.self) { event in
                    switch event {
                    case .value(let tick): print(tick.price)
                    case .complete(let completion): print("ended", completion.error as Any); continuation.resume()
                    }
                }
            }
            #expect(
                printed.all.joined() == "Hello, wörld 👋ERROR down\nA 1.5\nB 2.0\n"
                    + "Hello, wörld 👋\n\nINFO up\nERROR down\nINFO up\n1.5\n2.0\nended nil\n")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func cURLDescriptions(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue([.ok("1"), .json(#"{"id":7}"#)])
            let session = session(server, transport)
            let request = session.request("one", headers: [.authorization(bearerToken: "t0ken"), HTTPHeader(name: "X-Api-Key", value: "k3y")])
            _ = try await request.serializingData().value
            // CURLRedaction
            print(await request.cURLDescription())  // credentials hidden
            print(await request.cURLDescription(redacting: .none))  // everything, to re-run it
            print(await request.cURLDescription(redacting: CURLRedaction(headers: ["X-Api-Key"])))
            let shown = printed.all
            #expect(!shown[0].contains("t0ken") && shown[0].contains("k3y"))
            #expect(shown[1].contains("t0ken") && shown[1].contains("k3y"))
            #expect(shown[2].contains("t0ken") && !shown[2].contains("k3y"))

            let order = Order(item: 42)
            let receipt: DataResponse<Receipt, CourierError> = await withCheckedContinuation { continuation in
                // Request.cURLDescription(redacting:queue:calling:)
                session.request("orders", method: .post, parameters: order, encoder: .json)
                    .cURLDescription { command in print(command) }
                    .responseDecodable(of: Receipt.self) { response in continuation.resume(returning: response) }
            }
            #expect(receipt.value?.id == 7)
            #expect(await eventually { printed.all.count == 4 })
            #expect(printed.all.last?.contains(#"--data-binary '{"item":42}'"#) == true)
        }
    }
}
