import CourierSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierLocking

/// A response head whose `HTTPURLResponse` is built only when someone asks for it.
///
/// Building an `HTTPURLResponse` is costly on Linux (FoundationNetworking normalises every header
/// name through NSString): about a tenth of a small request's CPU. Courier's own serializers and
/// validators read the status and headers from the parsed head instead, so a request nobody
/// inspects never builds one.
final class LazyHTTPResponse: Sendable {
    /// The parsed head.
    let head: ResponseHead
    private let built: Locked<HTTPURLResponse?>

    init(head: ResponseHead) {
        self.head = head
        built = Locked(nil)
    }

    /// Wraps a response someone already has (public initialisers of the response types).
    convenience init?(_ response: HTTPURLResponse?) {
        guard let response, let url = response.url else { return nil }
        let fields = response.allHeaderFields.compactMap { name, value in
            (name as? String).map { (name: $0, value: "\(value)") }
        }
        self.init(
            head: ResponseHead(statusCode: response.statusCode, fields: fields, url: url, httpVersion: "HTTP/1.1"),
            materialized: response)
    }

    private init(head: ResponseHead, materialized: HTTPURLResponse) {
        self.head = head
        built = Locked(materialized)
    }

    /// The status code, without building anything.
    var statusCode: Int { head.statusCode }

    /// A header's value, without building anything.
    func header(_ name: String) -> String? { head.headers.value(for: name) }

    /// Every field line in arrival order, without building anything.
    var fields: HTTPHeaders { head.fields }

    /// The `HTTPURLResponse`, built on first use.
    var httpResponse: HTTPURLResponse {
        built.withLock { built in
            if let built { return built }
            let response =
                if FastPaths.isOn(.memo), let memo = head.responseMemo {
                    memo.response(for: head) { Self.build(head) }
                } else {
                    Self.build(head)
                }
            built = response
            return response
        }
    }

    private static func build(_ head: ResponseHead) -> HTTPURLResponse {
        // FoundationNetworking's initialiser never fails for an http(s) URL, which is all a
        // transport delivers; the header-less retry only guards against a platform that would.
        let response =
            head.httpURLResponse
            ?? HTTPURLResponse(url: head.url, statusCode: head.statusCode, httpVersion: head.httpVersion, headerFields: nil)
            ?? HTTPURLResponse(url: URL(fileURLWithPath: "/"), statusCode: head.statusCode, httpVersion: nil, headerFields: nil)
        guard let response else { preconditionFailure("HTTPURLResponse could not be created for \(head.url)") }
        return response
    }
}
