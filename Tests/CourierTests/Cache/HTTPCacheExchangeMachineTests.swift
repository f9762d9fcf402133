import Testing
import Foundation
@testable import Courier

/// The life of one exchange the HTTP cache sends to the network, as event → action tables: no
/// I/O, the clock passed in.
@Suite("HTTP cache: exchange machine") struct HTTPCacheExchangeMachineTests {
    typealias Machine = HTTPCacheExchangeMachine
    typealias Action = HTTPCacheExchangeMachine.Action

    enum Event {
        case head(Int, HTTPHeaders)
        /// A head whose body the transport delivers still in its content coding.
        case codedHead(Int, HTTPHeaders)
        case body(Int)
        case completed(failed: Bool)
    }

    struct Row: CustomTestStringConvertible {
        let name: String
        let purpose: Machine.Purpose
        let events: [Event]
        /// What each event leads to, compared by shape (`describe`).
        let expected: [[String]]
        /// The request's headers (a `Range`, say).
        var request: HTTPHeaders = [:]
        /// A stored partial response a new `206` may extend, and its length.
        var storedPart: (head: CacheEntryHead, length: Int64)? = nil
        var testDescription: String { name }
    }

    static let start = Date(timeIntervalSince1970: 1_750_000_000)

    static func stored(_ headers: HTTPHeaders, age: TimeInterval = 100, status: Int = 200) -> CacheEntryHead {
        CacheEntryHead(
            statusCode: status, headers: headers, requestTime: start.addingTimeInterval(-age),
            responseTime: start.addingTimeInterval(-age), varyingRequestHeaders: nil, requestHadAuthorization: false)
    }

    /// An action by its shape, so rows stay readable.
    static func describe(_ action: Action) -> String {
        switch action {
        case .forward(.head(let status)): "forward head \(status)"
        case .forward(.completed(let failed, let source)): "forward completed\(failed ? " failed" : "") (\(source))"
        case .startStoring(let head):
            "store \(head.statusCode)" + (head.headers["Content-Encoding"].map { " coded \($0)" } ?? "")
        case .startCombining(let combination):
            "combine into \(combination.head.statusCode) \(combination.head.headers["Content-Range"] ?? "whole")"
                + " before \(combination.before.map { "\($0)" } ?? "-") after \(combination.after.map { "\($0)" } ?? "-")"
        case .commitStored: "commit"
        case .discardStored: "discard"
        case .updateStoredHead: "update stored head"
        case .serveStored(let head, let source, _): "serve stored \(head.statusCode) (\(source))"
        case .removeStored: "remove stored"
        case .refetch: "refetch"
        case .notify(let event): "notify \(event)"
        }
    }

    static let rows: [Row] = [
        Row(
            name: "a fetched storable response is passed on and stored",
            purpose: .fetch,
            events: [.head(200, ["Cache-Control": "max-age=60"]), .body(5), .completed(failed: false)],
            expected: [["forward head 200", "store 200"], ["forward body 5", "store body 5"], ["commit", "forward completed (network)"]]),
        Row(
            name: "a fetch that fails midway discards the partial copy",
            purpose: .fetch,
            events: [.head(200, ["Cache-Control": "max-age=60"]), .body(5), .completed(failed: true)],
            expected: [["forward head 200", "store 200"], ["forward body 5", "store body 5"], ["discard", "forward completed failed (network)"]]),
        Row(
            name: "no-store is passed on, not kept",
            purpose: .fetch,
            events: [.head(200, ["Cache-Control": "no-store"]), .body(5), .completed(failed: false)],
            expected: [["forward head 200", "notify not stored: no-store"], ["forward body 5"], ["forward completed (network)"]]),
        Row(
            name: "a 304 to a revalidation freshens the stored head and serves the stored body",
            purpose: .revalidate(stored(["ETag": "\"a\"", "Cache-Control": "max-age=60"])),
            events: [.head(304, ["ETag": "\"a\""]), .completed(failed: false)],
            expected: [["update stored head", "notify revalidated: not modified"], ["serve stored 200 (revalidated)"]]),
        Row(
            name: "a 304 whose connection then fails still serves the stored body",
            purpose: .revalidate(stored(["ETag": "\"a\"", "Cache-Control": "max-age=60"])),
            events: [.head(304, ["ETag": "\"a\""]), .completed(failed: true)],
            expected: [["update stored head", "notify revalidated: not modified"], ["serve stored 200 (revalidated)"]]),
        Row(
            name: "a changed response to a revalidation replaces the stored one",
            purpose: .revalidate(stored(["ETag": "\"a\"", "Cache-Control": "max-age=60"])),
            events: [.head(200, ["ETag": "\"b\"", "Cache-Control": "max-age=60"]), .body(3), .completed(failed: false)],
            expected: [
                ["notify revalidated: changed", "forward head 200", "store 200"], ["forward body 3", "store body 3"],
                ["commit", "forward completed (network)"],
            ]),
        Row(
            name: "a changed response that may not be stored removes the stored one",
            purpose: .revalidate(stored(["ETag": "\"a\"", "Cache-Control": "max-age=60"])),
            events: [.head(200, ["Cache-Control": "no-store"]), .completed(failed: false)],
            expected: [
                ["notify revalidated: changed", "forward head 200", "notify not stored: no-store", "remove stored"],
                ["forward completed (network)"],
            ]),
        Row(
            name: "a 5xx within stale-if-error is swallowed and the stale response served",
            purpose: .revalidate(stored(["ETag": "\"a\"", "Cache-Control": "max-age=10, stale-if-error=600"])),
            events: [.head(503, [:]), .body(4), .completed(failed: false)],
            expected: [["notify hit (stale cache (stale-if-error))"], [], ["serve stored 200 (stale cache (stale-if-error))"]]),
        Row(
            name: "a 5xx without stale-if-error reaches the request",
            purpose: .revalidate(stored(["ETag": "\"a\"", "Cache-Control": "max-age=10"])),
            events: [.head(503, [:]), .body(4), .completed(failed: false)],
            expected: [
                [
                    "notify revalidated: changed", "forward head 503", "notify not stored: status 503 is not cacheable without explicit freshness",
                    "remove stored",
                ],
                ["forward body 4"], ["forward completed (network)"],
            ]),
        Row(
            name: "a failure before any head within stale-if-error serves the stale response",
            purpose: .revalidate(stored(["ETag": "\"a\"", "Cache-Control": "max-age=10, stale-if-error=600"])),
            events: [.completed(failed: true)],
            expected: [["notify hit (stale cache (stale-if-error))", "serve stored 200 (stale cache (stale-if-error))"]]),
        Row(
            name: "a failure before any head without stale-if-error fails the request",
            purpose: .revalidate(stored(["ETag": "\"a\"", "Cache-Control": "max-age=10"])),
            events: [.completed(failed: true)],
            expected: [["forward completed failed (network)"]]),
        Row(
            name: "a background refresh stores without forwarding anything",
            purpose: .backgroundRevalidate(stored(["ETag": "\"a\"", "Cache-Control": "max-age=10"])),
            events: [.head(200, ["ETag": "\"b\"", "Cache-Control": "max-age=10"]), .body(3), .completed(failed: false)],
            expected: [["notify revalidated: changed", "store 200"], ["store body 3"], ["commit"]]),
        Row(
            name: "a background refresh answered 304 only freshens the stored head",
            purpose: .backgroundRevalidate(stored(["ETag": "\"a\"", "Cache-Control": "max-age=10"])),
            events: [.head(304, [:]), .completed(failed: false)],
            expected: [["update stored head", "notify revalidated: not modified"], []]),
        Row(
            name: "a failed background refresh does nothing",
            purpose: .backgroundRevalidate(stored(["ETag": "\"a\"", "Cache-Control": "max-age=10"])),
            events: [.completed(failed: true)],
            expected: [[]]),
        // Issue 36: stale-if-error for a stored response without validators (fetched afresh).
        Row(
            name: "a 5xx to a refetch within stale-if-error serves the stored response",
            purpose: .refetch(stored(["Cache-Control": "max-age=10, stale-if-error=600"])),
            events: [.head(503, [:]), .body(4), .completed(failed: false)],
            expected: [["notify hit (stale cache (stale-if-error))"], [], ["serve stored 200 (stale cache (stale-if-error))"]]),
        Row(
            name: "a failure before any head of a refetch within stale-if-error serves the stored response",
            purpose: .refetch(stored(["Cache-Control": "max-age=10, stale-if-error=600"])),
            events: [.completed(failed: true)],
            expected: [["notify hit (stale cache (stale-if-error))", "serve stored 200 (stale cache (stale-if-error))"]]),
        Row(
            name: "a 5xx to a refetch past stale-if-error reaches the request",
            purpose: .refetch(stored(["Cache-Control": "max-age=10, stale-if-error=20"])),
            events: [.head(503, [:]), .completed(failed: false)],
            expected: [
                ["forward head 503", "notify not stored: status 503 is not cacheable without explicit freshness", "remove stored"],
                [
                    "forward completed (network)"
                ],
            ]),
        Row(
            name: "a refetch answered 200 replaces the stored response as a fetch does",
            purpose: .refetch(stored(["Cache-Control": "max-age=10, stale-if-error=600"])),
            events: [.head(200, ["Cache-Control": "max-age=10"]), .body(2), .completed(failed: false)],
            expected: [["forward head 200", "store 200"], ["forward body 2", "store body 2"], ["commit", "forward completed (network)"]]),

        // Issue 36: a body still in its content coding is stored with its Content-Encoding.
        Row(
            name: "a body the transport did not decode keeps its Content-Encoding",
            purpose: .fetch,
            events: [.codedHead(200, ["Cache-Control": "max-age=60", "Content-Encoding": "gzip"]), .completed(failed: false)],
            expected: [["forward head 200", "store 200 coded gzip"], ["commit", "forward completed (network)"]]),
        Row(
            name: "a decoded body is stored without Content-Encoding",
            purpose: .fetch,
            events: [.head(200, ["Cache-Control": "max-age=60", "Content-Encoding": "gzip"]), .completed(failed: false)],
            expected: [["forward head 200", "store 200"], ["commit", "forward completed (network)"]]),

        // Issue 36: partial responses (RFC 9111 §3.3–3.4).
        Row(
            name: "a 206 to a Range request with a strong ETag is stored",
            purpose: .fetch,
            events: [
                .head(206, ["ETag": "\"s\"", "Content-Range": "bytes 0-9/100", "Cache-Control": "max-age=60"]), .body(10), .completed(failed: false),
            ],
            expected: [["forward head 206", "store 206"], ["forward body 10", "store body 10"], ["commit", "forward completed (network)"]],
            request: ["Range": "bytes=0-9"]),
        Row(
            name: "a 206 with a weak ETag is passed on, not kept",
            purpose: .fetch,
            events: [.head(206, ["ETag": "W/\"s\"", "Content-Range": "bytes 0-9/100", "Cache-Control": "max-age=60"]), .completed(failed: false)],
            expected: [["forward head 206", "notify not stored: partial content (206) without a strong ETag"], ["forward completed (network)"]],
            request: ["Range": "bytes=0-9"]),
        Row(
            name: "a 206 that continues the stored part is combined with it",
            purpose: .fetch,
            events: [.head(206, ["ETag": "\"s\"", "Content-Range": "bytes 10-19/100", "Cache-Control": "max-age=60"]), .completed(failed: false)],
            expected: [["forward head 206", "combine into 206 bytes 0-19/100 before 0..<10 after -"], ["commit", "forward completed (network)"]],
            request: ["Range": "bytes=10-19"],
            storedPart: (stored(["ETag": "\"s\"", "Content-Range": "bytes 0-9/100"], status: 206), 10)),
        Row(
            name: "a 206 that completes the stored part makes a whole 200",
            purpose: .fetch,
            events: [.head(206, ["ETag": "\"s\"", "Content-Range": "bytes 0-49/100", "Cache-Control": "max-age=60"]), .completed(failed: false)],
            expected: [["forward head 206", "combine into 200 whole before - after 40..<90"], ["commit", "forward completed (network)"]],
            request: ["Range": "bytes=0-49"],
            storedPart: (stored(["ETag": "\"s\"", "Content-Range": "bytes 10-99/100"], status: 206), 90)),
        Row(
            name: "a 206 of another representation replaces the stored part",
            purpose: .fetch,
            events: [.head(206, ["ETag": "\"t\"", "Content-Range": "bytes 10-19/100", "Cache-Control": "max-age=60"]), .completed(failed: false)],
            expected: [["forward head 206", "store 206"], ["commit", "forward completed (network)"]],
            request: ["Range": "bytes=10-19"],
            storedPart: (stored(["ETag": "\"s\"", "Content-Range": "bytes 0-9/100"], status: 206), 10)),
        Row(
            name: "events after the end are ignored",
            purpose: .fetch,
            events: [.completed(failed: true), .head(200, [:]), .body(1), .completed(failed: false)],
            expected: [["forward completed failed (network)"], [], [], []]),
    ]

    @Test(arguments: rows)
    func transitions(row: Row) {
        var machine = Machine(
            rules: HTTPCacheRules(isShared: false), method: .get, requestHeaders: row.request, requestTime: Self.start,
            purpose: row.purpose, storedPart: row.storedPart)
        var seen: [[String]] = []
        for event in row.events {
            let actions: [Action]
            switch event {
            case .head(let status, let headers): actions = machine.receiveHead(statusCode: status, headers: headers, now: Self.start)
            case .codedHead(let status, let headers):
                actions = machine.receiveHead(statusCode: status, headers: headers, bodyIsCoded: true, now: Self.start)
            case .body(let count):
                let route = machine.receiveBody()
                seen.append((route.forwards ? ["forward body \(count)"] : []) + (route.stores ? ["store body \(count)"] : []))
                continue
            case .completed(let failed): actions = machine.complete(failed: failed, metrics: nil, now: Self.start)
            }
            seen.append(actions.map(Self.describe))
        }
        #expect(seen == row.expected, "\(row.name)")
    }

    @Test func storedHeadersDropWhatDescribesTheWireForm() {
        let headers: HTTPHeaders = [
            "Content-Encoding": "gzip", "Content-Length": "10", "Set-Cookie": "a=b", "ETag": "\"x\"",
            "Connection": "keep-alive", "Content-Type": "text/plain",
        ]
        let kept = Machine.storedHeaders(headers)
        #expect(kept.map(\.name).sorted() == ["Content-Type", "ETag"])
    }
}
