import Courier
import CourierLocking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the transfers of one command share besides the session: the cookie engine of `-b`/`-c`,
/// and the redirects `--proto-redir` refused (the session's redirect policy records them here).
final class FetchContext: Sendable {
    /// The `-b 'NAME=VALUE'` strings, sent after the jar's cookies.
    let literalCookies: [String]
    /// The cookie engine (`-b FILE`, `-c`), when it is on.
    let cookieJar: Locked<CookieJar>?
    /// Where `-i` writes the heads of transfers whose body goes to a file.
    let headRoutes = HeadRoutes()
    /// The 3xx responses whose redirect `--proto`/`--proto-redir` refused, by the URL that answered.
    private let refusedRedirects = Locked<[URL: String]>([:])

    init(literalCookies: [String] = [], cookieJar: CookieJar? = nil) {
        self.literalCookies = literalCookies
        self.cookieJar = cookieJar.map { Locked($0) }
    }

    /// The `Cookie` value for a request to `url`: the jar's matching cookies, then `-b`'s strings.
    func cookieHeader(for url: URL) -> String? {
        let fromJar = cookieJar?.withLock { $0.header(for: url) }
        let parts = [fromJar].compactMap { $0 } + literalCookies
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// Keeps the cookies `response` sets, when the engine is on.
    func takeCookies(from response: HTTPURLResponse) {
        guard let cookieJar, let url = response.url, let value = response.value(forHTTPHeaderField: "Set-Cookie") else { return }
        let fields = CookieJar.splitJoined(value)
        cookieJar.withLock { $0.receive(fields, from: url) }
    }

    /// The jar's text for `-c`.
    var cookieFileText: String? {
        cookieJar?.withLock { $0.netscapeText() }
    }

    /// Records that the redirect of the response from `url` to a `scheme` URL was refused.
    func refuseRedirect(from url: URL, scheme: String) {
        refusedRedirects.withLock { $0[url] = scheme }
    }

    /// The scheme of the refused redirect of the response from `url`, if its redirect was refused.
    func refusedRedirect(from url: URL?) -> String? {
        guard let url else { return nil }
        return refusedRedirects.withLock { $0[url] }
    }
}
