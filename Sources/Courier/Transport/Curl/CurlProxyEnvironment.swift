import Foundation

/// The proxy settings libcurl reads from the environment, read once when a transport is made.
///
/// libcurl looks up `no_proxy`, `<scheme>_proxy` and `all_proxy` with `getenv` (a scan of the
/// whole environment each) for every transfer. Reading them once and passing the result as
/// `CURLOPT_PROXY` and `CURLOPT_NOPROXY` keeps libcurl's rules, including its host matching, and
/// spares each small request those scans. A variable changed after the transport was made is not seen.
struct CurlProxyEnvironment: Sendable, Equatable {
    /// `no_proxy`, else `NO_PROXY`: hosts never proxied.
    var noProxy: String?
    /// `http_proxy` (libcurl ignores `HTTP_PROXY`, which CGI servers set from a request header), else `all_proxy`/`ALL_PROXY`.
    var http: String?
    /// `https_proxy`, else `HTTPS_PROXY`, else `all_proxy`/`ALL_PROXY`.
    var https: String?

    /// The settings in `environment`, by libcurl's rules (an empty value counts: it means no proxy).
    init(environment: [String: String]) {
        let all = environment["all_proxy"] ?? environment["ALL_PROXY"]
        noProxy = environment["no_proxy"] ?? environment["NO_PROXY"]
        http = environment["http_proxy"] ?? all
        https = environment["https_proxy"] ?? environment["HTTPS_PROXY"] ?? all
    }

    /// The settings in this process's environment now.
    static func current() -> CurlProxyEnvironment {
        CurlProxyEnvironment(environment: ProcessInfo.processInfo.environment)
    }

    /// These settings with `tuning`'s proxy and no-proxy list, where it has them, in their place.
    func tuned(by tuning: TransportTuning) -> CurlProxyEnvironment {
        var tuned = self
        if let proxy = tuning.proxy { (tuned.http, tuned.https) = (proxy, proxy) }
        if let noProxy = tuning.noProxy { tuned.noProxy = noProxy }
        return tuned
    }

    /// `CURLOPT_PROXY` for an absolute http(s) URL, given as the string libcurl gets: the proxy, or `""` for none.
    func proxy(for url: String) -> String {
        // ASCII letters fold to lower case with 0x20; ":" has that bit set already.
        let secure = url.utf8.prefix(6).lazy.map { $0 | 0x20 }.elementsEqual("https:".utf8)
        return (secure ? https : http) ?? ""
    }
}
