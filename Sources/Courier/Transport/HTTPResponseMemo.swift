import CourierSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierLocking

/// The `HTTPURLResponse` last built for a head that is delivered again and again (a stored
/// response the cache replays), so that the costly Foundation object (see ``LazyHTTPResponse``)
/// is built once per distinct head instead of once per request. A head carries the memo in
/// ``ResponseHead/responseMemo``; a response is reused only for a head equal to the one it was
/// built from in status, URL, version and every field, names compared exactly. A speed trick
/// (``FastPaths``): with the switch off every head builds its own.
final class HTTPResponseMemo: Sendable {
    private struct Built {
        let statusCode: Int
        let url: URL
        let httpVersion: String
        let headers: HTTPHeaders
        let response: HTTPURLResponse

        func matches(_ head: ResponseHead) -> Bool {
            statusCode == head.statusCode && headers.count == head.headers.count && httpVersion == head.httpVersion
                && url == head.url
                && zip(headers, head.headers).allSatisfy { $0.name == $1.name && $0.value == $1.value }
        }
    }

    // Guards the last response built, with the head it was built from.
    private let last = Locked<Built?>(nil)

    /// The response for `head`: the one built last when `head` is the same, else `build()`'s,
    /// which is then remembered.
    func response(for head: ResponseHead, build: () -> HTTPURLResponse) -> HTTPURLResponse {
        if let reused = last.withLock({ last in last.flatMap { $0.matches(head) ? $0.response : nil } }) { return reused }
        let response = build()
        let built = Built(statusCode: head.statusCode, url: head.url, httpVersion: head.httpVersion, headers: head.headers, response: response)
        last.withLock { $0 = built }
        return response
    }
}
